-- Named queries of the PostgreSQL dialect. "-- name: x" starts query x. ${schema} and ${p} are validated
-- identifiers substituted once at start; every value is a bind parameter.

-- name: lock_migrations
SELECT pg_advisory_xact_lock(?)

-- The schema only when it is missing: CREATE SCHEMA needs the CREATE privilege on the database even with IF NOT
-- EXISTS, which the owner of a schema an administrator made for it does not have (least-privilege.md).
-- name: create_schema
DO $$ BEGIN
  IF to_regnamespace('${schema}') IS NULL THEN CREATE SCHEMA ${schema}; END IF;
END $$

-- name: create_version_table
CREATE TABLE IF NOT EXISTS ${schema}.${p}schema_version (
  version      integer      PRIMARY KEY,
  description  text         NOT NULL,
  applied_at   timestamptz  NOT NULL DEFAULT now()
)

-- When the schema was first migrated, to the microsecond: a read replica must show the same.
-- name: schema_fingerprint
SELECT CAST(extract(epoch FROM applied_at) * 1000000 AS bigint) FROM ${schema}.${p}schema_version WHERE version = 1

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
INSERT INTO ${schema}.${p}topic (namespace_id, name, partitions, sequencing) VALUES (?, ?, ?, ?)
ON CONFLICT (namespace_id, name) DO NOTHING
RETURNING id

-- name: insert_partitions
INSERT INTO ${schema}.${p}partition (topic_id, partition)
SELECT ?, g FROM generate_series(0, ? - 1) AS g

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

-- name: insert_subscription
INSERT INTO ${schema}.${p}subscription (name, start_kind, start_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO NOTHING
RETURNING id

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

-- Rewinding a subscription (Admin.rewind; its group has no live consumers): every cursor moves to the start
-- position, computed as at creation (insert_cursors_*), in one transaction with unpark_after_cursors.
-- name: rewind_cursors_earliest
UPDATE ${schema}.${p}cursor SET position = 0, updated_at = now() WHERE subscription_id = ?

-- name: rewind_cursors_latest
UPDATE ${schema}.${p}cursor c SET position = p.last_seq, updated_at = now()
  FROM ${schema}.${p}partition p
 WHERE c.subscription_id = ? AND p.topic_id = c.topic_id AND p.partition = c.partition

-- Parameters: the timestamp, then the subscription.
-- name: rewind_cursors_at
UPDATE ${schema}.${p}cursor c
   SET position = coalesce((SELECT min(l.seq) - 1 FROM ${schema}.${p}log l
                             WHERE l.topic_id = c.topic_id AND l.partition = c.partition AND l.created_at >= ?),
                           p.last_seq),
       updated_at = now()
  FROM ${schema}.${p}partition p
 WHERE c.subscription_id = ? AND p.topic_id = c.topic_id AND p.partition = c.partition

-- Parked events (retries, waiting, dead letters) after the new positions go: the rewind delivers them again.
-- name: seek_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = now()
 WHERE subscription_id = ? AND topic_id = ? AND partition = ?

-- name: unpark_after_cursors
DELETE FROM ${schema}.${p}parked k
 USING ${schema}.${p}cursor c
 WHERE k.subscription_id = ? AND c.subscription_id = k.subscription_id AND c.topic_id = k.topic_id
   AND c.partition = k.partition AND k.seq > c.position

-- name: lag
SELECT n.path, t.name, c.partition, c.position, p.last_seq
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE c.subscription_id = ?
 ORDER BY n.path, t.name, c.partition

-- Like lag, plus when the first event past the cursor was published (one primary-key probe per partition
-- with a backlog; none for a partition that is caught up).
-- name: lag_with_age
SELECT n.path, t.name, c.partition, c.position, p.last_seq,
       CASE WHEN p.last_seq > c.position THEN
         (SELECT l.created_at FROM ${schema}.${p}log l
           WHERE l.topic_id = c.topic_id AND l.partition = c.partition AND l.seq > c.position
           ORDER BY l.seq LIMIT 1)
       END
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE c.subscription_id = ?
 ORDER BY n.path, t.name, c.partition

-- lag_with_age of every subscription at once, for metrics collectors.
-- name: lag_all
SELECT s.name, n.path, t.name, c.partition, c.position, p.last_seq,
       CASE WHEN p.last_seq > c.position THEN
         (SELECT l.created_at FROM ${schema}.${p}log l
           WHERE l.topic_id = c.topic_id AND l.partition = c.partition AND l.seq > c.position
           ORDER BY l.seq LIMIT 1)
       END
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}subscription s ON s.id = c.subscription_id
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 ORDER BY s.name, n.path, t.name, c.partition

-- Rows waiting for the sequencer, and when the oldest (lowest id, found through the primary key) was written.
-- name: outbox_backlog
SELECT (SELECT count(*) FROM ${schema}.${p}outbox),
       (SELECT o.created_at FROM ${schema}.${p}outbox o ORDER BY o.id LIMIT 1)

-- name: append_one
INSERT INTO ${schema}.${p}outbox
  (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers, deliver_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)

-- name: append_many
INSERT INTO ${schema}.${p}outbox
  (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers, deliver_at)
