-- Named queries of the H2 dialect. "-- name: x" starts query x. ${schema} and ${p} are validated identifiers
-- substituted once at start; every value is a bind parameter.
--
-- Times are BIGINT microseconds since the epoch (see V1__base.sql). "Now" on the database clock is written
--   CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
-- (H2 keeps CURRENT_TIMESTAMP fixed for the length of a transaction; Boxline's transactions are short).
-- Lists travel as SQL arrays (CAST(? AS BIGINT ARRAY)) read with UNNEST, the counterpart of PostgreSQL's
-- unnest. Statements that lock rows of a list lock one row per execution, in the key order the Java side
-- sorted the list in: H2 runs in the same JVM (or answers a batch on one connection), so this costs little
-- and makes the lock order explicit. H2 has no INSERT IGNORE / ON CONFLICT DO NOTHING in its own mode: the
-- statements marked "duplicates ignored" are plain INSERTs whose duplicate-key error (23505) the Java side
-- treats as "already there" (H2 undoes only the failed statement, not the transaction).

-- name: create_version_table
CREATE TABLE IF NOT EXISTS ${schema}.${p}schema_version (
  version      INT           NOT NULL PRIMARY KEY,
  description  VARCHAR(255)  NOT NULL,
  applied_at   BIGINT        NOT NULL
)

-- When the schema was first migrated, to the microsecond: a read replica must show the same.
-- name: schema_fingerprint
SELECT applied_at FROM ${schema}.${p}schema_version WHERE version = 1

-- name: current_version
SELECT COALESCE(MAX(version), 0) FROM ${schema}.${p}schema_version

-- Duplicates ignored (two processes may migrate at once).
-- name: record_version
INSERT INTO ${schema}.${p}schema_version (version, description, applied_at)
VALUES (?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- Duplicates ignored.
-- name: insert_namespace
INSERT INTO ${schema}.${p}namespace (path, parent_id, created_at)
VALUES (?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- name: namespace_id
SELECT id FROM ${schema}.${p}namespace WHERE path = ?

-- The partition count is validated before; duplicates ignored (an existing (namespace, name)).
-- name: insert_topic
INSERT INTO ${schema}.${p}topic (namespace_id, name, partitions, sequencing, created_at)
VALUES (?, ?, ?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- Parameters: the topic id and the partition count.
-- name: insert_partitions
INSERT INTO ${schema}.${p}partition (topic_id, "PARTITION", last_seq, seq_version)
SELECT ?, CAST(g.x AS INT), 0, 0 FROM SYSTEM_RANGE(0, CAST(? AS INT) - 1) g

-- name: topic_by_name
SELECT t.id, n.path, t.name, t.partitions, t.created_at, t.sequencing
  FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE n.path = ? AND t.name = ?

-- name: topic_by_id
SELECT t.id, n.path, t.name, t.partitions, t.created_at, t.sequencing
  FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE t.id = ?

-- name: all_topics
SELECT t.id, n.path, t.name, t.partitions, t.created_at, t.sequencing
  FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 ORDER BY n.path, t.name

-- Duplicates ignored.
-- name: insert_subscription
INSERT INTO ${schema}.${p}subscription (name, start_kind, start_at, created_at, active_at)
VALUES (?, ?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT),
        CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- name: subscription_by_name
SELECT id, created_at, start_kind, start_at, active_at FROM ${schema}.${p}subscription WHERE name = ?

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
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, "PARTITION", position, updated_at)
SELECT ?, p.topic_id, p.partition, 0, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
  FROM ${schema}.${p}partition p WHERE p.topic_id = ?

-- name: insert_cursors_latest
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, "PARTITION", position, updated_at)
SELECT ?, p.topic_id, p.partition, p.last_seq, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
  FROM ${schema}.${p}partition p WHERE p.topic_id = ?

-- Position just before the first event created at or after the timestamp (the last sequence if none).
-- name: insert_cursors_at
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, "PARTITION", position, updated_at)
SELECT ?, p.topic_id, p.partition,
       COALESCE((SELECT MIN(l.seq) - 1 FROM ${schema}.${p}log l
                  WHERE l.topic_id = p.topic_id AND l.partition = p.partition AND l.created_at >= ?),
                p.last_seq),
       CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
  FROM ${schema}.${p}partition p WHERE p.topic_id = ?

-- Rewinding a subscription (Admin.rewind; its group has no live consumers): every cursor moves to the start
-- position, computed as at creation (insert_cursors_*), in one transaction with unpark_after_cursors.
-- name: rewind_cursors_earliest
UPDATE ${schema}.${p}cursor SET position = 0, updated_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE subscription_id = ?

-- name: rewind_cursors_latest
UPDATE ${schema}.${p}cursor c
   SET position = (SELECT p.last_seq FROM ${schema}.${p}partition p
                    WHERE p.topic_id = c.topic_id AND p."PARTITION" = c."PARTITION"),
       updated_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE c.subscription_id = ?

-- Parameters: the timestamp, then the subscription.
-- name: rewind_cursors_at
UPDATE ${schema}.${p}cursor c
   SET position = COALESCE((SELECT MIN(l.seq) - 1 FROM ${schema}.${p}log l
                             WHERE l.topic_id = c.topic_id AND l."PARTITION" = c."PARTITION" AND l.created_at >= ?),
                           (SELECT p.last_seq FROM ${schema}.${p}partition p
                             WHERE p.topic_id = c.topic_id AND p."PARTITION" = c."PARTITION")),
       updated_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE c.subscription_id = ?

-- Parked events (retries, waiting, dead letters) after the new positions go: the rewind delivers them again.
-- name: seek_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ?

-- name: unpark_after_cursors
DELETE FROM ${schema}.${p}parked k
 WHERE k.subscription_id = ?
   AND k.seq > (SELECT c.position FROM ${schema}.${p}cursor c
                 WHERE c.subscription_id = k.subscription_id AND c.topic_id = k.topic_id
                   AND c."PARTITION" = k."PARTITION")

-- name: lag
SELECT n.path, t.name, c.partition, c.position, p.last_seq
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE c.subscription_id = ?
 ORDER BY n.path, t.name, c.partition

-- The lag and, where events wait, the creation time of the oldest unhandled one (by primary key).
-- name: lag_with_age
SELECT n.path, t.name, c.partition, c.position, p.last_seq,
       CASE WHEN p.last_seq > c.position THEN
         (SELECT l.created_at FROM ${schema}.${p}log l
           WHERE l.topic_id = c.topic_id AND l.partition = c.partition AND l.seq > c.position
           ORDER BY l.seq FETCH FIRST 1 ROW ONLY)
       END
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE c.subscription_id = ?
 ORDER BY n.path, t.name, c.partition

-- name: lag_all
SELECT s.name, n.path, t.name, c.partition, c.position, p.last_seq,
       CASE WHEN p.last_seq > c.position THEN
         (SELECT l.created_at FROM ${schema}.${p}log l
           WHERE l.topic_id = c.topic_id AND l.partition = c.partition AND l.seq > c.position
           ORDER BY l.seq FETCH FIRST 1 ROW ONLY)
       END
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}subscription s ON s.id = c.subscription_id
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 ORDER BY s.name, n.path, t.name, c.partition

