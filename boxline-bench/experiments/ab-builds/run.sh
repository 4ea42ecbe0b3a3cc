#!/usr/bin/env bash
# Runs W2, W1 and W3 alternately on two builds, each from its own jars, so both see the same machine:
#   boxline-bench/experiments/ab-builds/run.sh <before-commit> [after-commit, default: the working tree]
# Results go to /tmp/ab/<workload>-<build>.out; /tmp/ab/log.txt has the order and exit codes.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
before="$1"
after="${2:-}"
out=/tmp/ab
rm -rf "$out" && mkdir -p "$out"

tree() { # name commit -> prints the tree's directory, built
  local name=$1 commit=$2 dir
  if [ -z "$commit" ]; then dir="$root"; else
    dir="/tmp/ab-tree-$name"
    rm -rf "$dir"; git -C "$root" worktree prune; git -C "$root" worktree add -q --detach "$dir" "$commit"
  fi
  (cd "$dir" && ./mvnw -q -o package -DskipTests >&2)
  echo "$dir"
}

classpath() { # dir name -> /tmp/cp-<name>.txt with the tree's own Boxline jars
  local dir=$1 name=$2
  (cd "$dir" && ./mvnw -q -o -pl boxline-bench dependency:build-classpath -Dmdep.outputFile=/tmp/cp-raw.txt >&2)
  python3 - "$dir" "$name" <<'PY'
import re, sys
d, name = sys.argv[1], sys.argv[2]
out = [d + "/boxline-bench/target/classes"]
for j in open("/tmp/cp-raw.txt").read().strip().split(":"):
    m = re.search(r"/io/boxline/(boxline-[a-z]+)/[^/]+/", j)
    out.append(f"{d}/{m.group(1)}/target/{m.group(1)}-0.1.0-SNAPSHOT.jar" if m else j)
open(f"/tmp/cp-{name}.txt", "w").write(":".join(out))
PY
}

classpath "$(tree before "$before")" before
classpath "$(tree after "$after")" after

run() { # tag build args...
  local tag=$1 b=$2; shift 2
  echo "=== $tag $b $* $(date -u +%H:%M:%S)" >> "$out/log.txt"
  java -cp "$(cat /tmp/cp-$b.txt)" io.boxline.bench.Bench "$@" > "$out/$tag-$b.out" 2>&1 || true
  echo "exit $? $(date -u +%H:%M:%S)" >> "$out/log.txt"
}
for r in 1 2; do
  for b in before after; do run "w2r$r" "$b" w2 --w2.where=same-jvm --w2.rates=200,1000; done
done
for b in before after; do run w1r1 "$b" w1 --w1.runs=1; done
for b in after before; do run w1r2 "$b" w1 --w1.runs=1; done
for b in before after; do run w3 "$b" w3; done
echo ALLDONE >> "$out/log.txt"
grep -h 'W2 same-jvm\|W1 T=.* run 1\|W3 .* idle' "$out"/*.out
