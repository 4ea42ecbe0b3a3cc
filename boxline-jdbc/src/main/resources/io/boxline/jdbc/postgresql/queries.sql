-- Named queries of the PostgreSQL dialect. "-- name: x" starts query x. ${schema} and ${p} are validated
-- identifiers substituted once at start; every value is a bind parameter.

-- name: lock_migrations
SELECT pg_advisory_xact_lock(?)

-- name: create_version_table
CREATE TABLE IF NOT EXISTS ${schema}.${p}schema_version (
  version      integer      PRIMARY KEY,
  description  text         NOT NULL,
  applied_at   timestamptz  NOT NULL DEFAULT now()
)

-- name: current_version
SELECT coalesce(max(version), 0) FROM ${schema}.${p}schema_version

-- name: record_version
INSERT INTO ${schema}.${p}schema_version (version, description) VALUES (?, ?)

-- name: insert_namespace
INSERT INTO ${schema}.${p}namespace (path, parent_id) VALUES (?, ?)
ON CONFLICT (path) DO NOTHING

-- name: namespace_id
SELECT id FROM ${schema}.${p}namespace WHERE path = ?

-- name: insert_topic
INSERT INTO ${schema}.${p}topic (namespace_id, name, partitions) VALUES (?, ?, ?)
ON CONFLICT (namespace_id, name) DO NOTHING
RETURNING id

-- name: insert_partitions
INSERT INTO ${schema}.${p}partition (topic_id, partition)
SELECT ?, g FROM generate_series(0, ? - 1) AS g

-- name: topic_by_name
SELECT t.id, n.path, t.name, t.partitions, t.created_at
  FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE n.path = ? AND t.name = ?

-- name: topic_by_id
SELECT t.id, n.path, t.name, t.partitions, t.created_at
  FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE t.id = ?

-- name: all_topics
SELECT t.id, n.path, t.name, t.partitions, t.created_at
  FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 ORDER BY n.path, t.name

-- name: insert_subscription
INSERT INTO ${schema}.${p}subscription (name) VALUES (?)
ON CONFLICT (name) DO NOTHING
RETURNING id

-- name: subscription_by_name
SELECT id, created_at FROM ${schema}.${p}subscription WHERE name = ?

-- name: subscription_topics
SELECT n.path, t.name
  FROM ${schema}.${p}subscription_topic st
  JOIN ${schema}.${p}topic t ON t.id = st.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE st.subscription_id = ?
 ORDER BY n.path, t.name

-- name: insert_subscription_topic
INSERT INTO ${schema}.${p}subscription_topic (subscription_id, topic_id) VALUES (?, ?)

-- name: insert_cursors_earliest
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, partition, position)
SELECT ?, topic_id, partition, 0 FROM ${schema}.${p}partition WHERE topic_id = ?

-- name: insert_cursors_latest
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, partition, position)
SELECT ?, topic_id, partition, last_seq FROM ${schema}.${p}partition WHERE topic_id = ?

-- Position just before the first event created at or after the timestamp (the last sequence if none).
-- name: insert_cursors_at
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, partition, position)
SELECT ?, p.topic_id, p.partition,
       coalesce((SELECT min(l.seq) - 1 FROM ${schema}.${p}log l
                  WHERE l.topic_id = p.topic_id AND l.partition = p.partition AND l.created_at >= ?),
                p.last_seq)
  FROM ${schema}.${p}partition p WHERE p.topic_id = ?

-- name: lag
SELECT n.path, t.name, c.partition, c.position, p.last_seq
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE c.subscription_id = ?
 ORDER BY n.path, t.name, c.partition

-- name: append_one
INSERT INTO ${schema}.${p}outbox
  (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)

-- name: append_many
INSERT INTO ${schema}.${p}outbox
  (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers)
SELECT * FROM unnest(?::uuid[], ?::bigint[], ?::integer[], ?::text[], ?::text[], ?::text[], ?::text[],
                     ?::bytea[], ?::jsonb[])