SELECT * FROM unnest(?::uuid[], ?::bigint[], ?::integer[], ?::text[], ?::text[], ?::text[], ?::text[],
                     ?::bytea[], ?::jsonb[], ?::timestamptz[])

-- Returns the keys it inserted: a key that was there before belongs to an earlier publish, even one of
-- the same event id (published again after a commit whose answer was lost).
-- name: claim_idempotency_keys
INSERT INTO ${schema}.${p}idempotency (topic_id, idempotency_key, event_id)
SELECT * FROM unnest(?::bigint[], ?::text[], ?::uuid[])
ON CONFLICT DO NOTHING
RETURNING topic_id, idempotency_key

-- name: idempotency_owners
SELECT i.topic_id, i.idempotency_key, i.event_id
  FROM ${schema}.${p}idempotency i
  JOIN unnest(?::bigint[], ?::text[]) AS k(topic_id, idempotency_key)
    ON i.topic_id = k.topic_id AND i.idempotency_key = k.idempotency_key

-- name: notify
SELECT pg_notify(?, ?)

-- A NOTIFY in a transaction of its own (new heads of IN_TRANSACTION topics). A transaction that notifies holds
-- the server's notification lock until its commit is done; waiting for the disk there would serialise every
-- announcement (and every other notifying transaction) behind a flush. A notification lost in a crash costs
-- nothing: listeners re-check everything when they reconnect.
-- name: announce
SELECT set_config('synchronous_commit', 'off', true), pg_notify(?, ?)

-- Takes the lease when free or expired; renews it when already ours. The epoch counts changes of owner.
-- It also says whether the outbox holds anything, so an idle sequencer needs this one statement per poll
-- (through the primary key: EXISTS over the table was a scan of every page, deleted rows included).
-- SKIP LOCKED: while the leader is inside a sequencer transaction the row is locked; a standby must not
-- queue behind it (a frozen leader would hold it up for good), it simply is "not acquired" this time.
-- name: acquire_sequencer
UPDATE ${schema}.${p}sequencer_lease
   SET epoch = CASE WHEN owner IS DISTINCT FROM ? THEN epoch + 1 ELSE epoch END,
       owner = ?,
       expires_at = now() + make_interval(secs => ?)
 WHERE name = (SELECT name FROM ${schema}.${p}sequencer_lease
                WHERE name = 'sequencer' AND (owner = ? OR owner IS NULL OR expires_at < now())
                FOR UPDATE SKIP LOCKED)
RETURNING (SELECT id FROM ${schema}.${p}outbox ORDER BY id LIMIT 1) IS NOT NULL

-- name: release_sequencer
UPDATE ${schema}.${p}sequencer_lease SET owner = NULL, expires_at = '-infinity'
 WHERE name = 'sequencer' AND owner = ?

-- First statement of every sequencer transaction: proves and renews the lease, and holds its row lock until
-- commit, so sequencer transactions never overlap even while a lease changes hands. The commit need not wait
-- for the disk: a later synchronous commit (a cursor move) flushes it first, and if it is lost in a crash the
-- outbox rows come back and are sequenced again (see docs/architecture.md).
-- A leader frozen mid-transaction (SIGSTOP, a long GC pause) must not keep the lease row locked: the server
-- ends a transaction left idle for longer than the lease time.
-- name: lock_sequencer
UPDATE ${schema}.${p}sequencer_lease
   SET expires_at = now() + make_interval(secs => ?)
 WHERE name = 'sequencer' AND owner = ?
RETURNING set_config('synchronous_commit', 'off', true),
          set_config('idle_in_transaction_session_timeout', ?, true)

-- The whole sequencer batch in one statement and one transaction (run in auto-commit; the statement is the
-- function of V9__kept_plans.sql): renew the lease
-- (its row lock keeps sequencer transactions from overlapping; a lost lease takes nothing), take the
-- oldest outbox rows (up to the first one without a partition, unless the last parameter says the Java
-- partitioner is the default, which the statement then applies itself), number them per partition, advance each
-- partition's last sequence (an UPDATE re-reads the newest row version, so the numbers continue the
-- previous batch even though this statement's snapshot is older), append them to the log and notify.
-- The commit is asynchronous: see docs/architecture.md. Returns one summary row (kind 0): whether the
-- lease is ours, how many events moved, and the new heads; when the sixth parameter is true, also one row
-- per appended event (kind 1), which the engine hands to consumers in the same process.
-- name: sequence_batch
SELECT * FROM ${schema}.${p}sequence_batch(?, ?, ?, ?, ?, ?, ?)

-- By primary key (= ANY of an array): IN (subquery) was planned as a hash join over the whole outbox heap.
-- name: take_outbox
DELETE FROM ${schema}.${p}outbox
 WHERE id = ANY (ARRAY(SELECT id FROM ${schema}.${p}outbox ORDER BY id LIMIT ?))
RETURNING id, event_id, topic_id, partition, event_key, event_type, source, content_type, payload,
          headers::text, created_at, deliver_at

-- name: advance_partitions
UPDATE ${schema}.${p}partition p
   SET last_seq = p.last_seq + v.n
  FROM unnest(?::bigint[], ?::integer[], ?::bigint[]) AS v(topic_id, partition, n)
 WHERE p.topic_id = v.topic_id AND p.partition = v.partition
