-- Named queries of the MariaDB / MySQL dialect. "-- name: x" starts query x. ${schema} and ${p} are validated
-- identifiers substituted once at start; every value is a bind parameter.
--
-- Times are BIGINT microseconds since the epoch (see V1__base.sql). "Now" on the server clock is written
--   (UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))
-- which does not depend on the session time zone (both parts come from the statement's start time).
-- Lists travel as one JSON array parameter read with JSON_TABLE (MariaDB 10.6+, MySQL 8.0.4+), the
-- counterpart of PostgreSQL's unnest; "STRAIGHT_JOIN" makes the list drive the join so that rows are
-- looked up (and locked) by primary key in list order, which the Java side sorts by key. "FORCE INDEX
-- (PRIMARY)" keeps them lookups: on a small table the optimizer otherwise scans it with a join buffer, and a
-- locking scan locks every row (in a REPEATABLE READ transaction until it ends), so producers of different
-- partitions would wait for each other.
-- Statements whose text ends in "VALUES (...)" are sent with that row group repeated once per row.

-- name: lock_migrations
SELECT GET_LOCK(?, 120)

-- name: unlock_migrations
SELECT RELEASE_LOCK(?)

-- name: create_version_table
CREATE TABLE IF NOT EXISTS ${schema}.${p}schema_version (
  version      INT           NOT NULL PRIMARY KEY,
  description  VARCHAR(255)  NOT NULL,
  applied_at   BIGINT        NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin

-- When the schema was first migrated, to the microsecond: a read replica must show the same.
-- name: schema_fingerprint
SELECT applied_at FROM ${schema}.${p}schema_version WHERE version = 1

-- name: current_version
SELECT COALESCE(MAX(version), 0) FROM ${schema}.${p}schema_version

-- name: record_version
INSERT INTO ${schema}.${p}schema_version (version, description, applied_at)
VALUES (?, ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

-- name: insert_namespace
INSERT IGNORE INTO ${schema}.${p}namespace (path, parent_id, created_at)
VALUES (?, ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

-- name: namespace_id
SELECT id FROM ${schema}.${p}namespace WHERE path = ?

-- The partition count is validated before; IGNORE only skips an existing (namespace, name).
-- name: insert_topic
INSERT IGNORE INTO ${schema}.${p}topic (namespace_id, name, partitions, sequencing, created_at)
VALUES (?, ?, ?, ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

-- The parameter is the JSON array [0, 1, ..., n - 1].
-- name: insert_partitions
INSERT INTO ${schema}.${p}partition (topic_id, `partition`, last_seq, seq_version)
SELECT ?, g.n, 0, 0 FROM JSON_TABLE(?, '$[*]' COLUMNS (n INT PATH '$')) g

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
INSERT IGNORE INTO ${schema}.${p}subscription (name, start_kind, start_at, created_at, active_at)
VALUES (?, ?, ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

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
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, `partition`, position, updated_at)
SELECT ?, topic_id, `partition`, 0, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
  FROM ${schema}.${p}partition WHERE topic_id = ?

-- name: insert_cursors_latest
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, `partition`, position, updated_at)
SELECT ?, topic_id, `partition`, last_seq, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
  FROM ${schema}.${p}partition WHERE topic_id = ?

-- Position just before the first event created at or after the timestamp (the last sequence if none).
-- name: insert_cursors_at
INSERT INTO ${schema}.${p}cursor (subscription_id, topic_id, `partition`, position, updated_at)
SELECT ?, p.topic_id, p.`partition`,
       COALESCE((SELECT MIN(l.seq) - 1 FROM ${schema}.${p}log l
                  WHERE l.topic_id = p.topic_id AND l.`partition` = p.`partition` AND l.created_at >= ?),
                p.last_seq),
       UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
  FROM ${schema}.${p}partition p WHERE p.topic_id = ?

-- Rewinding a subscription (Admin.rewind; its group has no live consumers): every cursor moves to the start
-- position, computed as at creation (insert_cursors_*), in one transaction with unpark_after_cursors.
-- name: rewind_cursors_earliest
UPDATE ${schema}.${p}cursor SET position = 0, updated_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE subscription_id = ?

-- name: rewind_cursors_latest
UPDATE ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.`partition` = c.`partition`
   SET c.position = p.last_seq, c.updated_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE c.subscription_id = ?

-- Parameters: the timestamp, then the subscription.
-- name: rewind_cursors_at
UPDATE ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.`partition` = c.`partition`
   SET c.position = COALESCE((SELECT MIN(l.seq) - 1 FROM ${schema}.${p}log l
                               WHERE l.topic_id = c.topic_id AND l.`partition` = c.`partition` AND l.created_at >= ?),
                             p.last_seq),
       c.updated_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE c.subscription_id = ?

-- Parked events (retries, waiting, dead letters) after the new positions go: the rewind delivers them again.
-- (Not DELETE alias FROM ... JOIN: MariaDB resolves a multi-table DELETE's alias in the default database.)
-- name: seek_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE subscription_id = ? AND topic_id = ? AND `partition` = ?

-- name: unpark_after_cursors
DELETE FROM ${schema}.${p}parked
 WHERE subscription_id = ?
   AND seq > (SELECT c.position FROM ${schema}.${p}cursor c
               WHERE c.subscription_id = ${schema}.${p}parked.subscription_id
                 AND c.topic_id = ${schema}.${p}parked.topic_id
                 AND c.`partition` = ${schema}.${p}parked.`partition`)

-- name: lag
SELECT n.path, t.name, c.`partition`, c.position, p.last_seq
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.`partition` = c.`partition`
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE c.subscription_id = ?
 ORDER BY n.path, t.name, c.`partition`

-- The lag and, where events wait, the creation time of the oldest unhandled one (by primary key).
-- name: lag_with_age
SELECT n.path, t.name, c.`partition`, c.position, p.last_seq,
       CASE WHEN p.last_seq > c.position THEN
         (SELECT l.created_at FROM ${schema}.${p}log l
           WHERE l.topic_id = c.topic_id AND l.`partition` = c.`partition` AND l.seq > c.position
           ORDER BY l.seq LIMIT 1)
       END
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.`partition` = c.`partition`
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE c.subscription_id = ?
 ORDER BY n.path, t.name, c.`partition`

-- name: lag_all
SELECT s.name, n.path, t.name, c.`partition`, c.position, p.last_seq,
       CASE WHEN p.last_seq > c.position THEN
         (SELECT l.created_at FROM ${schema}.${p}log l
           WHERE l.topic_id = c.topic_id AND l.`partition` = c.`partition` AND l.seq > c.position
           ORDER BY l.seq LIMIT 1)
       END
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}subscription s ON s.id = c.subscription_id
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.`partition` = c.`partition`
  JOIN ${schema}.${p}topic t ON t.id = c.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 ORDER BY s.name, n.path, t.name, c.`partition`

-- name: outbox_backlog
SELECT (SELECT COUNT(*) FROM ${schema}.${p}outbox),
       (SELECT o.created_at FROM ${schema}.${p}outbox o ORDER BY o.id LIMIT 1)

-- One multi-row INSERT per batch of records.
-- name: append
INSERT INTO ${schema}.${p}outbox
  (event_id, topic_id, `partition`, event_key, event_type, source, content_type, payload, headers, deliver_at,
   created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

-- key_hash is the SHA-256 of the key (hex), computed by the caller.
-- name: claim_idempotency_keys
INSERT IGNORE INTO ${schema}.${p}idempotency (topic_id, key_hash, idempotency_key, event_id, created_at)
VALUES (?, UNHEX(?), ?, ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

-- A locking read: it sees the newest committed owner even in an older REPEATABLE READ snapshot.
-- The same without locks: which keys were taken before this transaction claims any (a locking read
-- here would take gap locks that two transactions inserting keys deadlock on).
-- name: idempotency_owners_before
SELECT i.topic_id, LOWER(HEX(i.key_hash)), i.event_id
  FROM JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', h CHAR(64) PATH '$[1]')) k
  STRAIGHT_JOIN ${schema}.${p}idempotency i FORCE INDEX (PRIMARY) ON i.topic_id = k.topic_id AND i.key_hash = UNHEX(k.h)

-- name: idempotency_owners
SELECT i.topic_id, LOWER(HEX(i.key_hash)), i.event_id
  FROM JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', h CHAR(64) PATH '$[1]')) k
  STRAIGHT_JOIN ${schema}.${p}idempotency i FORCE INDEX (PRIMARY) ON i.topic_id = k.topic_id AND i.key_hash = UNHEX(k.h)
  LOCK IN SHARE MODE

-- ---------------------------------------------------------------- sequencer
-- The sequencer keeps one connection of its own (READ COMMITTED, auto-commit off). Taking or renewing the
-- lease is one transaction: a standby skips the lease row while the leader's transaction holds it (SKIP
-- LOCKED) instead of queueing behind it; the same statement tells whether the outbox holds anything.
-- name: try_sequencer
SELECT owner, EXISTS (SELECT 1 FROM ${schema}.${p}outbox)
  FROM ${schema}.${p}sequencer_lease
 WHERE name = 'sequencer'
   AND (owner = ? OR owner IS NULL OR expires_at < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))
   FOR UPDATE SKIP LOCKED

-- Takes (the epoch counts changes of owner) or renews the lease whose row try_sequencer locked.
-- name: take_sequencer
UPDATE ${schema}.${p}sequencer_lease
   SET epoch = IF(owner <=> ?, epoch, epoch + 1),
       owner = ?,
       expires_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) + ?
 WHERE name = 'sequencer'

-- name: release_sequencer
UPDATE ${schema}.${p}sequencer_lease SET owner = NULL, expires_at = 0
 WHERE name = 'sequencer' AND owner = ?

-- First statement of every sequencer transaction: proves and renews the lease, and holds its row lock
-- (an UPDATE locks like SELECT ... FOR UPDATE) until commit, so sequencer transactions never overlap even
-- while the lease changes hands. It also numbers the batch: LAST_INSERT_ID(expr) hands the new
-- log_version back with the statement's result, no second round trip.
-- name: lock_sequencer
UPDATE ${schema}.${p}sequencer_lease
   SET expires_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) + ?,
       log_version = LAST_INSERT_ID(log_version + 1)
 WHERE name = 'sequencer' AND owner = ?

-- name: last_insert_id
SELECT LAST_INSERT_ID()

-- A plain (non-locking) READ COMMITTED read sees only committed rows and never waits for a producer's
-- open transaction. Only the sequencer deletes outbox rows, and sequencer transactions are serialised.
-- name: take_outbox
SELECT id, topic_id, `partition`, event_key FROM ${schema}.${p}outbox ORDER BY id LIMIT ?

-- The same rows in full, when the sequencer hands the events to consumers in its own process.
-- name: take_outbox_events
SELECT id, topic_id, `partition`, event_key, event_id, event_type, source, content_type, payload, headers,
       created_at, deliver_at
  FROM ${schema}.${p}outbox ORDER BY id LIMIT ?

-- name: lock_partitions
SELECT p.topic_id, p.`partition`, p.last_seq
  FROM JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]')) v
  STRAIGHT_JOIN ${schema}.${p}partition p FORCE INDEX (PRIMARY) ON p.topic_id = v.topic_id AND p.`partition` = v.part
   FOR UPDATE

-- name: advance_partitions
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]',
                                     last_seq BIGINT PATH '$[2]')) v
  STRAIGHT_JOIN ${schema}.${p}partition p FORCE INDEX (PRIMARY) ON p.topic_id = v.topic_id AND p.`partition` = v.part
   SET p.last_seq = v.last_seq, p.seq_version = ?