-- name: outbox_backlog
SELECT (SELECT COUNT(*) FROM ${schema}.${p}outbox),
       (SELECT o.created_at FROM ${schema}.${p}outbox o ORDER BY o.id FETCH FIRST 1 ROW ONLY)

-- One row per record, sent as a JDBC batch.
-- name: append
INSERT INTO ${schema}.${p}outbox
  (event_id, topic_id, "PARTITION", event_key, event_type, source, content_type, payload, headers, deliver_at,
   created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- Duplicates ignored: the first event stored with the key keeps it.
-- name: claim_idempotency_key
INSERT INTO ${schema}.${p}idempotency (topic_id, idempotency_key, event_id, created_at)
VALUES (?, ?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- name: idempotency_owner
SELECT event_id FROM ${schema}.${p}idempotency WHERE topic_id = ? AND idempotency_key = ?

-- ---------------------------------------------------------------- sequencer
-- The sequencer keeps one connection of its own (READ COMMITTED, auto-commit off). Taking or renewing the
-- lease is one transaction: a standby skips the lease row while the leader's transaction holds it (SKIP
-- LOCKED, H2 2.2.224+) instead of queueing behind it; the same statement tells whether the outbox holds
-- anything.
-- name: try_sequencer
SELECT owner, EXISTS (SELECT 1 FROM ${schema}.${p}outbox)
  FROM ${schema}.${p}sequencer_lease
 WHERE name = 'sequencer'
   AND (owner = ? OR owner IS NULL
        OR expires_at < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))
   FOR UPDATE SKIP LOCKED

