#!/usr/bin/env bash
# Database-only experiment: could producers skip the outbox table altogether? Each transaction writes its
# business row and emits its events as transactional WAL messages (pg_logical_emit_message), and a logical
# replication client (pg_recvlogical, pgoutput with messages on, writing to /dev/null) reads them back in commit
# order. That is the cheapest conceivable "sequencer": no table write, no log write, no consumer. The figure is
# end-to-end: from the first transaction until the slot has confirmed the last one.
# Needs wal_level = logical (the script checks and stops otherwise), psql, pgbench and pg_recvlogical (15+).
# Usage: bash boxline-bench/experiments/wal-messages/run.sh [rounds] [seconds]
set -euo pipefail
rounds=${1:-2}; seconds=${2:-15}
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres} PGDATABASE=${PGDATABASE:-postgres}
bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/pgbench | tail -1)")
[ "$(psql -Atc 'SHOW wal_level')" = logical ] || { echo "needs wal_level = logical: ALTER SYSTEM SET wal_level = logical, then restart PostgreSQL" >&2; exit 2; }
id=$(head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n'); schema="walprobe_$id"; slot="walprobe_$id"; work=$(mktemp -d)
cleanup() {
  if [ -n "${recv:-}" ]; then kill "$recv" 2>/dev/null || true; wait "$recv" 2>/dev/null || true; fi
  psql -q -c "DROP SCHEMA IF EXISTS $schema CASCADE" -c "DROP PUBLICATION IF EXISTS $slot" >/dev/null 2>&1 || true
  # The walsender outlives its client briefly; a slot left behind would keep PostgreSQL from starting with
  # wal_level = replica, so wait until it is inactive.
  for _ in $(seq 1 100); do
    psql -q -c "SELECT pg_drop_replication_slot('$slot') FROM pg_replication_slots WHERE slot_name = '$slot' AND NOT active" >/dev/null 2>&1 || true
    [ "$(psql -Atc "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$slot'")" = 0 ] && break
    sleep 0.1
  done
  rm -rf "$work"
}
trap cleanup EXIT
psql -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE SCHEMA $schema;
CREATE TABLE $schema.bench_order (id bigserial PRIMARY KEY, customer text NOT NULL, amount_cents bigint NOT NULL,
                                  status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE $schema.plain_event (id bigserial PRIMARY KEY, event_id uuid NOT NULL, topic_id bigint NOT NULL,
                                  partition integer, event_key text, event_type text NOT NULL, source text,
                                  content_type text NOT NULL, payload bytea NOT NULL, headers jsonb,
                                  created_at timestamptz NOT NULL DEFAULT now());
CREATE PUBLICATION $slot;
SQL
"$bin/pg_recvlogical" -d "$PGDATABASE" --slot "$slot" --create-slot -P pgoutput
for txn in 1 10; do
  cat > "$work/raw$txn.sql" <<SQL
BEGIN;
INSERT INTO $schema.bench_order (customer, amount_cents, status) VALUES ('customer-1', 1234, 'PLACED');
INSERT INTO $schema.plain_event (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers) SELECT gen_random_uuid(), 1, g % 8, 'key-' || g, 'demo.OrderPlaced', 'bench', 'application/json', convert_to(repeat('x', 200), 'UTF8'), NULL FROM generate_series(1, $txn) g;
COMMIT;
SQL
  cat > "$work/wal$txn.sql" <<SQL
BEGIN;
INSERT INTO $schema.bench_order (customer, amount_cents, status) VALUES ('customer-1', 1234, 'PLACED');
SELECT count(pg_logical_emit_message(true, 'boxline', convert_to('{"topic":1,"partition":' || (g % 8) || ',"key":"key-' || g || '","type":"demo.OrderPlaced","id":"' || gen_random_uuid() || '"}' || repeat('x', 200), 'UTF8'))) FROM generate_series(1, $txn) g;
COMMIT;
SQL
done
"$bin/pg_recvlogical" -d "$PGDATABASE" --slot "$slot" --start -o proto_version=1 -o publication_names="$slot" \
  -o messages=true -f /dev/null -F 1 & recv=$!
now() { date +%s.%N; }
echo "| events/txn | round | raw events/s | WAL messages, decoded: events/s end-to-end | ratio | producers alone during it |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
  for txn in 1 10; do
    psql -q -c "TRUNCATE $schema.bench_order, $schema.plain_event" -c CHECKPOINT
    raw=$("$bin/pgbench" -n -M prepared -c 4 -j 2 -f "$work/raw$txn.sql" -T "$seconds" 2>&1 | grep -o 'tps = [0-9.]*' | head -1 | cut -d' ' -f3)
    psql -q -c "TRUNCATE $schema.bench_order" -c CHECKPOINT
    start=$(now)
    wal=$("$bin/pgbench" -n -M prepared -c 4 -j 2 -f "$work/wal$txn.sql" -T "$seconds" 2>&1 | grep -o 'tps = [0-9.]*' | head -1 | cut -d' ' -f3)
    end=$(psql -Atc "SELECT pg_current_wal_lsn()")
    for _ in $(seq 1 1200); do
      [ "$(psql -Atc "SELECT confirmed_flush_lsn >= '$end' FROM pg_replication_slots WHERE slot_name = '$slot'")" = t ] && break
      sleep 0.1
    done
    [ "$(psql -Atc "SELECT confirmed_flush_lsn >= '$end' FROM pg_replication_slots WHERE slot_name = '$slot'")" = t ] \
      || { echo "the receiver did not catch up within 120 s" >&2; exit 1; }
    done_at=$(now); n=$(psql -Atc "SELECT count(*) FROM $schema.bench_order")
    awk -v t="$txn" -v r="$r" -v raw="$raw" -v wal="$wal" -v n="$n" -v s="$start" -v e="$done_at" \
      'BEGIN { e2e = n * t / (e - s); printf "| %d | %d | %.0f | %.0f | %.2f× | %.0f |\n", t, r, raw * t, e2e, e2e / (raw * t), wal * t }'
  done
done
echo; echo "4 producer clients, $seconds s per trial; schema, publication and slot $slot dropped."
