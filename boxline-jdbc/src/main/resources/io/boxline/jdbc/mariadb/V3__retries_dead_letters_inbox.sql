-- Boxline schema, version 3 (MariaDB / MySQL): events a subscription set aside, and the inbox.
-- An event that exhausted its in-place retries is parked here and the partition's cursor moves on. Later
-- events of the same key are parked behind it (WAITING), so per-key order holds while other keys flow.
-- The payload stays in the log; retention keeps log rows that are still parked.
CREATE TABLE IF NOT EXISTS ${schema}.${p}parked (
  subscription_id  BIGINT       NOT NULL,
  topic_id         BIGINT       NOT NULL,
  `partition`      INT          NOT NULL,
  seq              BIGINT       NOT NULL,
  event_id         CHAR(36)     CHARACTER SET ascii NOT NULL,
  event_key        TEXT,
  event_type       TEXT         NOT NULL,
  state            VARCHAR(8)   NOT NULL CHECK (state IN ('RETRY', 'WAITING', 'DEAD')),
  attempts         INT          NOT NULL DEFAULT 0,
  next_attempt_at  BIGINT       NOT NULL,
  last_error       TEXT,
  first_failed_at  BIGINT,
  last_failed_at   BIGINT,
  dead_at          BIGINT,
  PRIMARY KEY (subscription_id, topic_id, `partition`, seq),
  -- The retry pass of a partition reads the oldest entry of each key (no partial indexes here).
  KEY ${p}parked_key (subscription_id, topic_id, `partition`, event_key(191), seq),
  -- Dead-letter listing and purging by subscription and age.
  KEY ${p}parked_dead (state, dead_at),
  -- Retention keeps log rows that some subscription has parked.
  KEY ${p}parked_log (topic_id, `partition`, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Per-subscription record of handled de-duplication keys (event id by default). dedup_hash = SHA-256 of
-- the key, so keys of any length can be the primary key.
CREATE TABLE IF NOT EXISTS ${schema}.${p}inbox (
  subscription_id  BIGINT      NOT NULL,
  dedup_hash       BINARY(32)  NOT NULL,
  dedup_key        TEXT        NOT NULL,
  handled_at       BIGINT      NOT NULL,
  PRIMARY KEY (subscription_id, dedup_hash),
  KEY ${p}inbox_age (handled_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