-- Takes (the epoch counts changes of owner) or renews the lease whose row try_sequencer locked.
-- name: take_sequencer
UPDATE ${schema}.${p}sequencer_lease
   SET epoch = CASE WHEN owner IS NOT DISTINCT FROM ? THEN epoch ELSE epoch + 1 END,
       owner = ?,
       expires_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) + ?
 WHERE name = 'sequencer'

-- name: release_sequencer
UPDATE ${schema}.${p}sequencer_lease SET owner = NULL, expires_at = 0
 WHERE name = 'sequencer' AND owner = ?

-- First statement of every sequencer transaction: proves and renews the lease, and holds its row lock
-- (an UPDATE locks the row until commit), so sequencer transactions never overlap even while the lease
-- changes hands. It also numbers the batch: FINAL TABLE hands the new log_version back (no row: the lease
-- is someone else's).
-- name: lock_sequencer
SELECT log_version FROM FINAL TABLE (
  UPDATE ${schema}.${p}sequencer_lease
     SET expires_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) + ?,
         log_version = log_version + 1
   WHERE name = 'sequencer' AND owner = ?)

-- A plain READ COMMITTED read sees only committed rows and never waits for a producer's open transaction.
-- Only the sequencer deletes outbox rows, and sequencer transactions are serialised.
-- name: take_outbox
SELECT id, topic_id, "PARTITION", event_key FROM ${schema}.${p}outbox ORDER BY id FETCH FIRST ? ROWS ONLY

-- The same rows in full, when the sequencer hands the events to consumers in its own process.
-- name: take_outbox_events
SELECT id, topic_id, "PARTITION", event_key, event_id, event_type, source, content_type, payload, headers,
       created_at, deliver_at
  FROM ${schema}.${p}outbox ORDER BY id FETCH FIRST ? ROWS ONLY

-- One partition per execution, in key order.
-- name: lock_partition
SELECT last_seq FROM ${schema}.${p}partition WHERE topic_id = ? AND "PARTITION" = ? FOR UPDATE

-- name: advance_partition
UPDATE ${schema}.${p}partition SET last_seq = ?, seq_version = ? WHERE topic_id = ? AND "PARTITION" = ?

-- The payloads move inside the database: the arrays carry only (outbox id, partition, sequence).
-- name: append_log
INSERT INTO ${schema}.${p}log
  (topic_id, "PARTITION", seq, event_id, event_key, event_type, source, content_type, payload, headers,
   created_at, sequenced_at, deliver_at)
SELECT o.topic_id, v.part, v.seq, o.event_id, o.event_key, o.event_type, o.source, o.content_type, o.payload,
       o.headers, o.created_at, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT), o.deliver_at
  FROM UNNEST(CAST(? AS BIGINT ARRAY), CAST(? AS INT ARRAY), CAST(? AS BIGINT ARRAY)) AS v (id, part, seq)
  JOIN ${schema}.${p}outbox o ON o.id = v.id

-- "= ANY(array)" is looked up in the primary key; "IN (SELECT ... FROM UNNEST(...))" is planned on the
-- index too but measured a hundred times slower on a large outbox (H2 2.3.232).
-- name: delete_outbox
DELETE FROM ${schema}.${p}outbox WHERE id = ANY(CAST(? AS BIGINT ARRAY))

-- ---------------------------------------------------------------- wake-ups (no LISTEN/NOTIFY here)
-- The whole idle cost of the wake-up poll: one primary-key read.
-- name: poll_wakeups
SELECT log_version, wake_all, EXISTS (SELECT 1 FROM ${schema}.${p}outbox)
  FROM ${schema}.${p}sequencer_lease WHERE name = 'sequencer'

-- Heads of the partitions advanced by batches after the given one (index on seq_version).
-- name: changed_heads
SELECT topic_id, "PARTITION", last_seq, seq_version FROM ${schema}.${p}partition
 WHERE seq_version > ? ORDER BY seq_version FETCH FIRST ? ROWS ONLY

-- Redrive asks every consumer to look at everything.
-- name: wake_all
UPDATE ${schema}.${p}sequencer_lease SET wake_all = wake_all + 1 WHERE name = 'sequencer'

-- ---------------------------------------------------------------- consume
-- name: backlogged
SELECT c.topic_id, c.partition, p.last_seq,
       EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                WHERE k.subscription_id = c.subscription_id AND k.topic_id = c.topic_id
                  AND k.partition = c.partition AND k.state <> 'DEAD'
                  AND k.next_attempt_at <= CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
 WHERE c.subscription_id = ?
   AND (p.last_seq > c.position
        OR EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                    WHERE k.subscription_id = c.subscription_id AND k.topic_id = c.topic_id
                      AND k.partition = c.partition AND k.state <> 'DEAD'
                      AND k.next_attempt_at <= CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)))

