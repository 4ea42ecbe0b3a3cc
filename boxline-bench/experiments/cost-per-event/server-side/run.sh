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
for round in 1 2 3; do
  cursors commit_cursors
  cursors commit_cursor_set
  for f in sequence_batch_function sequence_batch_direct; do
    outbox 23000
    $PSQL -d ccbench -f $f.sql 2>&1 | grep NOTICE | sed "s/.*NOTICE:/$f/"
  done
done