RETURNING p.topic_id, p.partition, p.last_seq

-- name: append_log
INSERT INTO ${schema}.${p}log
  (topic_id, partition, seq, event_id, event_key, event_type, source, content_type, payload, headers,
   created_at, deliver_at)
SELECT * FROM unnest(?::bigint[], ?::integer[], ?::bigint[], ?::uuid[], ?::text[], ?::text[], ?::text[],
                     ?::text[], ?::bytea[], ?::jsonb[], ?::timestamptz[], ?::timestamptz[])

-- name: backlogged
SELECT c.topic_id, c.partition, p.last_seq,
       EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                WHERE k.subscription_id = c.subscription_id AND k.topic_id = c.topic_id
                  AND k.partition = c.partition AND k.state <> 'DEAD' AND k.next_attempt_at <= now())
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.partition = c.partition
 WHERE c.subscription_id = ?
   AND (p.last_seq > c.position
        OR EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                    WHERE k.subscription_id = c.subscription_id AND k.topic_id = c.topic_id
                      AND k.partition = c.partition AND k.state <> 'DEAD' AND k.next_attempt_at <= now()))

-- Reads by the gap-free per-partition sequence, never by an auto-increment id.
-- name: read
SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers::text, created_at,
       deliver_at
  FROM ${schema}.${p}log
 WHERE topic_id = ? AND partition = ? AND seq > ?
 ORDER BY seq
 LIMIT ?

-- A transactional handler's settlement, in its transaction: the compare-and-set of commit_cursor, which locks
-- the cursor row, committed synchronously with the application's writes.
-- name: settle_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = now()
 WHERE subscription_id = ? AND topic_id = ? AND partition = ? AND epoch = ? AND position = ?

-- A plain handler's progress commits asynchronously: losing it in a server crash only delivers those
-- events again (at least once), and any later synchronous commit flushes it first (WAL order), so a
-- retention delete that relied on it can never outlive it. Saves an fsync per batch. The move is a
-- compare-and-set on the position the consumer left: after a crash that lost such commits the consumer
-- must go back to the stored cursor, not write its in-memory position over it (see docs/architecture.md).
-- name: commit_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = now()
 WHERE subscription_id = ? AND topic_id = ? AND partition = ? AND epoch = ? AND position = ?
RETURNING set_config('synchronous_commit', 'off', true)

-- Why a cursor move matched no row: another epoch (fenced) or another position (lost commits).
-- name: cursor_epoch
SELECT epoch FROM ${schema}.${p}cursor WHERE subscription_id = ? AND topic_id = ? AND partition = ?

