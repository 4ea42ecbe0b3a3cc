-- Named queries that read the same on every dialect (PostgreSQL, MariaDB / MySQL, H2); each dialect's
-- queries.sql holds the rest. "-- name: x" starts query x. ${schema} and ${p} are validated identifiers
-- substituted once at start; every value is a bind parameter.

-- Operators: listing and deleting (Admin). Each delete runs in the caller's transaction.

-- name: all_namespaces
SELECT path FROM ${schema}.${p}namespace ORDER BY path

-- name: all_subscriptions
SELECT s.id, s.name, s.created_at, n.path, t.name, s.start_kind, s.start_at, s.active_at
  FROM ${schema}.${p}subscription s
  LEFT JOIN ${schema}.${p}subscription_topic st ON st.subscription_id = s.id
  LEFT JOIN ${schema}.${p}topic t ON t.id = st.topic_id
  LEFT JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
 ORDER BY s.name, n.path, t.name

-- name: delete_subscription_parked
DELETE FROM ${schema}.${p}parked WHERE subscription_id = ?

-- name: delete_subscription_inbox
DELETE FROM ${schema}.${p}inbox WHERE subscription_id = ?

-- name: delete_subscription_cursors
DELETE FROM ${schema}.${p}cursor WHERE subscription_id = ?

-- name: delete_subscription_topics
DELETE FROM ${schema}.${p}subscription_topic WHERE subscription_id = ?

-- name: delete_group_leases
DELETE FROM ${schema}.${p}lease WHERE group_name = ?

-- name: delete_group_members
DELETE FROM ${schema}.${p}member WHERE group_name = ?

-- name: rename_subscription
UPDATE ${schema}.${p}subscription SET name = ? WHERE id = ?

-- name: delete_subscription
DELETE FROM ${schema}.${p}subscription WHERE id = ?

-- name: delete_topic_parked
DELETE FROM ${schema}.${p}parked WHERE topic_id = ?

-- name: delete_topic_cursors
DELETE FROM ${schema}.${p}cursor WHERE topic_id = ?

-- name: delete_topic_subscriptions
DELETE FROM ${schema}.${p}subscription_topic WHERE topic_id = ?

-- name: delete_topic_leases
DELETE FROM ${schema}.${p}lease WHERE topic_id = ?

-- name: delete_topic_log
DELETE FROM ${schema}.${p}log WHERE topic_id = ?

-- name: delete_topic_outbox
DELETE FROM ${schema}.${p}outbox WHERE topic_id = ?

-- name: delete_topic_rejected
DELETE FROM ${schema}.${p}outbox_rejected WHERE topic_id = ?

-- name: delete_topic_idempotency
DELETE FROM ${schema}.${p}idempotency WHERE topic_id = ?

-- name: delete_topic_partitions
DELETE FROM ${schema}.${p}partition WHERE topic_id = ?

-- name: delete_topic
DELETE FROM ${schema}.${p}topic WHERE id = ?

-- name: namespace_in_use
SELECT (SELECT COUNT(*) FROM ${schema}.${p}namespace c
         JOIN ${schema}.${p}namespace n ON c.parent_id = n.id WHERE n.path = ?),
       (SELECT COUNT(*) FROM ${schema}.${p}topic t
         JOIN ${schema}.${p}namespace n ON t.namespace_id = n.id WHERE n.path = ?)

-- name: delete_namespace
DELETE FROM ${schema}.${p}namespace WHERE path = ?

-- name: parked_counts
SELECT s.name,
       SUM(CASE WHEN k.state = 'RETRY' THEN 1 ELSE 0 END),
       SUM(CASE WHEN k.state = 'WAITING' THEN 1 ELSE 0 END),
       SUM(CASE WHEN k.state = 'DEAD' THEN 1 ELSE 0 END)
  FROM ${schema}.${p}parked k JOIN ${schema}.${p}subscription s ON s.id = k.subscription_id
 GROUP BY s.name
 ORDER BY s.name

-- name: inbox_size
SELECT COUNT(*) FROM ${schema}.${p}inbox WHERE subscription_id = ?

-- name: inbox_sizes
SELECT s.name, COUNT(*)
  FROM ${schema}.${p}inbox i JOIN ${schema}.${p}subscription s ON s.id = i.subscription_id
 GROUP BY s.name
 ORDER BY s.name

-- name: topic_retention
SELECT retention_ms, retention_keep_unconsumed, COALESCE(retention_max_events, 0), retention_abandon_ms
  FROM ${schema}.${p}topic WHERE id = ?