-- Reads by the gap-free per-partition sequence, never by an identity column.
-- name: read
SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers, created_at, deliver_at
  FROM ${schema}.${p}log
 WHERE topic_id = ? AND "PARTITION" = ? AND seq > ?
 ORDER BY seq
 FETCH FIRST ? ROWS ONLY

-- A transactional handler's settlement, in its transaction: the compare-and-set of commit_cursor, which locks
-- the cursor row, committed synchronously with the application's writes.
-- name: settle_cursor
UPDATE ${schema}.${p}cursor
   SET position = ?, updated_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ? AND epoch = ? AND position = ?

-- Compare-and-set on the epoch. H2 counts matched rows, so 1 means "ours" even if the position is unchanged.
-- Compare-and-set on the position the consumer left, as on PostgreSQL.
-- name: commit_cursor
UPDATE ${schema}.${p}cursor
   SET position = ?, updated_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ? AND epoch = ? AND position = ?

-- name: cursor_epoch
SELECT epoch FROM ${schema}.${p}cursor WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ?

-- Fencing locks the cursors that are behind the new epoch, one per execution in key order, then raises it.
-- name: fence_lock
SELECT position FROM ${schema}.${p}cursor
 WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ? AND epoch < ?
   FOR UPDATE

-- name: fence_cursor
UPDATE ${schema}.${p}cursor
   SET epoch = ?, owner = ?, updated_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ? AND epoch < ?

-- ---------------------------------------------------------------- consumer-group coordination
-- A check-in is two statements (no data-modifying CTE here): the group's view (check_in), then the heartbeat.
-- name: heartbeat
MERGE INTO ${schema}.${p}member (group_name, member_id, weight, heartbeat_at, expires_at, status) KEY (group_name, member_id)
VALUES (?, ?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT),
        CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) + ?, ?)

-- Many members' heartbeats in one write (a server renewing the members that wait on it); an expired member is
-- not brought back.
-- name: renew_members
UPDATE ${schema}.${p}member
   SET heartbeat_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT),
       expires_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) + ?
 WHERE group_name = ? AND member_id = ANY(CAST(? AS VARCHAR ARRAY))
   AND expires_at > CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)

-- The group's live members, for operator actions that need an idle group (Admin.rewind).
-- name: live_members
SELECT member_id FROM ${schema}.${p}member WHERE group_name = ? AND expires_at > CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) ORDER BY member_id

-- name: check_in
SELECT 'm' AS kind, member_id AS who, weight, CAST(NULL AS BIGINT) AS topic_id, CAST(NULL AS INT) AS part,
       CAST(NULL AS BIGINT) AS epoch, CAST(NULL AS BOOLEAN) AS releasing, CAST(NULL AS BIGINT) AS since,
       CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) AS now
  FROM ${schema}.${p}member
 WHERE group_name = ? AND expires_at > CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
UNION ALL
SELECT 'l', owner, NULL, topic_id, "PARTITION", epoch, releasing, since,
       CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
  FROM ${schema}.${p}lease WHERE group_name = ? AND owner IS NOT NULL
UNION ALL
-- A stamp of the group's policy rows, so members re-read the policy only when it changed.
SELECT 'p', NULL, NULL,
       (SELECT CAST(COALESCE(SUM(ORA_HASH(CONCAT_WS('|', gp.group_name, gp.check_in_rate, gp.min_check_in_ms,
                                                   gp.deadline_multiplier, gp.slack, gp.release_grace_ms,
                                                   gp.idle_release_ms, gp.batch_size, gp.updated_at))), 0)
                    AS BIGINT)
          FROM ${schema}.${p}group_policy gp WHERE gp.group_name IN (?, '')),
       NULL, NULL, NULL, NULL, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)

-- Lease rows outlive their owners; a partition's first row starts its epoch at the database clock in
-- microseconds. Run on its own (auto-commit) before acquire_lock. Duplicates ignored.
-- name: create_lease
INSERT INTO ${schema}.${p}lease (group_name, topic_id, "PARTITION", owner, epoch, releasing, since)
VALUES (?, ?, ?, NULL, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT), FALSE,
        CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- Every lease statement locks rows in key order (one row per execution, the list sorted): no deadlocks.
