#!/usr/bin/env python3
"""Where a W1 run's JVM time goes, from a JDK Flight Recorder file.

Usage: jfr_stages.py <recording.jfr> [--from HH:MM:SS --to HH:MM:SS] [--svg out.svg] [--collapsed out.txt]

Reads jdk.ExecutionSample (Java frames on CPU), jdk.ThreadCPULoad (CPU per Java thread) and jdk.CPULoad
(the whole JVM) through `jfr print --json`, optionally only within a wall-clock window (UTC, the bench's
log times), and prints:
  * CPU per thread group (producers, sequencer, workers, listener, group, JIT/GC/VM = JVM total minus the
    Java threads);
  * execution samples per stage (publish, sequencing, wake-up, fetch, handler dispatch, cursor commit, ...),
    classified by thread and by the frames on the stack (see STAGES);
  * the top frames (self time) by class;
and writes collapsed stacks and a flame graph (SVG, no dependencies) when asked.
"""
import json
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import datetime, timezone


def load(path, events):
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", events, path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["recording"]["events"]


def ts(value):
    # "2026-11-26T01:44:12.123456789Z" (jfr prints UTC with nanoseconds, sometimes with an offset)
    v = value.replace("Z", "+00:00")
    if "." in v:
        head, rest = v.split(".", 1)
        frac = "".join(ch for ch in rest if ch.isdigit())
        tz = rest[len(frac):]
        v = head + "." + frac[:6] + tz
    return datetime.fromisoformat(v).astimezone(timezone.utc)


def group(thread):
    if thread.startswith("producer-"):
        return "producers"
    for prefix in ("boxline-sequencer", "boxline-worker", "boxline-listener", "boxline-group",
                   "boxline-consumer", "boxline-announcer", "boxline-outbox-vacuum", "boxline-retention",
                   "boxline-watchdog", "boxline-key", "C1 CompilerThread", "C2 CompilerThread"):
        if thread.startswith(prefix):
            return prefix
    if thread.startswith("HikariPool") or thread.startswith("bench-w1"):
        return "pool housekeeping"
    return "other Java threads"


def frame_name(f):
    m = f["method"]
    return m["type"]["name"].replace("/", ".") + "." + m["name"]


# Classification of a sample by its thread and the frames on its stack (first match wins).
def stage(thread, names):
    joined = "\n".join(names)

    def has(s):
        return s in joined

    if thread.startswith("producer-"):
        if has("io.boxline.internal.DefaultPublisher"):
            return "publish: outbox INSERT, partitioning, checks (raw: its INSERT)"
        if has("W1Throughput.insertBusiness"):
            return "producer: business INSERT (as raw)"
        if has("Connection.commit") or has("ManagedConnection.commit") or has("PgConnection.commit"):
            return "producer: commit (as raw)"
        if has("io.boxline.internal.TransactionScope") or has("io.boxline.internal.DefaultPublisher.afterCommit"):
            return "publish: inTransaction scope (open, hand-over after the commit)"
        return "producer: other (borrow, bench loop; as raw)"
    if thread.startswith("boxline-sequencer"):
        if has("WakeupBus.logAppended") or has("DefaultConsumer.logAppended"):
            return "wake-up (sequencer signals consumers, starts workers)"
        if has("RecentEvents"):
            return "sequencing: hand-over cache (RecentEvents)"
        if has("Signal.await") or has("LockSupport.park"):
            return "sequencing: waiting"
        return "sequencing (statement, rows returned)"
    if thread.startswith("boxline-listener"):
        return "wake-up (listener: NOTIFY received, parsed)"
    if thread.startswith("boxline-worker") or thread.startswith("boxline-key"):
        if has("CursorCommitter") or has("commitCursors") or has("Progress.commit"):
            return "cursor commit"
        if has("RecentEvents.after"):
            return "fetch (hand-over from RecentEvents)"
        if has(".read(") or has("SqlCursors.read") or has("Store.read") or has("PostgresStore.read") or has("SqlStore.read"):
            return "fetch (log read)"
        if has("ConsumerContext.toEvent") or has("toEvent"):
            return "fetch (rows to events)"
        if has("PlainDelivery") or has("callHandler") or has("DeliveryCheck"):
            return "handler dispatch (incl. the bench's check)"
        if has("GroupMembership.stopDraining") or has("Signal.raise"):
            return "wake-up (worker hand-back, dispatch signal)"
        return "worker other"
    if thread.startswith("boxline-consumer"):
        return "dispatch (consumer thread)"
    if thread.startswith("boxline-group"):
        return "group membership (check-ins)"
    if thread.startswith("boxline-announcer"):
        return "announcer"
    return "other: " + group(thread)


DRIVER = ("org.postgresql", "com.zaxxer", "sun.nio", "java.net", "jdk.internal.reflect", "jdk.proxy",
          "java.lang.reflect", "io.boxline.bench.Counted", "java.io", "javax.net", "sun.security")


def in_window(t, lo, hi):
    return (lo is None or t >= lo) and (hi is None or t <= hi)


def parse_window(day, hhmmss):
    if hhmmss is None:
        return None
    h, m, s = (int(x) for x in hhmmss.split(":"))
    return day.replace(hour=h, minute=m, second=s, microsecond=0)


