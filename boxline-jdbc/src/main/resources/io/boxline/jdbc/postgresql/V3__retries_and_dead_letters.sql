-- Boxline schema, version 3 (PostgreSQL): events a subscription set aside.
-- An event that exhausted its in-place retries is parked here and the partition's cursor moves on. Later
-- events of the same key are parked behind it (WAITING), so per-key order holds while other keys flow.
-- The payload stays in the log; retention keeps log rows that are still parked.
CREATE TABLE ${schema}.${p}parked (
  subscription_id  bigint       NOT NULL,
  topic_id         bigint       NOT NULL,
  partition        integer      NOT NULL,
  seq              bigint       NOT NULL,
  event_id         uuid         NOT NULL,
  event_key        text,
  event_type       text         NOT NULL,
  state            text         NOT NULL CHECK (state IN ('RETRY', 'WAITING', 'DEAD')),
  attempts         integer      NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz  NOT NULL DEFAULT now(),
  last_error       text,
  first_failed_at  timestamptz,
  last_failed_at   timestamptz,
  dead_at          timestamptz,
  PRIMARY KEY (subscription_id, topic_id, partition, seq)
);

-- The retry pass of a partition reads the oldest live entry of each key.
CREATE INDEX ${p}parked_key ON ${schema}.${p}parked (subscription_id, topic_id, partition, event_key, seq)
  WHERE state <> 'DEAD';
-- Dead-letter listing by subscription and age.
CREATE INDEX ${p}parked_dead ON ${schema}.${p}parked (subscription_id, dead_at) WHERE state = 'DEAD';
