#!/usr/bin/env bash
# Server-side costs of the two per-batch statements on the hot path (docs/benchmarks.md, appendix), timed
# inside PostgreSQL with clock_timestamp(), no client or JVM involved.
#   bash run.sh            (needs the bench compiled: ./mvnw -q -pl boxline-bench compile, and its class path)
# Uses its own database, ccbench, on 127.0.0.1:5432, dropped and created again.
set -euo pipefail
cd "$(dirname "$0")"
CP=${CP:-../../../target/classes:$(cat /tmp/bench.cp)}
PSQL="psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1"
$PSQL -qc "DROP DATABASE IF EXISTS ccbench" -c "CREATE DATABASE ccbench"
java -cp "$CP" io.boxline.bench.Bench ddl --schema=ccb | sed -n '/^-- Boxline schema/,$p' | $PSQL -q -d ccbench > /dev/null
$PSQL -q -d ccbench -f setup.sql
$PSQL -q -d ccbench -f commit_cursor_set.sql

cursors() { # cursors FN: 2,000 calls from position 0
  $PSQL -q -d ccbench -c "UPDATE ccb.cursor SET position = 0" -c "VACUUM ccb.cursor"
  sed -e "s/:calls/2000/" -e "s/ccb\.FN(/ccb.$1(/" commit_cursors_loop.sql | $PSQL -d ccbench 2>&1 | grep NOTICE | sed "s/.*NOTICE:/$1/"
}
outbox() { # outbox N: N fresh outbox rows over the 8 partitions
  $PSQL -q -d ccbench <<SQL
UPDATE ccb.sequencer_lease SET owner = 'me', expires_at = now() + interval '10 hours';
TRUNCATE ccb.outbox;
INSERT INTO ccb.outbox (event_id, topic_id, partition, event_key, event_type, content_type, payload)
  SELECT gen_random_uuid(), 1, g % 8, 'k' || g, 'x', 'application/json', convert_to(repeat('x', 200), 'UTF8')
    FROM generate_series(1, $1) g;
VACUUM ANALYZE ccb.outbox;
SQL
}
# The body of sequence_batch as the migration defines it, with its parameters as this loop's values.
direct=$(python3 - <<'PY'
src = open("../../../../boxline-jdbc/src/main/resources/io/boxline/jdbc/postgresql/V11__publish_checks.sql").read()
body = src[src.index("CREATE FUNCTION ${schema}.${p}sequence_batch"):]
body = body[body.index("RETURN QUERY") + len("RETURN QUERY"):body.index("END\n$$;")].strip().rstrip(";")
for k, v in {"${schema}": "ccb", "${p}": "", "p_lease_secs": "60", "p_owner": "'me'::text",
             "p_max_events": "23", "p_channel": "'ccb_log'::text", "p_max_notify": "7000",
             "p_return_events": "true", "p_place_unassigned": "false"}.items():
    body = body.replace(k, v)
print(" ".join(line.split("--")[0].strip() for line in body.splitlines()))
PY
)
batches() { # batches NAME QUERY
  outbox 23000
  QUERY="$2" python3 -c 'import os, sys; sys.stdout.write(open("sequence_batch_loop.sql").read().replace("BATCH_QUERY", os.environ["QUERY"]))' \
    | $PSQL -d ccbench 2>&1 | grep NOTICE | sed "s/.*NOTICE:/$1/"
}
for round in 1 2 3; do
  cursors commit_cursors
  cursors commit_cursor_set
  batches sequence_batch_function "SELECT * FROM ccb.sequence_batch(60, 'me', 23, 'ccb_log', 7000, true, false)"
  batches sequence_batch_direct "$direct"
done