-- Several cursor moves of one subscription in one statement (a consumer's group commit, see CursorCommitter):
-- each move is commit_cursor, or, where first_seq is not 0, moves the cursor only if the log holds exactly the
-- handed-over events first_seq..last_seq with the ids of the last array from first_id on (a database crash
-- that lost the sequencer's asynchronous commit would have changed them; a primary-key range scan). Moves stand
-- alone: a fenced one or one whose events the log no longer holds changes nothing and does not stop the others.
-- Returns per move, in input order: whether the log held its events, whether the cursor moved, and whether the
-- stored epoch is still the move's (not moved with the same epoch: the cursor stands elsewhere, lost commits;
-- another epoch: fenced). The SQL is the function of V9__kept_plans.sql. Settlements with
-- parks run it too, in the transaction that then writes the parks of the moves that committed.
-- name: commit_cursors
SELECT * FROM ${schema}.${p}commit_cursors_across(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)

-- Lease epochs are copied onto the cursor; only a newer epoch may replace an older one.
-- name: fence_cursors
UPDATE ${schema}.${p}cursor c
   SET epoch = v.epoch, owner = ?, updated_at = now()
  FROM unnest(?::bigint[], ?::integer[], ?::bigint[]) AS v(topic_id, partition, epoch)
 WHERE c.subscription_id = ? AND c.topic_id = v.topic_id AND c.partition = v.partition
   AND c.epoch < v.epoch
RETURNING c.topic_id, c.partition, c.position

-- Many members' heartbeats in one write (a server renewing the members that wait on it); an expired member is
-- not brought back.
-- name: renew_members
UPDATE ${schema}.${p}member SET heartbeat_at = now(), expires_at = now() + make_interval(secs => ?)
 WHERE group_name = ? AND member_id = ANY (?::text[]) AND expires_at > now()

-- The group's live members, for operator actions that need an idle group (Admin.rewind).
-- name: live_members
SELECT member_id FROM ${schema}.${p}member WHERE group_name = ? AND expires_at > now() ORDER BY member_id

-- ---------------------------------------------------------------- consumer-group coordination
-- One round trip per check-in: the heartbeat upsert runs even though the query does not read it.
-- name: check_in
WITH heartbeat AS (
  INSERT INTO ${schema}.${p}member (group_name, member_id, weight, heartbeat_at, expires_at, status)
  VALUES (?, ?, ?, now(), now() + make_interval(secs => ?), ?)
  ON CONFLICT (group_name, member_id) DO UPDATE
     SET weight = EXCLUDED.weight, heartbeat_at = EXCLUDED.heartbeat_at, expires_at = EXCLUDED.expires_at,
         status = EXCLUDED.status
  RETURNING member_id
)
SELECT 'm' AS kind, member_id AS who, weight, NULL::bigint AS topic_id, NULL::integer AS partition,
       NULL::bigint AS epoch, NULL::boolean AS releasing, NULL::timestamptz AS since, now() AS now
  FROM ${schema}.${p}member WHERE group_name = ? AND expires_at > now()
UNION ALL
SELECT 'l', owner, NULL, topic_id, partition, epoch, releasing, since, now()
  FROM ${schema}.${p}lease WHERE group_name = ? AND owner IS NOT NULL
UNION ALL
-- A stamp of the group's policy rows, so members re-read the policy only when it changed.
SELECT 'p', NULL, NULL, (SELECT coalesce(sum(hashtext(gp::text)), 0)
                           FROM ${schema}.${p}group_policy gp WHERE gp.group_name IN (?, '')),
       NULL, NULL, NULL, NULL, now()

-- Compare-and-set on "nobody holds it": a held row is not updated and not returned. A first lease of a
-- partition starts its epoch at the database clock in microseconds.
-- name: acquire_leases
INSERT INTO ${schema}.${p}lease AS l (group_name, topic_id, partition, owner, epoch, releasing, since)
SELECT ?, v.topic_id, v.partition, ?, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, false, now()
  FROM unnest(?::bigint[], ?::integer[]) AS v(topic_id, partition)
 ORDER BY v.topic_id, v.partition -- every lease statement locks rows in key order: no deadlocks
ON CONFLICT (group_name, topic_id, partition) DO UPDATE
   SET owner = EXCLUDED.owner, epoch = l.epoch + 1, releasing = false, since = now()
 WHERE l.owner IS NULL
RETURNING l.topic_id, l.partition, l.epoch

-- name: mark_releasing
UPDATE ${schema}.${p}lease SET releasing = true, since = now()
 WHERE group_name = ? AND topic_id = ? AND partition = ? AND owner = ? AND epoch = ?

-- name: release_lease
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = false
 WHERE group_name = ? AND topic_id = ? AND partition = ? AND owner = ? AND epoch = ?

-- name: leave_member
DELETE FROM ${schema}.${p}member WHERE group_name = ? AND member_id = ?

-- name: leave_leases
UPDATE ${schema}.${p}lease u SET owner = NULL, releasing = false
  FROM (SELECT group_name, topic_id, partition FROM ${schema}.${p}lease
         WHERE group_name = ? AND owner = ? ORDER BY topic_id, partition FOR UPDATE) s
 WHERE u.group_name = s.group_name AND u.topic_id = s.topic_id AND u.partition = s.partition

-- Frees leases of members not in the live list and RELEASING leases past the grace period; forgets members
-- dead for an hour.
-- name: forget_members
DELETE FROM ${schema}.${p}member WHERE group_name = ? AND expires_at < now() - interval '1 hour'

-- name: reclaim_leases
UPDATE ${schema}.${p}lease u SET owner = NULL, releasing = false
  FROM (SELECT group_name, topic_id, partition FROM ${schema}.${p}lease
         WHERE group_name = ? AND owner IS NOT NULL
           AND (owner <> ALL (?::text[]) OR (releasing AND since < now() - make_interval(secs => ?)))
         ORDER BY topic_id, partition
           FOR UPDATE) s
 WHERE u.group_name = s.group_name AND u.topic_id = s.topic_id AND u.partition = s.partition

-- name: force_release
UPDATE ${schema}.${p}lease u SET owner = NULL, releasing = false
  FROM (SELECT l.group_name, l.topic_id, l.partition
          FROM ${schema}.${p}lease l JOIN unnest(?::bigint[], ?::integer[]) AS v(topic_id, partition)
            ON l.topic_id = v.topic_id AND l.partition = v.partition
         WHERE l.group_name = ? AND l.owner IS NOT NULL
         ORDER BY l.topic_id, l.partition FOR UPDATE OF l) s
 WHERE u.group_name = s.group_name AND u.topic_id = s.topic_id AND u.partition = s.partition

-- The group's own row sorts before the default ('').
-- name: group_policy
SELECT check_in_rate, min_check_in_ms, deadline_multiplier, slack, release_grace_ms, idle_release_ms,
       batch_size, max_check_in_ms, max_members
  FROM ${schema}.${p}group_policy WHERE group_name IN (?, '')
 ORDER BY group_name DESC LIMIT 1

-- name: upsert_group_policy
INSERT INTO ${schema}.${p}group_policy (group_name, check_in_rate, min_check_in_ms, deadline_multiplier,
                                        slack, release_grace_ms, idle_release_ms, batch_size, max_check_in_ms, max_members)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (group_name) DO UPDATE
   SET check_in_rate = EXCLUDED.check_in_rate, min_check_in_ms = EXCLUDED.min_check_in_ms,
       deadline_multiplier = EXCLUDED.deadline_multiplier, slack = EXCLUDED.slack,
       release_grace_ms = EXCLUDED.release_grace_ms, idle_release_ms = EXCLUDED.idle_release_ms,
       batch_size = EXCLUDED.batch_size, max_check_in_ms = EXCLUDED.max_check_in_ms,
       max_members = EXCLUDED.max_members, updated_at = now()

-- name: delete_group_policy
DELETE FROM ${schema}.${p}group_policy WHERE group_name = ?

-- ---------------------------------------------------------------- parked events (retries, dead letters)
-- name: park
INSERT INTO ${schema}.${p}parked
  (subscription_id, topic_id, partition, seq, event_id, event_key, event_type, state, attempts,
   next_attempt_at, last_error, first_failed_at, last_failed_at, dead_at)
SELECT ?, ?, ?, v.seq, v.event_id, v.event_key, v.event_type, v.state, v.attempts, v.next_attempt_at,
       v.last_error,
       CASE WHEN v.state <> 'WAITING' THEN now() END,
       CASE WHEN v.state <> 'WAITING' THEN now() END,
       CASE WHEN v.state = 'DEAD' THEN now() END
  FROM unnest(?::bigint[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::integer[], ?::timestamptz[], ?::text[])
       AS v(seq, event_id, event_key, event_type, state, attempts, next_attempt_at, last_error)
ON CONFLICT DO NOTHING

-- The head of each key: its oldest parked event that still counts (dead ones count only when they block).
-- Keyless events are each their own head.
-- name: parked_heads
SELECT DISTINCT ON (coalesce('k:' || event_key, 's:' || seq)) event_key, state, next_attempt_at
  FROM ${schema}.${p}parked
 WHERE subscription_id = ? AND topic_id = ? AND partition = ? AND (state <> 'DEAD' OR ?)
 ORDER BY coalesce('k:' || event_key, 's:' || seq), seq

-- The due heads are picked (and limited) first, then each is looked up in the log by its key: a
-- generic plan must never drive the join from the log, whose partition can hold millions of rows.
-- name: due_parked
WITH heads AS MATERIALIZED (
  SELECT DISTINCT ON (coalesce('k:' || event_key, 's:' || seq))
         topic_id, partition, seq, state, attempts, next_attempt_at, first_failed_at
    FROM ${schema}.${p}parked
   WHERE subscription_id = ? AND topic_id = ? AND partition = ? AND (state <> 'DEAD' OR ?)
   ORDER BY coalesce('k:' || event_key, 's:' || seq), seq
), due AS MATERIALIZED (
  SELECT * FROM heads WHERE state <> 'DEAD' AND next_attempt_at <= ? ORDER BY seq LIMIT ?
)
SELECT l.seq, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers::text,
       l.created_at, h.attempts, h.first_failed_at, l.deliver_at
  FROM due h
  CROSS JOIN LATERAL (SELECT * FROM ${schema}.${p}log x
                       WHERE x.topic_id = h.topic_id AND x.partition = h.partition AND x.seq = h.seq) l
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
 WHERE subscription_id = ? AND topic_id = ? AND partition = ? AND seq = ?

-- name: parked_retry
UPDATE ${schema}.${p}parked k
   SET state = ?, attempts = ?, next_attempt_at = coalesce(?, k.next_attempt_at), last_error = ?,
       first_failed_at = coalesce(k.first_failed_at, now()), last_failed_at = now(),
       dead_at = CASE WHEN ? = 'DEAD' THEN now() END
 WHERE k.subscription_id = ? AND k.topic_id = ? AND k.partition = ? AND k.seq = ?
   AND EXISTS (SELECT 1 FROM ${schema}.${p}cursor c
                WHERE c.subscription_id = k.subscription_id AND c.topic_id = k.topic_id
                  AND c.partition = k.partition AND c.epoch = ?)

-- Dead-letter selection shared by list, redrive and discard: every filter is an optional bound parameter.
-- name: dead_letters
SELECT k.topic_id, k.partition, k.seq, k.attempts, k.last_error, k.first_failed_at, k.dead_at, n.path, t.name,
       l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers::text, l.created_at,
       l.deliver_at
  FROM ${schema}.${p}parked k
  JOIN ${schema}.${p}log l ON l.topic_id = k.topic_id AND l.partition = k.partition AND l.seq = k.seq
  JOIN ${schema}.${p}topic t ON t.id = k.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE k.subscription_id = ? AND k.state = 'DEAD'
   AND (?::bigint IS NULL OR k.topic_id = ?)
   AND (?::text IS NULL OR k.event_type = ?)
   AND (?::text IS NULL OR k.event_key = ?)
   AND (?::uuid IS NULL OR k.event_id = ?)
   AND (?::text IS NULL OR strpos(k.last_error, ?) > 0)
   AND (?::timestamptz IS NULL OR k.dead_at < ?)
   AND (?::timestamptz IS NULL OR k.dead_at > ?)
   AND (?::bigint IS NULL OR (k.topic_id, k.partition, k.seq) > (?::bigint, ?::integer, ?::bigint))
 ORDER BY k.topic_id, k.partition, k.seq
 LIMIT ?

-- Dead letters grouped by the first 200 characters of their last error (DeadLetterReason.MAX_LENGTH).
-- name: dead_letter_reasons
SELECT r.reason, count(*), min(r.dead_at), max(r.dead_at)
  FROM (SELECT COALESCE(left(k.last_error, 200), '') AS reason, k.dead_at
          FROM ${schema}.${p}parked k
         WHERE k.subscription_id = ? AND k.state = 'DEAD') r
 GROUP BY r.reason
 ORDER BY count(*) DESC, r.reason
 LIMIT ?

-- name: redrive_dead
UPDATE ${schema}.${p}parked k
   SET state = 'RETRY', attempts = 0, next_attempt_at = now(), dead_at = NULL
 WHERE (k.subscription_id, k.topic_id, k.partition, k.seq) IN (
   SELECT d.subscription_id, d.topic_id, d.partition, d.seq FROM ${schema}.${p}parked d
    WHERE d.subscription_id = ? AND d.state = 'DEAD'
      AND (?::bigint IS NULL OR d.topic_id = ?)
      AND (?::text IS NULL OR d.event_type = ?)
      AND (?::text IS NULL OR d.event_key = ?)
      AND (?::uuid IS NULL OR d.event_id = ?)
      AND (?::text IS NULL OR strpos(d.last_error, ?) > 0)
      AND (?::timestamptz IS NULL OR d.dead_at < ?)
      AND (?::timestamptz IS NULL OR d.dead_at > ?)
      AND (?::bigint IS NULL OR (d.topic_id, d.partition, d.seq) > (?::bigint, ?::integer, ?::bigint))
    ORDER BY d.topic_id, d.partition, d.seq
    LIMIT ?)

-- name: discard_dead
DELETE FROM ${schema}.${p}parked k
 WHERE (k.subscription_id, k.topic_id, k.partition, k.seq) IN (
   SELECT d.subscription_id, d.topic_id, d.partition, d.seq FROM ${schema}.${p}parked d
    WHERE d.subscription_id = ? AND d.state = 'DEAD'
      AND (?::bigint IS NULL OR d.topic_id = ?)
      AND (?::text IS NULL OR d.event_type = ?)
      AND (?::text IS NULL OR d.event_key = ?)
      AND (?::uuid IS NULL OR d.event_id = ?)
      AND (?::text IS NULL OR strpos(d.last_error, ?) > 0)
      AND (?::timestamptz IS NULL OR d.dead_at < ?)
      AND (?::timestamptz IS NULL OR d.dead_at > ?)
      AND (?::bigint IS NULL OR (d.topic_id, d.partition, d.seq) > (?::bigint, ?::integer, ?::bigint))
    ORDER BY d.topic_id, d.partition, d.seq
    LIMIT ?)

-- ---------------------------------------------------------------- inbox
-- Inside the handler's transaction: true when the key is new (the handler runs), false for a duplicate.
-- name: inbox_claim
INSERT INTO ${schema}.${p}inbox (subscription_id, dedup_key) VALUES (?, ?) ON CONFLICT DO NOTHING

-- name: inbox_seen
SELECT EXISTS (SELECT 1 FROM ${schema}.${p}inbox WHERE subscription_id = ? AND dedup_key = ?)

-- ---------------------------------------------------------------- retention
-- Subscriptions whose group has a live member now (Admin's lastActive; retention's abandonAfter).
-- name: mark_active
UPDATE ${schema}.${p}subscription SET active_at = now() WHERE id = ?

-- name: set_retention
UPDATE ${schema}.${p}topic SET retention_ms = ?, retention_keep_unconsumed = ?,
       retention_max_events = NULLIF(?::bigint, 0), retention_abandon_ms = ?
 WHERE id = ?

-- Events more than retention_max_events behind their partition's newest, in batches: a primary-key range
-- per partition. The same exceptions as purge_log.
-- name: purge_log_by_count
DELETE FROM ${schema}.${p}log l
 USING (SELECT o.topic_id, o.partition, o.seq
          FROM ${schema}.${p}topic t
          JOIN ${schema}.${p}partition pp ON pp.topic_id = t.id
          JOIN ${schema}.${p}log o
            ON o.topic_id = pp.topic_id AND o.partition = pp.partition
           AND o.seq <= pp.last_seq - t.retention_max_events
         WHERE t.retention_max_events IS NOT NULL
           AND (NOT t.retention_keep_unconsumed
                OR o.seq <= (SELECT coalesce(min(c.position), o.seq)
                               FROM ${schema}.${p}cursor c
                               JOIN ${schema}.${p}subscription s ON s.id = c.subscription_id
                              WHERE c.topic_id = o.topic_id AND c.partition = o.partition
                                AND s.active_at >= now() - t.retention_abandon_ms * interval '1 millisecond'))
           AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                            WHERE k.topic_id = o.topic_id AND k.partition = o.partition AND k.seq = o.seq)
         LIMIT ?) d
 WHERE l.topic_id = d.topic_id AND l.partition = d.partition AND l.seq = d.seq

-- Old events of topics with a retention, in batches. Events still parked by a subscription stay; with
-- keep_unconsumed, so do events the cursor of some subscription not yet abandoned (a live consumer within
-- retention_abandon_ms) has not passed. A topic whose retention is at least the first parameter (ms) is left
-- to whole-segment drops (PostgresLogSegments): its events are deleted here only from a segment that ended the
-- second parameter (ms) past their retention and so should have gone, but something holds it back.
-- name: purge_log
DELETE FROM ${schema}.${p}log l
 USING (SELECT o.topic_id, o.partition, o.seq
          FROM ${schema}.${p}log o
          JOIN ${schema}.${p}topic t ON t.id = o.topic_id
         WHERE t.retention_ms IS NOT NULL
           AND o.created_at < now() - t.retention_ms * interval '1 millisecond'
           AND (t.retention_ms < ?::bigint
                OR EXISTS (SELECT 1 FROM ${schema}.${p}log_segment g
                            WHERE g.upper_bound < now() - (t.retention_ms + ?::bigint) * interval '1 millisecond'
                              AND o.sequenced_at < g.upper_bound
                              AND (g.lower_bound IS NULL OR o.sequenced_at >= g.lower_bound)))
           AND (NOT t.retention_keep_unconsumed
                OR o.seq <= (SELECT coalesce(min(c.position), o.seq)
                               FROM ${schema}.${p}cursor c
                               JOIN ${schema}.${p}subscription s ON s.id = c.subscription_id
                              WHERE c.topic_id = o.topic_id AND c.partition = o.partition
                                AND s.active_at >= now() - t.retention_abandon_ms * interval '1 millisecond'))
           AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                            WHERE k.topic_id = o.topic_id AND k.partition = o.partition AND k.seq = o.seq)
         LIMIT ?) d
 WHERE l.topic_id = d.topic_id AND l.partition = d.partition AND l.seq = d.seq