-- The payloads move inside the server: the list carries only (outbox id, partition, sequence).
-- name: append_log
INSERT INTO ${schema}.${p}log
  (topic_id, `partition`, seq, event_id, event_key, event_type, source, content_type, payload, headers,
   created_at, sequenced_at, deliver_at)
SELECT o.topic_id, v.part, v.seq, o.event_id, o.event_key, o.event_type, o.source, o.content_type, o.payload,
       o.headers, o.created_at, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), o.deliver_at
  FROM JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT PATH '$[0]', part INT PATH '$[1]', seq BIGINT PATH '$[2]')) v
  STRAIGHT_JOIN ${schema}.${p}outbox o FORCE INDEX (PRIMARY) ON o.id = v.id

-- (Multi-table DELETE names its target without an alias: MariaDB resolves aliases there only in the
-- connection's default database, and Boxline never relies on one.)
-- name: delete_outbox
DELETE ${schema}.${p}outbox FROM JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT PATH '$[0]')) v
  STRAIGHT_JOIN ${schema}.${p}outbox FORCE INDEX (PRIMARY) ON ${schema}.${p}outbox.id = v.id

-- ---------------------------------------------------------------- wake-ups (no LISTEN/NOTIFY here)
-- The whole idle cost of the wake-up poll: one primary-key read.
-- name: poll_wakeups
SELECT log_version, wake_all, EXISTS (SELECT 1 FROM ${schema}.${p}outbox)
  FROM ${schema}.${p}sequencer_lease WHERE name = 'sequencer'