-- name: acquire_lock
SELECT owner, epoch FROM ${schema}.${p}lease
 WHERE group_name = ? AND topic_id = ? AND "PARTITION" = ?
   FOR UPDATE

-- Compare-and-set on "nobody holds it", on a row acquire_lock found free and still holds.
-- name: acquire_take
UPDATE ${schema}.${p}lease
   SET owner = ?, epoch = epoch + 1, releasing = FALSE,
       since = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE group_name = ? AND topic_id = ? AND "PARTITION" = ? AND owner IS NULL

-- name: mark_releasing
UPDATE ${schema}.${p}lease
   SET releasing = TRUE, since = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE group_name = ? AND topic_id = ? AND "PARTITION" = ? AND owner = ? AND epoch = ?

-- name: release_lease
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = FALSE
 WHERE group_name = ? AND topic_id = ? AND "PARTITION" = ? AND owner = ? AND epoch = ?

-- name: leave_member
DELETE FROM ${schema}.${p}member WHERE group_name = ? AND member_id = ?

-- H2 walks the primary key (group_name, topic_id, partition) here, so rows are locked in key order.
-- name: leave_leases
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = FALSE
 WHERE group_name = ? AND owner = ?

-- Members dead for an hour are forgotten.
-- name: forget_members
DELETE FROM ${schema}.${p}member
 WHERE group_name = ?
   AND expires_at < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) - 3600000000

-- Frees leases of members not in the live list (an array of ids) and RELEASING leases past the grace.
-- name: reclaim_leases
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = FALSE
 WHERE group_name = ? AND owner IS NOT NULL
   AND (owner <> ALL(CAST(? AS VARCHAR ARRAY))
        OR (releasing AND since < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) - ?))

-- One row per execution, in key order.
-- name: force_release
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = FALSE
 WHERE group_name = ? AND topic_id = ? AND "PARTITION" = ? AND owner IS NOT NULL

-- The group's own row sorts before the default (''). The stamp of the same snapshot comes along (the same
-- expression as in check_in).
-- name: group_policy
SELECT gp.check_in_rate, gp.min_check_in_ms, gp.deadline_multiplier, gp.slack, gp.release_grace_ms,
       gp.idle_release_ms, gp.batch_size, gp.max_check_in_ms, gp.max_members
  FROM ${schema}.${p}group_policy gp WHERE gp.group_name IN (?, '')
 ORDER BY gp.group_name DESC FETCH FIRST 1 ROW ONLY

-- name: upsert_group_policy
MERGE INTO ${schema}.${p}group_policy
  (group_name, check_in_rate, min_check_in_ms, deadline_multiplier, slack, release_grace_ms, idle_release_ms,
   batch_size, max_check_in_ms, max_members, updated_at) KEY (group_name)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- name: delete_group_policy
DELETE FROM ${schema}.${p}group_policy WHERE group_name = ?

-- ---------------------------------------------------------------- parked events (retries, dead letters)
-- Duplicates ignored.
-- name: park
INSERT INTO ${schema}.${p}parked
  (subscription_id, topic_id, "PARTITION", seq, event_id, event_key, event_type, state, attempts,
   next_attempt_at, last_error, first_failed_at, last_failed_at, dead_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
        CASE WHEN ? <> 'WAITING' THEN CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) END,
        CASE WHEN ? <> 'WAITING' THEN CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) END,
        CASE WHEN ? = 'DEAD' THEN CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) END)

-- The head of each key: its oldest parked event that still counts (dead ones count only when they block).
-- Keyless events are each their own head.
-- name: parked_heads
SELECT event_key, state, next_attempt_at FROM (
  SELECT event_key, state, next_attempt_at,
         ROW_NUMBER() OVER (PARTITION BY COALESCE('k:' || event_key, 's:' || CAST(seq AS VARCHAR))
                            ORDER BY seq) AS rn
    FROM ${schema}.${p}parked
   WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ? AND (state <> 'DEAD' OR ?)
) h
 WHERE rn = 1

-- The due heads are picked (and limited) from the parked table first, then each is looked up in the log
-- by primary key.
-- name: due_parked
WITH heads AS (
  SELECT topic_id, "PARTITION" AS part, seq, state, attempts, next_attempt_at, first_failed_at,
         ROW_NUMBER() OVER (PARTITION BY COALESCE('k:' || event_key, 's:' || CAST(seq AS VARCHAR))
                            ORDER BY seq) AS rn
    FROM ${schema}.${p}parked
   WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ? AND (state <> 'DEAD' OR ?)
), due AS (
  SELECT * FROM heads
   WHERE rn = 1 AND state <> 'DEAD'
     AND next_attempt_at <= ?
   ORDER BY seq FETCH FIRST ? ROWS ONLY
)
SELECT l.seq, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers,
       l.created_at, h.attempts, h.first_failed_at, l.deliver_at
  FROM due h
  JOIN ${schema}.${p}log l ON l.topic_id = h.topic_id AND l.partition = h.part AND l.seq = h.seq
 ORDER BY h.seq

