-- Boxline schema, version 3 (H2): events a subscription set aside, and the inbox.
-- An event that exhausted its in-place retries is parked here and the partition's cursor moves on. Later
-- events of the same key are parked behind it (WAITING), so per-key order holds while other keys flow.
-- The payload stays in the log; retention keeps log rows that are still parked.
CREATE TABLE IF NOT EXISTS ${schema}.${p}parked (
  subscription_id  BIGINT       NOT NULL,
  topic_id         BIGINT       NOT NULL,
  "PARTITION"      INT          NOT NULL,
  seq              BIGINT       NOT NULL,
  event_id         VARCHAR(36)  NOT NULL,
  event_key        VARCHAR,
  event_type       VARCHAR      NOT NULL,
  state            VARCHAR(8)   NOT NULL CHECK (state IN ('RETRY', 'WAITING', 'DEAD')),
  attempts         INT          DEFAULT 0 NOT NULL,
  next_attempt_at  BIGINT       NOT NULL,
  last_error       VARCHAR,
  first_failed_at  BIGINT,
  last_failed_at   BIGINT,
  dead_at          BIGINT,
  PRIMARY KEY (subscription_id, topic_id, "PARTITION", seq)
);
-- The retry pass of a partition reads the oldest entry of each key (no partial indexes in H2).
CREATE INDEX IF NOT EXISTS ${schema}.${p}parked_key
  ON ${schema}.${p}parked (subscription_id, topic_id, "PARTITION", event_key, seq);
-- Dead-letter listing and purging by age.
CREATE INDEX IF NOT EXISTS ${schema}.${p}parked_dead ON ${schema}.${p}parked (state, dead_at);
-- Retention keeps log rows that some subscription has parked.
CREATE INDEX IF NOT EXISTS ${schema}.${p}parked_log ON ${schema}.${p}parked (topic_id, "PARTITION", seq);

-- Per-subscription record of handled de-duplication keys (event id by default); keys of any length.
CREATE TABLE IF NOT EXISTS ${schema}.${p}inbox (
  subscription_id  BIGINT   NOT NULL,
  dedup_key        VARCHAR  NOT NULL,
  handled_at       BIGINT   NOT NULL,
  PRIMARY KEY (subscription_id, dedup_key)
);
CREATE INDEX IF NOT EXISTS ${schema}.${p}inbox_age ON ${schema}.${p}inbox (handled_at);