-- Heads of the partitions advanced by batches after the given one (index on seq_version).
-- name: changed_heads
SELECT topic_id, `partition`, last_seq, seq_version FROM ${schema}.${p}partition
 WHERE seq_version > ? ORDER BY seq_version LIMIT ?

-- Redrive asks every consumer to look at everything.
-- name: wake_all
UPDATE ${schema}.${p}sequencer_lease SET wake_all = wake_all + 1 WHERE name = 'sequencer'

-- ---------------------------------------------------------------- consume
-- name: backlogged
SELECT c.topic_id, c.`partition`, p.last_seq,
       EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                WHERE k.subscription_id = c.subscription_id AND k.topic_id = c.topic_id
                  AND k.`partition` = c.`partition` AND k.state <> 'DEAD'
                  AND k.next_attempt_at <= UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))
  FROM ${schema}.${p}cursor c
  JOIN ${schema}.${p}partition p ON p.topic_id = c.topic_id AND p.`partition` = c.`partition`
 WHERE c.subscription_id = ?
   AND (p.last_seq > c.position
        OR EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                    WHERE k.subscription_id = c.subscription_id AND k.topic_id = c.topic_id
                      AND k.`partition` = c.`partition` AND k.state <> 'DEAD'
                      AND k.next_attempt_at <= UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))))

-- Reads by the gap-free per-partition sequence, never by an auto-increment id.
-- name: read
SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers, created_at, deliver_at
  FROM ${schema}.${p}log
 WHERE topic_id = ? AND `partition` = ? AND seq > ?
 ORDER BY seq
 LIMIT ?

-- A transactional handler's settlement, in its transaction: the compare-and-set of commit_cursor, which locks
-- the cursor row, committed synchronously with the application's writes.
-- name: settle_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE subscription_id = ? AND topic_id = ? AND `partition` = ? AND epoch = ? AND position = ?

-- Compare-and-set on the epoch. The driver reports matched (not changed) rows, so 1 means "ours".
-- Compare-and-set on the position the consumer left, as on PostgreSQL.
-- name: commit_cursor
UPDATE ${schema}.${p}cursor SET position = ?, updated_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE subscription_id = ? AND topic_id = ? AND `partition` = ? AND epoch = ? AND position = ?