-- Every resolution is fenced by the cursor's epoch, like a cursor commit.
-- name: parked_done
DELETE FROM ${schema}.${p}parked k
 WHERE k.subscription_id = ? AND k.topic_id = ? AND k.partition = ? AND k.seq = ?
   AND EXISTS (SELECT 1 FROM ${schema}.${p}cursor c
                WHERE c.subscription_id = k.subscription_id AND c.topic_id = k.topic_id
                  AND c.partition = k.partition AND c.epoch = ?)

-- Inside a transactional handler's transaction, after settle_cursor locked the cursor row.
-- name: parked_done_locked
DELETE FROM ${schema}.${p}parked
 WHERE subscription_id = ? AND topic_id = ? AND "PARTITION" = ? AND seq = ?

-- name: parked_retry
UPDATE ${schema}.${p}parked k
   SET state = ?, attempts = ?, next_attempt_at = COALESCE(?, k.next_attempt_at), last_error = ?,
       first_failed_at = COALESCE(k.first_failed_at, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)),
       last_failed_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT),
       dead_at = CASE WHEN ? = 'DEAD' THEN CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) END
 WHERE k.subscription_id = ? AND k.topic_id = ? AND k.partition = ? AND k.seq = ?
   AND EXISTS (SELECT 1 FROM ${schema}.${p}cursor c
                WHERE c.subscription_id = k.subscription_id AND c.topic_id = k.topic_id
                  AND c.partition = k.partition AND c.epoch = ?)

-- Dead-letter selection shared by list, redrive and discard: every filter is an optional bound parameter.
-- name: dead_letters
SELECT k.topic_id, k.partition, k.seq, k.attempts, k.last_error, k.first_failed_at, k.dead_at, n.path,
       t.name, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers,
       l.created_at, l.deliver_at
  FROM ${schema}.${p}parked k
  JOIN ${schema}.${p}log l ON l.topic_id = k.topic_id AND l.partition = k.partition AND l.seq = k.seq
  JOIN ${schema}.${p}topic t ON t.id = k.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE k.subscription_id = ? AND k.state = 'DEAD'
   AND (CAST(? AS BIGINT) IS NULL OR k.topic_id = ?)
   AND (CAST(? AS VARCHAR) IS NULL OR k.event_type = ?)
   AND (CAST(? AS VARCHAR) IS NULL OR k.event_key = ?)
   AND (CAST(? AS VARCHAR) IS NULL OR k.event_id = ?)
   AND (CAST(? AS VARCHAR) IS NULL OR LOCATE(?, k.last_error) > 0)
   AND (CAST(? AS BIGINT) IS NULL OR k.dead_at < ?)
   AND (CAST(? AS BIGINT) IS NULL OR k.dead_at > ?)
   AND (CAST(? AS BIGINT) IS NULL OR (k.topic_id, k.partition, k.seq) > (CAST(? AS BIGINT), CAST(? AS INT), CAST(? AS BIGINT)))
 ORDER BY k.topic_id, k.partition, k.seq
 FETCH FIRST ? ROWS ONLY

-- Dead letters grouped by the first 200 characters of their last error (DeadLetterReason.MAX_LENGTH).
-- name: dead_letter_reasons
SELECT r.reason, count(*), min(r.dead_at), max(r.dead_at)
  FROM (SELECT COALESCE(LEFT(k.last_error, 200), '') AS reason, k.dead_at
          FROM ${schema}.${p}parked k
         WHERE k.subscription_id = ? AND k.state = 'DEAD') r
 GROUP BY r.reason
 ORDER BY count(*) DESC, r.reason
 LIMIT ?