-- ---------------------------------------------------------------- log segments (V15__log_segments.sql)
-- The segments oldest first, the database clock, the longest retention by age, whether a seal is left, and
-- the shortest retention by age.
-- name: log_layout
SELECT s.number, s.lower_bound, s.upper_bound, now(),
       (SELECT coalesce(max(retention_ms), 0) FROM ${schema}.${p}topic),
       EXISTS (SELECT 1 FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace
                WHERE n.nspname = '${schema}' AND k.conname = '${p}log_seal'),
       (SELECT coalesce(min(retention_ms), 0) FROM ${schema}.${p}topic)
  FROM ${schema}.${p}log_segment s
 ORDER BY s.number

-- Rows in the open segment, counted up to a limit (the parent's partition pruning reads only that segment).
-- name: log_open_rows
SELECT count(*) FROM (SELECT 1 FROM ${schema}.${p}log
                       WHERE sequenced_at >= coalesce(?::timestamptz, '-infinity'::timestamptz) LIMIT ?) x

-- name: log_split
SELECT ${schema}.${p}log_split(?::timestamptz, ?)

-- name: log_seal
SELECT ${schema}.${p}log_seal(?::timestamptz, ?)

-- name: log_seal_validate
SELECT ${schema}.${p}log_seal_validate(?)

-- The planner's estimate of a segment's rows (0 before its first ANALYZE): how long sealing it may take.
-- name: log_segment_rows_estimate
SELECT coalesce((SELECT greatest(c.reltuples, 0)::bigint FROM pg_class c WHERE c.oid = to_regclass(?)), 0)

-- name: log_unseal
SELECT ${schema}.${p}log_unseal(?)

-- name: log_segment_expired
SELECT ${schema}.${p}log_segment_expired(?)

-- name: log_drop_segment
SELECT ${schema}.${p}log_drop_segment(?, ?)

-- What a retention run has to do, in one statement, so an idle deployment pays one query per run:
-- whether any topic has a retention, whether old inbox entries, dead letters and idempotency keys exist,
-- whether autovacuum is effectively off for Boxline's tables, and how many dead tuples they hold.
-- name: maintenance_needed
SELECT EXISTS (SELECT 1 FROM ${schema}.${p}topic
                WHERE retention_ms IS NOT NULL OR retention_max_events IS NOT NULL),
       EXISTS (SELECT 1 FROM ${schema}.${p}inbox WHERE handled_at < now() - make_interval(secs => ?)),
       EXISTS (SELECT 1 FROM ${schema}.${p}parked
                WHERE state = 'DEAD' AND dead_at < now() - make_interval(secs => ?)),
       EXISTS (SELECT 1 FROM ${schema}.${p}idempotency WHERE created_at < now() - make_interval(secs => ?)),
       NOT current_setting('autovacuum')::boolean
         OR EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = '${schema}' AND c.relname LIKE '${p}%'
                       AND 'autovacuum_enabled=false' = ANY (c.reloptions)),
       (SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables
         WHERE schemaname = '${schema}' AND relname LIKE '${p}%')