-- name: claim_idempotency_keys
INSERT INTO ${schema}.${p}idempotency (topic_id, idempotency_key, event_id)
SELECT * FROM unnest(?::bigint[], ?::text[], ?::uuid[])
ON CONFLICT DO NOTHING

-- name: idempotency_owners
SELECT i.topic_id, i.idempotency_key, i.event_id
  FROM ${schema}.${p}idempotency i
  JOIN unnest(?::bigint[], ?::text[]) AS k(topic_id, idempotency_key)
    ON i.topic_id = k.topic_id AND i.idempotency_key = k.idempotency_key

-- name: notify
SELECT pg_notify(?, ?)

-- Takes the lease when free or expired; renews it when already ours. The epoch counts changes of owner.
-- It also says whether the outbox holds anything, so an idle sequencer needs this one statement per poll.
-- name: acquire_sequencer
UPDATE ${schema}.${p}sequencer_lease
   SET epoch = CASE WHEN owner IS DISTINCT FROM ? THEN epoch + 1 ELSE epoch END,
       owner = ?,
       expires_at = now() + make_interval(secs => ?)
 WHERE name = 'sequencer' AND (owner = ? OR owner IS NULL OR expires_at < now())
RETURNING EXISTS (SELECT 1 FROM ${schema}.${p}outbox)

-- name: release_sequencer
UPDATE ${schema}.${p}sequencer_lease SET owner = NULL, expires_at = '-infinity'
 WHERE name = 'sequencer' AND owner = ?

-- First statement of every sequencer transaction: proves and renews the lease, and holds its row lock until
-- commit, so sequencer transactions never overlap even while a lease changes hands. The commit need not wait
-- for the disk: a later synchronous commit (a cursor move) flushes it first, and if it is lost in a crash the
-- outbox rows come back and are sequenced again (see docs/architecture.md).
-- name: lock_sequencer
UPDATE ${schema}.${p}sequencer_lease
   SET expires_at = now() + make_interval(secs => ?)
 WHERE name = 'sequencer' AND owner = ?
RETURNING set_config('synchronous_commit', 'off', true)

-- name: take_outbox
DELETE FROM ${schema}.${p}outbox
 WHERE id IN (SELECT id FROM ${schema}.${p}outbox ORDER BY id LIMIT ?)
RETURNING id, event_id, topic_id, partition, event_key, event_type, source, content_type, payload,
          headers::text, created_at

-- name: advance_partitions
UPDATE ${schema}.${p}partition p
   SET last_seq = p.last_seq + v.n
  FROM unnest(?::bigint[], ?::integer[], ?::bigint[]) AS v(topic_id, partition, n)
 WHERE p.topic_id = v.topic_id AND p.partition = v.partition
RETURNING p.topic_id, p.partition, p.last_seq

-- name: append_log
INSERT INTO ${schema}.${p}log
  (topic_id, partition, seq, event_id, event_key, event_type, source, content_type, payload, headers,
   created_at)
SELECT * FROM unnest(?::bigint[], ?::integer[], ?::bigint[], ?::uuid[], ?::text[], ?::text[], ?::text[],
                     ?::text[], ?::bytea[], ?::jsonb[], ?::timestamptz[])

-- name: claim_cursors
UPDATE ${schema}.${p}cursor c
   SET epoch = c.epoch + 1, owner = ?, updated_at = now()
  FROM ${schema}.${p}partition p
 WHERE c.subscription_id = ? AND p.topic_id = c.topic_id AND p.partition = c.partition
RETURNING c.topic_id, c.partition, c.position, c.epoch, p.last_seq

-- name: backlogged
SELECT c.topic_id, c.partition, p.last_seq
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
 WHERE c.subscription_id = ? AND p.last_seq > c.position

-- Reads by the gap-free per-partition sequence, never by an auto-increment id.
-- name: read
SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers::text, created_at
  FROM ${schema}.${p}log
 WHERE topic_id = ? AND partition = ? AND seq > ?
 ORDER BY seq
 LIMIT ?

-- name: commit_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = now()
 WHERE subscription_id = ? AND topic_id = ? AND partition = ? AND epoch = ?