-- name: cursor_epoch
SELECT epoch FROM ${schema}.${p}cursor WHERE subscription_id = ? AND topic_id = ? AND `partition` = ?

-- Lease epochs are copied onto the cursor; only a newer epoch may replace an older one. Two statements in
-- one transaction (no UPDATE ... RETURNING): lock the cursors that are behind, in key order, then raise them.
-- name: fence_lock
SELECT c.topic_id, c.`partition`, c.position
  FROM JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]',
                                     epoch BIGINT PATH '$[2]')) v
  STRAIGHT_JOIN ${schema}.${p}cursor c FORCE INDEX (PRIMARY)
    ON c.subscription_id = ? AND c.topic_id = v.topic_id AND c.`partition` = v.part
 WHERE c.epoch < v.epoch
   FOR UPDATE

-- name: fence_cursors
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]',
                                     epoch BIGINT PATH '$[2]')) v
  STRAIGHT_JOIN ${schema}.${p}cursor c FORCE INDEX (PRIMARY)
    ON c.subscription_id = ? AND c.topic_id = v.topic_id AND c.`partition` = v.part
   SET c.epoch = v.epoch, c.owner = ?, c.updated_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE c.epoch < v.epoch

-- Many members' heartbeats in one write (a server renewing the members that wait on it); an expired member is
-- not brought back.
-- name: renew_members
UPDATE ${schema}.${p}member
   SET heartbeat_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)),
       expires_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) + ?
 WHERE group_name = ? AND JSON_CONTAINS(?, JSON_QUOTE(member_id))
   AND expires_at > UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))

-- ---------------------------------------------------------------- consumer-group coordination
-- The group's live members, for operator actions that need an idle group (Admin.rewind).
-- name: live_members
SELECT member_id FROM ${schema}.${p}member WHERE group_name = ? AND expires_at > UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) ORDER BY member_id

-- The group view and the member's heartbeat in one call: the procedure of V5__check_in_procedure.sql (H2 runs
-- them as two statements, check_in and heartbeat in its queries.sql).
-- name: check_in_call
CALL ${schema}.${p}check_in(?, ?, ?, ?, ?)

-- Lease rows outlive their owners; a partition's first row starts its epoch at the server clock in
-- microseconds. Run on its own (auto-commit) before acquire_lock, so that no transaction holds the shared
-- locks of a duplicate insert while it asks for exclusive ones.
-- name: create_leases
INSERT IGNORE INTO ${schema}.${p}lease (group_name, topic_id, `partition`, owner, epoch, releasing, since)
VALUES (?, ?, ?, NULL, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), FALSE,
        UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

-- Every lease statement locks rows in key order (the list is sorted): no deadlocks between members.
-- name: acquire_lock
SELECT l.topic_id, l.`partition`, l.owner, l.epoch
  FROM JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]')) v
  STRAIGHT_JOIN ${schema}.${p}lease l FORCE INDEX (PRIMARY)
    ON l.group_name = ? AND l.topic_id = v.topic_id AND l.`partition` = v.part
   FOR UPDATE

-- Compare-and-set on "nobody holds it", on the rows acquire_lock found free and still holds.
-- name: acquire_take
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]')) v
  STRAIGHT_JOIN ${schema}.${p}lease l FORCE INDEX (PRIMARY)
    ON l.group_name = ? AND l.topic_id = v.topic_id AND l.`partition` = v.part
   SET l.owner = ?, l.epoch = l.epoch + 1, l.releasing = FALSE,
       l.since = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE l.owner IS NULL

-- name: mark_releasing
UPDATE ${schema}.${p}lease SET releasing = TRUE, since = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE group_name = ? AND topic_id = ? AND `partition` = ? AND owner = ? AND epoch = ?

-- name: release_lease
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = FALSE
 WHERE group_name = ? AND topic_id = ? AND `partition` = ? AND owner = ? AND epoch = ?

-- name: leave_member
DELETE FROM ${schema}.${p}member WHERE group_name = ? AND member_id = ?

-- name: leave_leases
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = FALSE
 WHERE group_name = ? AND owner = ?
 ORDER BY topic_id, `partition`

-- Members dead for an hour are forgotten.
-- name: forget_members
DELETE FROM ${schema}.${p}member
 WHERE group_name = ? AND expires_at < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - 3600000000

-- Frees leases of members not in the live list (a JSON array of ids) and RELEASING leases past the grace.
-- name: reclaim_leases
UPDATE ${schema}.${p}lease SET owner = NULL, releasing = FALSE
 WHERE group_name = ? AND owner IS NOT NULL
   AND (NOT JSON_CONTAINS(?, JSON_QUOTE(owner))
        OR (releasing AND since < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - ?))
 ORDER BY topic_id, `partition`

-- name: force_release
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]')) v
  STRAIGHT_JOIN ${schema}.${p}lease l FORCE INDEX (PRIMARY)
    ON l.group_name = ? AND l.topic_id = v.topic_id AND l.`partition` = v.part
   SET l.owner = NULL, l.releasing = FALSE
 WHERE l.owner IS NOT NULL