-- Off when the server's autovacuum is off or a Boxline table has it switched off.
-- name: autovacuum_on
SELECT current_setting('autovacuum')::boolean
       AND NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = '${schema}' AND c.relname LIKE '${p}%'
                          AND 'autovacuum_enabled=false' = ANY (c.reloptions))

-- Run by the retention loop only where autovacuum is off: without it every table with updates or
-- deletes grows without bound. Cheap when there is little to do (all-visible pages are skipped).
-- name: vacuum_hot_tables
VACUUM (ANALYZE) ${schema}.${p}outbox, ${schema}.${p}log, ${schema}.${p}partition, ${schema}.${p}cursor,
       ${schema}.${p}sequencer_lease, ${schema}.${p}member, ${schema}.${p}lease, ${schema}.${p}parked,
       ${schema}.${p}inbox, ${schema}.${p}idempotency

-- Run by the sequencer every few thousand events (PostgresOutboxVacuum): the index entries of
-- sequenced rows are only removed by a vacuum, and every batch scans the index from its start.
-- The oldest transaction of this database open longer than ? seconds that holds back the xmin horizon
-- (after an outbox vacuum; see PostgresOutboxVacuum). Other users' statements read as
-- '<insufficient privilege>' unless the user has pg_read_all_stats.
-- name: oldest_open_transaction
SELECT pid, coalesce(application_name, ''), coalesce(state, ''),
       extract(epoch FROM now() - xact_start)::double precision, left(coalesce(query, ''), 200)
  FROM pg_stat_activity
 WHERE datname = current_database() AND pid <> pg_backend_pid()
   AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)
   AND xact_start < now() - make_interval(secs => ?)
 ORDER BY xact_start
 LIMIT 1