-- name: redrive_dead
UPDATE ${schema}.${p}parked
   SET state = 'RETRY', attempts = 0,
       next_attempt_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT), dead_at = NULL
 WHERE (subscription_id, topic_id, "PARTITION", seq) IN (
    SELECT subscription_id, topic_id, "PARTITION", seq FROM ${schema}.${p}parked
    WHERE subscription_id = ? AND state = 'DEAD'
      AND (CAST(? AS BIGINT) IS NULL OR topic_id = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR event_type = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR event_key = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR event_id = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR LOCATE(?, last_error) > 0)
      AND (CAST(? AS BIGINT) IS NULL OR dead_at < ?)
      AND (CAST(? AS BIGINT) IS NULL OR dead_at > ?)
      AND (CAST(? AS BIGINT) IS NULL OR (topic_id, "PARTITION", seq) > (CAST(? AS BIGINT), CAST(? AS INT), CAST(? AS BIGINT)))
     ORDER BY topic_id, "PARTITION", seq
     FETCH FIRST ? ROWS ONLY)

-- name: discard_dead
DELETE FROM ${schema}.${p}parked
 WHERE (subscription_id, topic_id, "PARTITION", seq) IN (
    SELECT subscription_id, topic_id, "PARTITION", seq FROM ${schema}.${p}parked
    WHERE subscription_id = ? AND state = 'DEAD'
      AND (CAST(? AS BIGINT) IS NULL OR topic_id = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR event_type = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR event_key = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR event_id = ?)
      AND (CAST(? AS VARCHAR) IS NULL OR LOCATE(?, last_error) > 0)
      AND (CAST(? AS BIGINT) IS NULL OR dead_at < ?)
      AND (CAST(? AS BIGINT) IS NULL OR dead_at > ?)
      AND (CAST(? AS BIGINT) IS NULL OR (topic_id, "PARTITION", seq) > (CAST(? AS BIGINT), CAST(? AS INT), CAST(? AS BIGINT)))
     ORDER BY topic_id, "PARTITION", seq
     FETCH FIRST ? ROWS ONLY)

-- ---------------------------------------------------------------- inbox
-- Inside the handler's transaction: 1 row when the key is new (the handler runs); a duplicate (23505) is
-- a key already handled.
-- name: inbox_claim
INSERT INTO ${schema}.${p}inbox (subscription_id, dedup_key, handled_at)
VALUES (?, ?, CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT))

-- name: inbox_seen
SELECT EXISTS (SELECT 1 FROM ${schema}.${p}inbox WHERE subscription_id = ? AND dedup_key = ?)

-- ---------------------------------------------------------------- retention
-- Subscriptions whose group has a live member now (Admin's lastActive; retention's abandonAfter).
-- name: mark_active
UPDATE ${schema}.${p}subscription SET active_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE id = ?

-- name: set_retention
UPDATE ${schema}.${p}topic SET retention_ms = ?, retention_keep_unconsumed = ?, retention_max_events = ?,
       retention_abandon_ms = ?
 WHERE id = ?

-- Events of topics with a retention that are past their age or more than retention_max_events behind their
-- partition's newest, a batch at a time. Events still parked by a subscription stay; with keep_unconsumed,
-- so do events some cursor has not passed. The batch is picked first and deleted by key.
-- name: purge_log_pick
SELECT o.topic_id, o.partition, o.seq
  FROM ${schema}.${p}topic t
  JOIN ${schema}.${p}partition p ON p.topic_id = t.id
  JOIN ${schema}.${p}log o ON o.topic_id = p.topic_id AND o.partition = p.partition
 WHERE (t.retention_ms IS NOT NULL OR t.retention_max_events > 0)
   AND ((t.retention_ms IS NOT NULL
         AND o.created_at < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
                            - t.retention_ms * 1000)
        OR (t.retention_max_events > 0 AND o.seq <= p.last_seq - t.retention_max_events))
   AND (NOT t.retention_keep_unconsumed
        OR o.seq <= (SELECT COALESCE(MIN(c.position), o.seq)
                       FROM ${schema}.${p}cursor c
                       JOIN ${schema}.${p}subscription s ON s.id = c.subscription_id
                      WHERE c.topic_id = o.topic_id AND c.partition = o.partition
                        AND s.active_at >= CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
                                           - t.retention_abandon_ms * 1000))
   AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                    WHERE k.topic_id = o.topic_id AND k.partition = o.partition AND k.seq = o.seq)
 FETCH FIRST ? ROWS ONLY

-- name: purge_log_delete
DELETE FROM ${schema}.${p}log WHERE topic_id = ? AND "PARTITION" = ? AND seq = ?

-- Ages are bound in microseconds.
-- name: purge_inbox
DELETE FROM ${schema}.${p}inbox
 WHERE handled_at < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) - ?
 FETCH FIRST ? ROWS ONLY