-- The group's own row sorts before the default (''). The stamp of the same snapshot comes along (the
-- same expression as in the check_in procedure), so the store knows which policy state the caller now holds.
-- name: group_policy
SELECT gp.check_in_rate, gp.min_check_in_ms, gp.deadline_multiplier, gp.slack, gp.release_grace_ms,
       gp.idle_release_ms, gp.batch_size, gp.max_check_in_ms, gp.max_members
  FROM ${schema}.${p}group_policy gp WHERE gp.group_name IN (?, '')
 ORDER BY gp.group_name DESC LIMIT 1

-- name: upsert_group_policy
INSERT INTO ${schema}.${p}group_policy (group_name, check_in_rate, min_check_in_ms, deadline_multiplier,
                                        slack, release_grace_ms, idle_release_ms, batch_size, max_check_in_ms, max_members, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))
ON DUPLICATE KEY UPDATE
   check_in_rate = VALUES(check_in_rate), min_check_in_ms = VALUES(min_check_in_ms),
   deadline_multiplier = VALUES(deadline_multiplier), slack = VALUES(slack),
   release_grace_ms = VALUES(release_grace_ms), idle_release_ms = VALUES(idle_release_ms),
   batch_size = VALUES(batch_size), max_check_in_ms = VALUES(max_check_in_ms),
   max_members = VALUES(max_members), updated_at = VALUES(updated_at)

-- name: delete_group_policy
DELETE FROM ${schema}.${p}group_policy WHERE group_name = ?

-- ---------------------------------------------------------------- parked events (retries, dead letters)
-- name: park
INSERT IGNORE INTO ${schema}.${p}parked
  (subscription_id, topic_id, `partition`, seq, event_id, event_key, event_type, state, attempts,
   next_attempt_at, last_error, first_failed_at, last_failed_at, dead_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
        IF(? <> 'WAITING', UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), NULL),
        IF(? <> 'WAITING', UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), NULL),
        IF(? = 'DEAD', UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), NULL))

-- The head of each key: its oldest parked event that still counts (dead ones count only when they block).
-- Keyless events are each their own head.
-- name: parked_heads
SELECT event_key, state, next_attempt_at FROM (
  SELECT event_key, state, next_attempt_at,
         ROW_NUMBER() OVER (PARTITION BY COALESCE(CONCAT('k:', event_key), CONCAT('s:', seq))
                            ORDER BY seq) AS rn
    FROM ${schema}.${p}parked
   WHERE subscription_id = ? AND topic_id = ? AND `partition` = ? AND (state <> 'DEAD' OR ?)
) h
 WHERE rn = 1

-- The due heads are picked (and limited) from the parked table first, then each is looked up in the log
-- by primary key.
-- name: due_parked
WITH heads AS (
  SELECT topic_id, `partition`, seq, state, attempts, next_attempt_at, first_failed_at,
         ROW_NUMBER() OVER (PARTITION BY COALESCE(CONCAT('k:', event_key), CONCAT('s:', seq))
                            ORDER BY seq) AS rn
    FROM ${schema}.${p}parked
   WHERE subscription_id = ? AND topic_id = ? AND `partition` = ? AND (state <> 'DEAD' OR ?)
), due AS (
  SELECT * FROM heads
   WHERE rn = 1 AND state <> 'DEAD'
     AND next_attempt_at <= ?
   ORDER BY seq LIMIT ?
)
SELECT l.seq, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers,
       l.created_at, h.attempts, h.first_failed_at, l.deliver_at
  FROM due h
  STRAIGHT_JOIN ${schema}.${p}log l FORCE INDEX (PRIMARY) ON l.topic_id = h.topic_id AND l.`partition` = h.`partition` AND l.seq = h.seq
 ORDER BY h.seq

-- Every resolution is fenced by the cursor's epoch, like a cursor commit.
-- name: parked_done
DELETE FROM ${schema}.${p}parked
 WHERE subscription_id = ? AND topic_id = ? AND `partition` = ? AND seq = ?
   AND EXISTS (SELECT 1 FROM ${schema}.${p}cursor c
                WHERE c.subscription_id = ${schema}.${p}parked.subscription_id
                  AND c.topic_id = ${schema}.${p}parked.topic_id
                  AND c.`partition` = ${schema}.${p}parked.`partition` AND c.epoch = ?)

-- Inside a transactional handler's transaction, after settle_cursor locked the cursor row.
-- name: parked_done_locked
DELETE FROM ${schema}.${p}parked
 WHERE subscription_id = ? AND topic_id = ? AND `partition` = ? AND seq = ?

-- name: parked_retry
UPDATE ${schema}.${p}parked k
   SET k.state = ?, k.attempts = ?, k.next_attempt_at = COALESCE(?, k.next_attempt_at), k.last_error = ?,
       k.first_failed_at = COALESCE(k.first_failed_at, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))),
       k.last_failed_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)),
       k.dead_at = IF(? = 'DEAD', UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), NULL)
 WHERE k.subscription_id = ? AND k.topic_id = ? AND k.`partition` = ? AND k.seq = ?
   AND EXISTS (SELECT 1 FROM ${schema}.${p}cursor c
                WHERE c.subscription_id = k.subscription_id AND c.topic_id = k.topic_id
                  AND c.`partition` = k.`partition` AND c.epoch = ?)

