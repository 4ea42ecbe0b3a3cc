-- Boxline schema, version 5 (PostgreSQL): inbox de-duplication and retention.

-- Per-subscription record of handled de-duplication keys (event id by default), for at-least-once paths
-- where the same message can arrive twice (replays, relays from other systems).
CREATE TABLE ${schema}.${p}inbox (
  subscription_id  bigint       NOT NULL,
  dedup_key        text         NOT NULL,
  handled_at       timestamptz  NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription_id, dedup_key)
);
CREATE INDEX ${p}inbox_age ON ${schema}.${p}inbox (handled_at);

-- Retention by age per topic (NULL: keep forever). keep_unconsumed: never delete an event some
-- subscription's cursor has not passed yet.
ALTER TABLE ${schema}.${p}topic ADD COLUMN retention_ms bigint;
ALTER TABLE ${schema}.${p}topic ADD COLUMN retention_keep_unconsumed boolean NOT NULL DEFAULT true;

-- Retention scans old log rows by age.
CREATE INDEX ${p}log_created ON ${schema}.${p}log (created_at);
CREATE INDEX ${p}idempotency_age ON ${schema}.${p}idempotency (created_at);
