#!/usr/bin/env bash
# Database-only experiment: what does sequencing cost the producers, with Boxline's sequencer (copy outbox rows
# into the log, delete them) and with a transaction-id-horizon sequencer (rows stay; one range row per partition
# and batch)? No JVM: four pgbench clients produce, one pgbench client sequences, as fast as they can.
# Usage: bash boxline-bench/experiments/xid-horizon/run.sh [rounds] [seconds] [events per transaction]
# Needs psql and pgbench (PostgreSQL 15+) and PGHOST/PGUSER/PGDATABASE (default 127.0.0.1, postgres, postgres).
set -euo pipefail
rounds=${1:-3}; seconds=${2:-20}; txn=${3:-1}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres} PGDATABASE=${PGDATABASE:-postgres}
pgbench=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench | tail -1)
schema="xidprobe_$(head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
work=$(mktemp -d)
cleanup() { psql -q -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

(cd "$root" && ./mvnw -q -pl boxline-bench -am install -DskipTests >/dev/null \
  && ./mvnw -q -pl boxline-bench dependency:build-classpath -Dmdep.outputFile="$work/cp" >/dev/null)
java -cp "$root/boxline-bench/target/classes:$(cat "$work/cp")" io.boxline.bench.Bench ddl --schema="$schema" > "$work/ddl.sql"
psql -q -v ON_ERROR_STOP=1 -f "$work/ddl.sql" >/dev/null
sed "s/SCHEMA/$schema/g" "$here/setup.sql" | psql -q -v ON_ERROR_STOP=1 >/dev/null

for variant in raw:plain_event boxline:outbox horizon:outbox_xid; do
  name=${variant%%:*}; table=${variant##*:}
  cat > "$work/produce-$name.sql" <<SQL
BEGIN;
INSERT INTO $schema.bench_order (customer, amount_cents, status) VALUES ('customer-1', 1234, 'PLACED');
INSERT INTO $schema.$table (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers) SELECT gen_random_uuid(), t.id, g % 8, 'key-' || g, 'demo.OrderPlaced', 'bench', 'application/json', convert_to(repeat('x', 200), 'UTF8'), NULL FROM $schema.topic t, generate_series(1, $txn) g;
COMMIT;
SQL
done
# The sequencer's pace: Boxline's default batch spacing is 2 ms under load; 1 ms here for both.
printf 'SELECT count(*) FROM %s.sequence_batch(30, %s, 1000, %s, 7000, true);\n\\sleep 1 ms\n' \
  "$schema" "'probe'" "'${schema}_log'" > "$work/sequence-boxline.sql"
printf 'BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT count(*) FROM %s.sequence_by_snapshot();\nCOMMIT;\n\\sleep 1 ms\n' \
  "$schema" > "$work/sequence-horizon.sql"
# Boxline's sequencer vacuums the outbox every 4,096 events; about once a second here.
printf 'VACUUM (INDEX_CLEANUP ON, SKIP_LOCKED) %s.outbox;\n\\sleep 1000 ms\n' "$schema" > "$work/vacuum.sql"

tps() { grep -o 'tps = [0-9.]*' "$1" | head -1 | cut -d' ' -f3; }
echo "| round | raw events/s | boxline sequencer events/s | ratio | horizon sequencer events/s | ratio |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
  declare -A result=()
  for name in raw boxline horizon; do
    psql -q -c "TRUNCATE $schema.bench_order, $schema.plain_event, $schema.outbox, $schema.outbox_xid, $schema.seq_range, $schema.log" \
      -c "UPDATE $schema.partition SET last_seq = 0" -c "UPDATE $schema.seq_snapshot SET snap = pg_current_snapshot()" \
      -c "CHECKPOINT" >/dev/null
    pids=()
    if [ "$name" != raw ]; then
      "$pgbench" -n -M prepared -f "$work/sequence-$name.sql" -T "$seconds" > "$work/sequencer.out" 2>&1 & pids+=($!)
    fi
    if [ "$name" = boxline ]; then
      "$pgbench" -n -f "$work/vacuum.sql" -T "$seconds" > "$work/vacuum.out" 2>&1 & pids+=($!)
    fi
    "$pgbench" -n -M prepared -c 4 -j 2 -f "$work/produce-$name.sql" -T "$seconds" > "$work/produce.out" 2>&1
    for p in "${pids[@]}"; do wait "$p"; done
    result[$name]=$(tps "$work/produce.out")
    # Every produced event must have been sequenced exactly once (a last batch picks up the tail).
    case $name in
      boxline)
        psql -q -At -c "SELECT count(*) FROM $schema.sequence_batch(30, 'probe', 1000000, '${schema}_log', 7000, false)" >/dev/null
        check=$(psql -At -c "SELECT (SELECT count(*) FROM $schema.outbox) = 0 AND (SELECT count(*) FROM $schema.log) = (SELECT sum(last_seq) FROM $schema.partition) AND (SELECT count(*) FROM $schema.log) = $txn * (SELECT count(*) FROM $schema.bench_order)") ;;
      horizon)
        psql -q -At -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM $schema.sequence_by_snapshot()" -c "COMMIT" >/dev/null
        check=$(psql -At -c "SELECT (SELECT count(*) FROM $schema.outbox_xid) = (SELECT count(DISTINCT x) FROM $schema.seq_range, unnest(ids) x) AND (SELECT sum(cardinality(ids)) FROM $schema.seq_range) = (SELECT sum(last_seq) FROM $schema.partition) AND (SELECT count(*) FROM $schema.outbox_xid) = $txn * (SELECT count(*) FROM $schema.bench_order)") ;;
      *) check=t ;;
    esac
    if [ "$check" != t ]; then echo "round $r, $name: events lost or sequenced twice" >&2; exit 1; fi
  done
  awk -v r="$r" -v t="$txn" -v a="${result[raw]}" -v b="${result[boxline]}" -v c="${result[horizon]}" \
    'BEGIN { printf "| %d | %.0f | %.0f | %.2f× | %.0f | %.2f× |\n", r, a*t, b*t, b/a, c*t, c/a }'
done
echo
echo "$txn event(s) per transaction, $seconds s per trial, 4 producer clients, 8 partitions; schema $schema, dropped."