-- name: purge_dead_letters
DELETE FROM ${schema}.${p}parked
 WHERE state = 'DEAD' AND dead_at < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) - ?
 FETCH FIRST ? ROWS ONLY

-- name: purge_idempotency
DELETE FROM ${schema}.${p}idempotency
 WHERE created_at < CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) - ?
 FETCH FIRST ? ROWS ONLY

-- The last committed sequences of a range of one topic's partitions (no lock: IN_TRANSACTION producers hold
-- the rows while they run).
-- name: partition_heads
SELECT "PARTITION", last_seq FROM ${schema}.${p}partition WHERE topic_id = ? AND "PARTITION" BETWEEN ? AND ?

-- IN_TRANSACTION topics: the producer's transaction moves the head of a partition it locked (lock_partitions).
-- name: set_last_seq
UPDATE ${schema}.${p}partition SET last_seq = ? WHERE topic_id = ? AND "PARTITION" = ?

-- IN_TRANSACTION topics: one log row written by the producer's transaction.
-- name: insert_log
INSERT INTO ${schema}.${p}log
  (topic_id, "PARTITION", seq, event_id, event_key, event_type, source, content_type, payload, headers,
   created_at, sequenced_at, deliver_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)

-- The ids the log holds at the sequences of events handed over in memory (checked before the cursor passes them).
-- name: log_ids
SELECT seq, event_id FROM ${schema}.${p}log WHERE topic_id = ? AND "PARTITION" = ? AND seq BETWEEN ? AND ?

-- Copies outbox rows whose topic or partition does not exist into outbox_rejected; the next statement
-- deletes what was copied (the sequencer runs both, in one transaction, after a failed batch).
-- name: set_aside_unplaceable_copy
INSERT INTO ${schema}.${p}outbox_rejected
SELECT o.*, 'its topic or partition does not exist', CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
  FROM ${schema}.${p}outbox o
 WHERE NOT EXISTS (SELECT 1 FROM ${schema}.${p}topic t WHERE t.id = o.topic_id)
    OR (o."PARTITION" IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}partition p
                         WHERE p.topic_id = o.topic_id AND p."PARTITION" = o."PARTITION"))

-- name: set_aside_unplaceable_delete
DELETE FROM ${schema}.${p}outbox WHERE id IN (SELECT id FROM ${schema}.${p}outbox_rejected)

-- Operators: reading the log without a subscription (Admin); the rest is in common/queries.sql.

-- name: read_filtered
SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers, created_at, deliver_at
  FROM ${schema}.${p}log
 WHERE topic_id = ? AND "PARTITION" = ? AND seq > ?
   AND (CAST(? AS VARCHAR) IS NULL OR event_key = ?) AND (CAST(? AS VARCHAR) IS NULL OR event_id = ?)
 ORDER BY seq
 FETCH FIRST ? ROWS ONLY

-- name: group_view
SELECT 'm' AS kind, member_id AS who, weight, CAST(NULL AS BIGINT) AS topic_id, CAST(NULL AS INT) AS part,
       CAST(NULL AS BIGINT) AS epoch, CAST(NULL AS BOOLEAN) AS releasing, heartbeat_at AS since,
       CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT) AS now, expires_at, status
  FROM ${schema}.${p}member
 WHERE group_name = ? AND expires_at > CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
UNION ALL
SELECT 'l', owner, NULL, topic_id, "PARTITION", epoch, releasing, since,
       CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT), CAST(NULL AS BIGINT),
       CAST(NULL AS VARCHAR)
  FROM ${schema}.${p}lease WHERE group_name = ? AND owner IS NOT NULL

-- name: retrying
SELECT k.topic_id, k.partition, k.seq, k.attempts, k.last_error, k.first_failed_at, k.next_attempt_at, n.path,
       t.name, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers,
       l.created_at, l.deliver_at, k.state
  FROM ${schema}.${p}parked k
  JOIN ${schema}.${p}log l ON l.topic_id = k.topic_id AND l.partition = k.partition AND l.seq = k.seq
  JOIN ${schema}.${p}topic t ON t.id = k.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE k.subscription_id = ? AND k.state <> 'DEAD'
   AND (CAST(? AS BIGINT) IS NULL OR (k.topic_id, k.partition, k.seq) > (CAST(? AS BIGINT), CAST(? AS INT), CAST(? AS BIGINT)))
 ORDER BY k.topic_id, k.partition, k.seq
 FETCH FIRST ? ROWS ONLY