-- Dead-letter selection shared by list, redrive and discard: every filter is an optional bound parameter.
-- name: dead_letters
SELECT k.topic_id, k.`partition`, k.seq, k.attempts, k.last_error, k.first_failed_at, k.dead_at, n.path,
       t.name, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers,
       l.created_at, l.deliver_at
  FROM ${schema}.${p}parked k
  JOIN ${schema}.${p}log l ON l.topic_id = k.topic_id AND l.`partition` = k.`partition` AND l.seq = k.seq
  JOIN ${schema}.${p}topic t ON t.id = k.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE k.subscription_id = ? AND k.state = 'DEAD'
   AND (? IS NULL OR k.topic_id = ?)
   AND (? IS NULL OR k.event_type = ?)
   AND (? IS NULL OR k.event_key = ?)
   AND (? IS NULL OR k.event_id = ?)
   AND (? IS NULL OR LOCATE(?, k.last_error) > 0)
   AND (? IS NULL OR k.dead_at < ?)
   AND (? IS NULL OR k.dead_at > ?)
   AND (? IS NULL OR (k.topic_id, k.`partition`, k.seq) > (?, ?, ?))
 ORDER BY k.topic_id, k.`partition`, k.seq
 LIMIT ?

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
   SET state = 'RETRY', attempts = 0, next_attempt_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)),
       dead_at = NULL
 WHERE subscription_id = ? AND state = 'DEAD'
   AND (? IS NULL OR topic_id = ?)
   AND (? IS NULL OR event_type = ?)
   AND (? IS NULL OR event_key = ?)
   AND (? IS NULL OR event_id = ?)
   AND (? IS NULL OR LOCATE(?, last_error) > 0)
   AND (? IS NULL OR dead_at < ?)
   AND (? IS NULL OR dead_at > ?)
   AND (? IS NULL OR (topic_id, `partition`, seq) > (?, ?, ?))
 ORDER BY topic_id, `partition`, seq
 LIMIT ?

-- name: discard_dead
DELETE FROM ${schema}.${p}parked
 WHERE subscription_id = ? AND state = 'DEAD'
   AND (? IS NULL OR topic_id = ?)
   AND (? IS NULL OR event_type = ?)
   AND (? IS NULL OR event_key = ?)
   AND (? IS NULL OR event_id = ?)
   AND (? IS NULL OR LOCATE(?, last_error) > 0)
   AND (? IS NULL OR dead_at < ?)
   AND (? IS NULL OR dead_at > ?)
   AND (? IS NULL OR (topic_id, `partition`, seq) > (?, ?, ?))
 ORDER BY topic_id, `partition`, seq
 LIMIT ?

-- ---------------------------------------------------------------- inbox
-- Inside the handler's transaction: 1 row when the key is new (the handler runs), 0 for a duplicate.
-- name: inbox_claim
INSERT IGNORE INTO ${schema}.${p}inbox (subscription_id, dedup_hash, dedup_key, handled_at)
VALUES (?, UNHEX(?), ?, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)))

-- name: inbox_seen
SELECT EXISTS (SELECT 1 FROM ${schema}.${p}inbox WHERE subscription_id = ? AND dedup_hash = UNHEX(?))

-- ---------------------------------------------------------------- retention
-- Subscriptions whose group has a live member now (Admin's lastActive; retention's abandonAfter).
-- name: mark_active
UPDATE ${schema}.${p}subscription SET active_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) WHERE id = ?

-- name: set_retention
UPDATE ${schema}.${p}topic SET retention_ms = ?, retention_keep_unconsumed = ?, retention_max_events = ?,
       retention_abandon_ms = ?
 WHERE id = ?

-- Events of topics with a retention that are past their age or more than retention_max_events behind their
-- partition's newest, a batch at a time. Events still parked by a subscription stay; with keep_unconsumed,
-- so do events some cursor has not passed. (MySQL/MariaDB cannot LIMIT an IN subquery nor select from the
-- table a DELETE changes, so the batch is picked first and deleted by key.)
-- A topic whose retention by age is at least the first parameter (ms) is left to whole-segment drops
-- (MariaDbLogSegments): its old events are picked here only from a segment that ended the second parameter
-- (ms) past their retention and so should have gone, but something holds it back.
-- name: purge_log_pick
SELECT o.topic_id, o.`partition`, o.seq
  FROM ${schema}.${p}topic t
  JOIN ${schema}.${p}partition p ON p.topic_id = t.id
  JOIN ${schema}.${p}log o ON o.topic_id = p.topic_id AND o.`partition` = p.`partition`
 WHERE (t.retention_ms IS NOT NULL OR t.retention_max_events > 0)
   AND ((t.retention_ms IS NOT NULL
         AND o.created_at < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - t.retention_ms * 1000
         AND (t.retention_ms < ?
              OR EXISTS (SELECT 1 FROM ${schema}.${p}log_segment g
                          WHERE g.upper_bound < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
                                                - (t.retention_ms + ?) * 1000
                            AND o.sequenced_at < g.upper_bound
                            AND (g.lower_bound IS NULL OR o.sequenced_at >= g.lower_bound))))
        OR (t.retention_max_events > 0 AND o.seq <= p.last_seq - t.retention_max_events))
   AND (NOT t.retention_keep_unconsumed
        OR o.seq <= (SELECT COALESCE(MIN(c.position), o.seq)
                       FROM ${schema}.${p}cursor c
                       JOIN ${schema}.${p}subscription s ON s.id = c.subscription_id
                      WHERE c.topic_id = o.topic_id AND c.`partition` = o.`partition`
                        AND s.active_at >= UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
                                           - t.retention_abandon_ms * 1000))
   AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                    WHERE k.topic_id = o.topic_id AND k.`partition` = o.`partition` AND k.seq = o.seq)
 LIMIT ?