-- name: vacuum_outbox
VACUUM (INDEX_CLEANUP ON, SKIP_LOCKED) ${schema}.${p}outbox

-- name: purge_inbox
DELETE FROM ${schema}.${p}inbox
 WHERE ctid IN (SELECT ctid FROM ${schema}.${p}inbox
                 WHERE handled_at < now() - make_interval(secs => ?) LIMIT ?)

-- name: purge_dead_letters
DELETE FROM ${schema}.${p}parked
 WHERE ctid IN (SELECT ctid FROM ${schema}.${p}parked
                 WHERE state = 'DEAD' AND dead_at < now() - make_interval(secs => ?) LIMIT ?)

-- name: purge_idempotency
DELETE FROM ${schema}.${p}idempotency
 WHERE ctid IN (SELECT ctid FROM ${schema}.${p}idempotency
                 WHERE created_at < now() - make_interval(secs => ?) LIMIT ?)

-- The last committed sequences of a range of one topic's partitions (no lock: IN_TRANSACTION producers hold
-- the rows while they run).
-- name: partition_heads
SELECT partition, last_seq FROM ${schema}.${p}partition WHERE topic_id = ? AND partition BETWEEN ? AND ?

-- Appends events of IN_TRANSACTION topics to the log in the caller's transaction (V10__in_transaction_sequencing.sql).
-- name: append_to_log
SELECT * FROM ${schema}.${p}append_to_log(?::bigint[], ?::integer[], ?::uuid[], ?::text[], ?::text[], ?::text[],
                                          ?::text[], ?::bytea[], ?::jsonb[], ?::timestamptz[], ?::timestamptz[])

