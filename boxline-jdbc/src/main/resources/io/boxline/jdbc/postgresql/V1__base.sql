-- Boxline schema, version 1 (PostgreSQL).
-- ${schema} and ${p} (table prefix) are validated identifiers substituted by the migrator; nothing else is.

CREATE TABLE ${schema}.${p}namespace (
  id          bigserial    PRIMARY KEY,
  path        text         NOT NULL UNIQUE,
  parent_id   bigint       REFERENCES ${schema}.${p}namespace (id),
  created_at  timestamptz  NOT NULL DEFAULT now()
);

CREATE TABLE ${schema}.${p}topic (
  id            bigserial    PRIMARY KEY,
  namespace_id  bigint       NOT NULL REFERENCES ${schema}.${p}namespace (id),
  name          text         NOT NULL,
  partitions    integer      NOT NULL CHECK (partitions BETWEEN 1 AND 65536),
  created_at    timestamptz  NOT NULL DEFAULT now(),
  UNIQUE (namespace_id, name)
);

-- One row per partition: the last sequence handed out. Only the sequencer writes it.
CREATE TABLE ${schema}.${p}partition (
  topic_id  bigint   NOT NULL REFERENCES ${schema}.${p}topic (id),
  partition integer  NOT NULL,
  last_seq  bigint   NOT NULL DEFAULT 0,
  PRIMARY KEY (topic_id, partition)
);

-- Producers append here in their own transactions: one cheap insert, no shared row locked.
-- partition is NULL when the SQL-level publish function wrote the row; the sequencer assigns it.
CREATE TABLE ${schema}.${p}outbox (
  id               bigserial    PRIMARY KEY,
  event_id         uuid         NOT NULL,
  topic_id         bigint       NOT NULL,
  partition        integer,
  event_key        text,
  event_type       text         NOT NULL,
  source           text,
  content_type     text         NOT NULL,
  payload          bytea        NOT NULL,
  headers          jsonb,
  created_at       timestamptz  NOT NULL DEFAULT now()
);

-- The ordered log: gap-free sequence per (topic, partition), append-only.
CREATE TABLE ${schema}.${p}log (
  topic_id      bigint       NOT NULL,
  partition     integer      NOT NULL,
  seq           bigint       NOT NULL,
  event_id      uuid         NOT NULL,
  event_key     text,
  event_type    text         NOT NULL,
  source        text,
  content_type  text         NOT NULL,
  payload       bytea        NOT NULL,
  headers       jsonb,
  created_at    timestamptz  NOT NULL,
  sequenced_at  timestamptz  NOT NULL DEFAULT now(),
  PRIMARY KEY (topic_id, partition, seq)
);

-- Idempotent publish: the first event stored with a key on a topic wins.
CREATE TABLE ${schema}.${p}idempotency (
  topic_id         bigint       NOT NULL,
  idempotency_key  text         NOT NULL,
  event_id         uuid         NOT NULL,
  created_at       timestamptz  NOT NULL DEFAULT now(),
  PRIMARY KEY (topic_id, idempotency_key)
);

CREATE TABLE ${schema}.${p}subscription (
  id          bigserial    PRIMARY KEY,
  name        text         NOT NULL UNIQUE,
  created_at  timestamptz  NOT NULL DEFAULT now()
);

CREATE TABLE ${schema}.${p}subscription_topic (
  subscription_id  bigint  NOT NULL REFERENCES ${schema}.${p}subscription (id),
  topic_id         bigint  NOT NULL REFERENCES ${schema}.${p}topic (id),
  PRIMARY KEY (subscription_id, topic_id)
);

-- position = sequence of the last handled event; epoch fences consumers that lost the partition.
CREATE TABLE ${schema}.${p}cursor (
  subscription_id  bigint       NOT NULL REFERENCES ${schema}.${p}subscription (id),
  topic_id         bigint       NOT NULL,
  partition        integer      NOT NULL,
  position         bigint       NOT NULL,
  epoch            bigint       NOT NULL DEFAULT 0,
  owner            text,
  updated_at       timestamptz  NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription_id, topic_id, partition)
);

-- The single sequencer lease of this schema.
CREATE TABLE ${schema}.${p}sequencer_lease (
  name        text         PRIMARY KEY,
  owner       text,
  epoch       bigint       NOT NULL DEFAULT 0,
  expires_at  timestamptz  NOT NULL DEFAULT '-infinity'
);
INSERT INTO ${schema}.${p}sequencer_lease (name) VALUES ('sequencer');

-- SQL-level publish, usable from triggers and any language. Returns the event id, or the id stored earlier
-- under the same idempotency key. The partition is assigned by the sequencer with the configured partitioner.
CREATE FUNCTION ${schema}.${p}publish(
    p_topic           text,
    p_type            text,
    p_payload         jsonb,
    p_key             text DEFAULT NULL,
    p_headers         jsonb DEFAULT NULL,
    p_idempotency_key text DEFAULT NULL,
    p_source          text DEFAULT NULL)
  RETURNS uuid
  LANGUAGE plpgsql
AS $fn$
DECLARE
  v_slash    integer := length(p_topic) - strpos(reverse(p_topic), '/') + 1;
  v_topic_id bigint;
  v_event_id uuid := gen_random_uuid();
  v_existing uuid;
BEGIN
  IF strpos(p_topic, '/') = 0 THEN
    RAISE EXCEPTION 'boxline: topic "%" has no namespace; write it as namespace/topic', p_topic;
  END IF;
  SELECT t.id INTO v_topic_id
    FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
   WHERE n.path = left(p_topic, v_slash - 1) AND t.name = substr(p_topic, v_slash + 1);
  IF v_topic_id IS NULL THEN
    RAISE EXCEPTION 'boxline: topic "%" does not exist; create it first', p_topic;
  END IF;
  IF p_idempotency_key IS NOT NULL THEN
    INSERT INTO ${schema}.${p}idempotency (topic_id, idempotency_key, event_id)
    VALUES (v_topic_id, p_idempotency_key, v_event_id)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      SELECT event_id INTO v_existing FROM ${schema}.${p}idempotency
       WHERE topic_id = v_topic_id AND idempotency_key = p_idempotency_key;
      RETURN v_existing;
    END IF;
  END IF;
  INSERT INTO ${schema}.${p}outbox
    (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers)
  VALUES
    (v_event_id, v_topic_id, NULL, p_key, p_type, p_source, 'application/json',
     convert_to(p_payload::text, 'UTF8'), p_headers);
  RETURN v_event_id;
END
$fn$;