-- name: purge_log_delete
DELETE ${schema}.${p}log FROM JSON_TABLE(?, '$[*]' COLUMNS (topic_id BIGINT PATH '$[0]', part INT PATH '$[1]',
                                                          seq BIGINT PATH '$[2]')) v
  STRAIGHT_JOIN ${schema}.${p}log FORCE INDEX (PRIMARY)
    ON ${schema}.${p}log.topic_id = v.topic_id AND ${schema}.${p}log.`partition` = v.part
   AND ${schema}.${p}log.seq = v.seq

-- ---------------------------------------------------------------- log segments (V13__log_segments.sql)
-- The log's partitions in order (s<n>, upper bound in epoch µs or MAXVALUE).
-- name: log_partitions
SELECT PARTITION_NAME, PARTITION_DESCRIPTION
  FROM information_schema.PARTITIONS
 WHERE TABLE_SCHEMA = '${schema}' AND TABLE_NAME = '${p}log'
 ORDER BY PARTITION_ORDINAL_POSITION

-- The database clock (µs), the longest and the shortest retention by age.
-- name: log_clock
SELECT UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)),
       (SELECT COALESCE(MAX(retention_ms), 0) FROM ${schema}.${p}topic),
       (SELECT COALESCE(MIN(retention_ms), 0) FROM ${schema}.${p}topic)

-- name: log_segment_clear
DELETE FROM ${schema}.${p}log_segment

-- name: log_segment_insert
INSERT INTO ${schema}.${p}log_segment (number, lower_bound, upper_bound) VALUES (?, ?, ?)

-- Rows in the open segment, counted up to a limit (pruned to that partition by the range).
-- name: log_open_rows
SELECT COUNT(*) FROM (SELECT 1 FROM ${schema}.${p}log WHERE sequenced_at >= ? LIMIT ?) x

-- The DDL of a split and a drop. {open}, {next}, {upper} and {number} are numbers the store computes.
-- name: log_split
ALTER TABLE ${schema}.${p}log REORGANIZE PARTITION s{open} INTO
  (PARTITION s{open} VALUES LESS THAN ({upper}), PARTITION s{next} VALUES LESS THAN MAXVALUE)

-- name: log_drop_segment
ALTER TABLE ${schema}.${p}log DROP PARTITION s{number}

-- DDL waits this long (s) for the table's metadata lock, then gives up until the next run.
-- name: log_ddl_lock_wait
SET SESSION lock_wait_timeout = 2

-- name: log_ddl_lock_wait_reset
SET SESSION lock_wait_timeout = DEFAULT

-- Transactions open since before a segment's end (plus a second for clocks: the producer's JVM stamps
-- sequenced_at of IN_TRANSACTION topics): one of them may still write into the segment, so it stays.
-- name: log_writers_before
SELECT COUNT(*) FROM information_schema.INNODB_TRX
 WHERE trx_started < FROM_UNIXTIME(? / 1000000 + 1)

-- Whether every event in [lower, upper) may go: the rules of purge_log_pick for a whole segment. Parameters:
-- lower, upper, upper (age), lower, upper (parked). The range prunes each probe to the segment's partition.
-- name: log_segment_expired
SELECT NOT EXISTS (
         SELECT 1
           FROM (SELECT pp.last_seq, t.retention_ms, t.retention_max_events, t.retention_keep_unconsumed,
                        t.retention_abandon_ms, pp.topic_id, pp.`partition`,
                        (SELECT MAX(s.seq) FROM ${schema}.${p}log s
                          WHERE s.topic_id = pp.topic_id AND s.`partition` = pp.`partition`
                            AND s.sequenced_at >= ? AND s.sequenced_at < ?) AS max_seq
                   FROM ${schema}.${p}partition pp
                   JOIN ${schema}.${p}topic t ON t.id = pp.topic_id) x
          WHERE x.max_seq IS NOT NULL
            AND NOT (((x.retention_ms IS NOT NULL
                       AND ? <= UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - x.retention_ms * 1000)
                      OR (x.retention_max_events > 0 AND x.max_seq <= x.last_seq - x.retention_max_events))
                     AND (NOT x.retention_keep_unconsumed
                          OR x.max_seq <= (SELECT COALESCE(MIN(c.position), x.max_seq)
                                             FROM ${schema}.${p}cursor c
                                             JOIN ${schema}.${p}subscription sub ON sub.id = c.subscription_id
                                            WHERE c.topic_id = x.topic_id AND c.`partition` = x.`partition`
                                              AND sub.active_at >= UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
                                                                   - x.retention_abandon_ms * 1000))))
   AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}parked k
                     JOIN ${schema}.${p}log s
                       ON s.topic_id = k.topic_id AND s.`partition` = k.`partition` AND s.seq = k.seq
                    WHERE s.sequenced_at >= ? AND s.sequenced_at < ?)