-- Moves outbox rows whose topic or partition does not exist into outbox_rejected (the sequencer runs it
-- after a failed batch, so that such rows cannot stop sequencing). A full scan: it runs only then.
-- name: set_aside_unplaceable
WITH unplaceable AS (
  DELETE FROM ${schema}.${p}outbox o
   WHERE NOT EXISTS (SELECT 1 FROM ${schema}.${p}topic t WHERE t.id = o.topic_id)
      OR (o.partition IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}partition p
                           WHERE p.topic_id = o.topic_id AND p.partition = o.partition))
  RETURNING o.*)
INSERT INTO ${schema}.${p}outbox_rejected
SELECT u.*, 'its topic or partition does not exist', now() FROM unplaceable u

-- Operators: reading the log without a subscription (Admin); the rest is in common/queries.sql.

-- name: read_filtered
SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers::text, created_at,
       deliver_at
  FROM ${schema}.${p}log
 WHERE topic_id = ? AND partition = ? AND seq > ?
   AND (?::text IS NULL OR event_key = ?) AND (?::uuid IS NULL OR event_id = ?)
 ORDER BY seq
 LIMIT ?

-- name: group_view
SELECT 'm' AS kind, member_id AS who, weight, NULL::bigint AS topic_id, NULL::integer AS partition,
       NULL::bigint AS epoch, NULL::boolean AS releasing, heartbeat_at AS since, now() AS now,
       expires_at, status
  FROM ${schema}.${p}member WHERE group_name = ? AND expires_at > now()
UNION ALL
SELECT 'l', owner, NULL, topic_id, partition, epoch, releasing, since, now(), NULL, NULL
  FROM ${schema}.${p}lease WHERE group_name = ? AND owner IS NOT NULL

-- name: retrying
SELECT k.topic_id, k.partition, k.seq, k.attempts, k.last_error, k.first_failed_at, k.next_attempt_at, n.path,
       t.name, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers::text,
       l.created_at, l.deliver_at, k.state
  FROM ${schema}.${p}parked k
  JOIN ${schema}.${p}log l ON l.topic_id = k.topic_id AND l.partition = k.partition AND l.seq = k.seq
  JOIN ${schema}.${p}topic t ON t.id = k.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE k.subscription_id = ? AND k.state <> 'DEAD'
   AND (?::bigint IS NULL OR (k.topic_id, k.partition, k.seq) > (?::bigint, ?::integer, ?::bigint))
 ORDER BY k.topic_id, k.partition, k.seq
 LIMIT ?