def flame_svg(stacks, out, title):
    # stacks: Counter of tuple(frames root->leaf) -> count
    total = sum(stacks.values())
    tree = {}
    for st, n in stacks.items():
        node = tree
        for f in st:
            child = node.setdefault(f, [0, {}])
            child[0] += n
            node = child[1]
    width, row = 1600, 16
    rects = []
    depth_max = [0]

    def walk(node, x, depth):
        for name, (n, kids) in sorted(node.items(), key=lambda kv: -kv[1][0]):
            w = width * n / total
            if w >= 0.3:
                rects.append((x, depth, w, name, n))
                depth_max[0] = max(depth_max[0], depth)
                walk(kids, x, depth + 1)
            x += w

    walk(tree, 0.0, 0)
    height = (depth_max[0] + 3) * row
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="monospace" font-size="11">',
             f'<text x="4" y="12">{esc(title)} ({total} samples; width = share of samples)</text>']
    for x, d, w, name, n in rects:
        y = height - (d + 1) * row
        h = hash(name.split(".")[0:4].__str__()) & 0xFFFFFF
        r, g, b = 200 + (h & 0x37), 90 + ((h >> 8) & 0x7F), 40 + ((h >> 16) & 0x3F)
        label = name if w > 7 * len(name) else name[: max(0, int(w / 7) - 2)] + ".." if w > 30 else ""
        parts.append(f'<g><title>{esc(name)} ({n} samples, {100.0 * n / total:.1f}%)</title>'
                     f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" fill="rgb({r},{g},{b})"/>'
                     f'<text x="{x + 2:.1f}" y="{y + 11}">{esc(label)}</text></g>')
    parts.append("</svg>")
    with open(out, "w") as fh:
        fh.write("\n".join(parts))


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main(argv):
    path = argv[1]
    opts = dict(zip(argv[2::2], argv[3::2]))
    samples = load(path, "jdk.ExecutionSample")
    cpu = load(path, "jdk.ThreadCPULoad")
    jvm = load(path, "jdk.CPULoad")
    day = ts(samples[0]["values"]["startTime"]) if samples else datetime.now(timezone.utc)
    lo = parse_window(day, opts.get("--from"))
    hi = parse_window(day, opts.get("--to"))

    by_stage = Counter()
    by_stage_driver = Counter()
    by_class = Counter()
    by_package = Counter()
    stacks = Counter()
    n = 0
    for e in samples:
        v = e["values"]
        if not in_window(ts(v["startTime"]), lo, hi):
            continue
        thread = (v.get("sampledThread") or {}).get("javaName") or "?"
        frames = (v.get("stackTrace") or {}).get("frames") or []
        names = [frame_name(f) for f in frames]  # leaf first
        if not names:
            continue
        n += 1
        st = stage(thread, names)
        by_stage[st] += 1
        leaf = names[0]
        if leaf.startswith(DRIVER):
            by_stage_driver[st] += 1
        cls = leaf.rsplit(".", 1)[0]
        by_class[cls] += 1
        by_package[cls.rsplit(".", 1)[0]] += 1
        stacks[(group(thread),) + tuple(reversed(names))] += 1

    # CPU per thread group: ThreadCPULoad is a share of the whole machine (all cores) over its period.
    cores = None
    per_group = defaultdict(float)
    jvm_total = 0.0
    periods = 0
    for e in jvm:
        v = e["values"]
        if in_window(ts(v["startTime"]), lo, hi):
            jvm_total += v["jvmUser"] + v["jvmSystem"]
            periods += 1
    for e in cpu:
        v = e["values"]
        if in_window(ts(v["startTime"]), lo, hi):
            t = (v.get("eventThread") or {}).get("javaName") or "?"
            per_group[group(t)] += v["user"] + v["system"]

    print(f"execution samples in the window: {n}")
    print()
    print("| stage | samples | share | of which in the driver, pool, sockets, proxies |")
    print("| --- | ---: | ---: | ---: |")
    for s, c in by_stage.most_common():
        print(f"| {s} | {c} | {100.0 * c / n:.1f} % | {100.0 * by_stage_driver[s] / c:.0f} % |")
    print()
    if periods:
        java = sum(per_group.values())
        print(f"JVM CPU (jdk.CPULoad, mean share of the machine over {periods} periods): "
              f"{100.0 * jvm_total / periods:.1f} %")
        print()
        print("| thread group | share of the JVM's CPU |")
        print("| --- | ---: |")
        for g, c in sorted(per_group.items(), key=lambda kv: -kv[1]):
            print(f"| {g} | {100.0 * c / jvm_total:.1f} % |")
        print(f"| GC and other VM threads (JVM total minus the threads above) | {100.0 * (jvm_total - java) / jvm_total:.1f} % |")
        print()
    print("| top frames by class (self) | samples | share |")
    print("| --- | ---: | ---: |")
    for c, k in by_class.most_common(25):
        print(f"| {c} | {k} | {100.0 * k / n:.1f} % |")
    print()
    print("| top packages (self) | samples | share |")
    print("| --- | ---: | ---: |")
    for c, k in by_package.most_common(15):
        print(f"| {c} | {k} | {100.0 * k / n:.1f} % |")
    if "--collapsed" in opts:
        with open(opts["--collapsed"], "w") as fh:
            for st, c in stacks.most_common():
                fh.write(";".join(st) + " " + str(c) + "\n")
    if "--svg" in opts:
        flame_svg(stacks, opts["--svg"], opts.get("--title", "W1 Boxline, JVM execution samples"))


if __name__ == "__main__":
    main(sys.argv)