-- name: log_segment_rows
SELECT COUNT(*) FROM ${schema}.${p}log WHERE sequenced_at >= ? AND sequenced_at < ?

-- Ages are bound in microseconds.
-- name: purge_inbox
DELETE FROM ${schema}.${p}inbox
 WHERE handled_at < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - ?
 ORDER BY handled_at LIMIT ?

-- name: purge_dead_letters
DELETE FROM ${schema}.${p}parked
 WHERE state = 'DEAD' AND dead_at < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - ?
 ORDER BY dead_at LIMIT ?

-- name: purge_idempotency
DELETE FROM ${schema}.${p}idempotency
 WHERE created_at < UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) - ?
 ORDER BY created_at LIMIT ?

-- The last committed sequences of a range of one topic's partitions (no lock: IN_TRANSACTION producers hold
-- the rows while they run).
-- name: partition_heads
SELECT `partition`, last_seq FROM ${schema}.${p}partition WHERE topic_id = ? AND `partition` BETWEEN ? AND ?

-- IN_TRANSACTION topics: the producer's transaction moves the head of a partition it locked (lock_partitions).
-- name: set_last_seq
UPDATE ${schema}.${p}partition SET last_seq = ? WHERE topic_id = ? AND `partition` = ?

-- IN_TRANSACTION topics: one log row written by the producer's transaction.
-- name: insert_log
INSERT INTO ${schema}.${p}log
  (topic_id, `partition`, seq, event_id, event_key, event_type, source, content_type, payload, headers,
   created_at, sequenced_at, deliver_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)

-- The ids the log holds at the sequences of events handed over in memory (checked before the cursor passes them).
-- name: log_ids
SELECT seq, event_id FROM ${schema}.${p}log WHERE topic_id = ? AND `partition` = ? AND seq BETWEEN ? AND ?

-- Copies outbox rows whose topic or partition does not exist into outbox_rejected; the next statement
-- deletes what was copied (the sequencer runs both, in one transaction, after a failed batch). Full scans:
-- they run only then.
-- name: set_aside_unplaceable_copy
INSERT INTO ${schema}.${p}outbox_rejected
SELECT o.*, 'its topic or partition does not exist', UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
  FROM ${schema}.${p}outbox o
 WHERE NOT EXISTS (SELECT 1 FROM ${schema}.${p}topic t WHERE t.id = o.topic_id)
    OR (o.`partition` IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM ${schema}.${p}partition p
                         WHERE p.topic_id = o.topic_id AND p.`partition` = o.`partition`))

-- name: set_aside_unplaceable_delete
DELETE FROM ${schema}.${p}outbox WHERE id IN (SELECT id FROM ${schema}.${p}outbox_rejected)

-- Operators: reading the log without a subscription (Admin); the rest is in common/queries.sql.

-- name: read_filtered
SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers, created_at, deliver_at
  FROM ${schema}.${p}log
 WHERE topic_id = ? AND `partition` = ? AND seq > ?
   AND (? IS NULL OR event_key = ?) AND (? IS NULL OR event_id = ?)
 ORDER BY seq
 LIMIT ?

-- name: group_view
SELECT 'm' AS kind, member_id AS who, weight, NULL AS topic_id, NULL AS part, NULL AS epoch,
       NULL AS releasing, heartbeat_at AS since, UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)) AS now,
       expires_at, status
  FROM ${schema}.${p}member
 WHERE group_name = ? AND expires_at > UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
UNION ALL
SELECT 'l', owner, NULL, topic_id, `partition`, epoch, releasing, since,
       UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)), NULL, NULL
  FROM ${schema}.${p}lease WHERE group_name = ? AND owner IS NOT NULL

-- name: retrying
SELECT k.topic_id, k.`partition`, k.seq, k.attempts, k.last_error, k.first_failed_at, k.next_attempt_at, n.path,
       t.name, l.event_id, l.event_key, l.event_type, l.source, l.content_type, l.payload, l.headers,
       l.created_at, l.deliver_at, k.state
  FROM ${schema}.${p}parked k
  JOIN ${schema}.${p}log l ON l.topic_id = k.topic_id AND l.`partition` = k.`partition` AND l.seq = k.seq
  JOIN ${schema}.${p}topic t ON t.id = k.topic_id
  JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 WHERE k.subscription_id = ? AND k.state <> 'DEAD'
   AND (? IS NULL OR (k.topic_id, k.`partition`, k.seq) > (?, ?, ?))
 ORDER BY k.topic_id, k.`partition`, k.seq
 LIMIT ?
