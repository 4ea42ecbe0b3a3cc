-- Boxline schema, version 11 (PostgreSQL): publish() refuses every argument the Java publisher refuses (the
-- rules of io.boxline.Names), so that nothing a consumer cannot decode enters the outbox through it, and it
-- wakes the sequencer the way a Java publisher in another process does.
--
-- Every refusal is SQLSTATE 22023 (invalid_parameter_value) with a message that starts "boxline:", names the
-- argument and says the rule; nothing is written. (PostgreSQL itself refuses a NUL character or invalid
-- UTF-8 in text, and \u0000 in jsonb, before the function runs.)
CREATE SEQUENCE ${schema}.${p}publish_woken;

CREATE OR REPLACE FUNCTION ${schema}.${p}publish(
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
  v_slash    integer;
  v_topic_id bigint;
  v_event_id uuid := gen_random_uuid();
  v_existing uuid;
  v_name     text;
  v_value    jsonb;
  v_slot     bigint;
BEGIN
  IF p_topic IS NULL OR strpos(p_topic, '/') = 0 THEN
    RAISE EXCEPTION 'boxline: topic "%" has no namespace; write it as namespace/topic', coalesce(p_topic, '')
      USING ERRCODE = '22023';
  END IF;
  IF p_type IS NULL OR p_type ~ '^\s*$' THEN
    RAISE EXCEPTION 'boxline: p_type must not be empty; pass the event type, e.g. ''order.placed'''
      USING ERRCODE = '22023';
  END IF;
  IF length(p_type) > 256 OR p_type ~ '[\x01-\x1f\x7f-\x9f]' THEN
    RAISE EXCEPTION 'boxline: p_type "%" is not a valid event type; use at most 256 printable characters',
      left(p_type, 40) USING ERRCODE = '22023';
  END IF;
  IF p_payload IS NULL THEN
    RAISE EXCEPTION 'boxline: p_payload is null; pass JSON (''null''::jsonb for a JSON null)'
      USING ERRCODE = '22023';
  END IF;
  IF length(p_key) > 512 THEN
    RAISE EXCEPTION 'boxline: p_key is % characters long; the limit is 512', length(p_key)
      USING ERRCODE = '22023';
  END IF;
  IF length(p_source) > 4096 THEN
    RAISE EXCEPTION 'boxline: p_source is % characters long; the limit is 4096', length(p_source)
      USING ERRCODE = '22023';
  END IF;
  IF p_idempotency_key = '' OR length(p_idempotency_key) > 512 THEN
    RAISE EXCEPTION 'boxline: p_idempotency_key must be 1 to 512 characters; pass NULL for none'
      USING ERRCODE = '22023';
  END IF;
  IF p_headers IS NOT NULL THEN
    IF jsonb_typeof(p_headers) <> 'object' THEN
      RAISE EXCEPTION 'boxline: p_headers is a JSON %, not an object; pass an object of strings, e.g. {"tenant": "acme"}',
        jsonb_typeof(p_headers) USING ERRCODE = '22023';
    END IF;
    FOR v_name, v_value IN SELECT key, value FROM jsonb_each(p_headers) LOOP
      IF v_name ~ '^\s*$' OR length(v_name) > 256 OR v_name ~ '[\x01-\x1f\x7f-\x9f]' THEN
        RAISE EXCEPTION 'boxline: p_headers has a header name "%" that is not valid; use 1 to 256 printable characters',
          left(v_name, 40) USING ERRCODE = '22023';
      END IF;
      IF jsonb_typeof(v_value) <> 'string' THEN
        RAISE EXCEPTION 'boxline: p_headers: header "%" is a JSON %; header values must be strings',
          left(v_name, 40), jsonb_typeof(v_value) USING ERRCODE = '22023';
      END IF;
      IF length(v_value #>> '{}') > 65536 THEN
        RAISE EXCEPTION 'boxline: p_headers: the value of header "%" is % characters long; the limit is 65536',
          left(v_name, 40), length(v_value #>> '{}') USING ERRCODE = '22023';
      END IF;
    END LOOP;
    IF p_headers = '{}'::jsonb THEN
      p_headers := NULL; -- as the Java publisher stores no headers
    END IF;
  END IF;

  v_slash := length(p_topic) - strpos(reverse(p_topic), '/') + 1;
  SELECT t.id INTO v_topic_id
    FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
   WHERE n.path = left(p_topic, v_slash - 1) AND t.name = substr(p_topic, v_slash + 1);
  IF v_topic_id IS NULL THEN
    RAISE EXCEPTION 'boxline: topic "%" does not exist; create it first', p_topic USING ERRCODE = '22023';
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

  -- Wake the sequencer (a NOTIFY, sent at the commit, dropped with a rollback) as a Java publisher in another
  -- process does: at most once per 2 ms (producerNotifyInterval's default) for all sessions together, since a
  -- NOTIFY in every transaction would serialise all commits on the notification queue. The 2 ms slot of the
  -- last wake-up is kept in a sequence (shared, and not rolled back). A publish whose wake-up was left out is
  -- found by the quick looks the previous one started.
  v_slot := floor(extract(epoch FROM clock_timestamp()) * 500)::bigint;
  IF v_slot > (SELECT last_value FROM ${schema}.${p}publish_woken) THEN
    PERFORM setval('${schema}.${p}publish_woken', v_slot), pg_notify('${schema}_${p}outbox', '');
  END IF;
  RETURN v_event_id;
END
$fn$;

-- Kafka's murmur2 partition of a key (io.boxline.Partitioner.kafkaCompatible(): murmur2 of the UTF-8 bytes,
-- sign bit cleared, modulo the partition count), in 32-bit arithmetic kept in bigint. The sequencer's batch
-- uses it for rows published from SQL when the Java partitioner is that default, so those rows need no
-- round trip to Java; PostgresSqlSurfaceTest compares it with the Java partitioner on generated keys.
CREATE FUNCTION ${schema}.${p}murmur2_partition(p_key text, p_partitions integer) RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  d    bytea := convert_to(p_key, 'UTF8');
  n    integer := length(d);
  m    constant bigint := 1540483477;  -- 0x5bd1e995
  mask constant bigint := 4294967295;
  h    bigint := (2538058380 # n) & mask;  -- seed 0x9747b28c xor length
  k    bigint;
  i    integer := 0;
BEGIN
  WHILE i + 4 <= n LOOP
    k := get_byte(d, i)::bigint | (get_byte(d, i + 1)::bigint << 8) | (get_byte(d, i + 2)::bigint << 16)
         | (get_byte(d, i + 3)::bigint << 24);
    k := (k * m) & mask;
    k := k # (k >> 24);
    k := (k * m) & mask;
    h := ((h * m) & mask) # k;
    i := i + 4;
  END LOOP;
  IF n - i = 3 THEN
    h := h # (get_byte(d, i + 2)::bigint << 16);
  END IF;
  IF n - i >= 2 THEN
    h := h # (get_byte(d, i + 1)::bigint << 8);
  END IF;
  IF n - i >= 1 THEN
    h := ((h # get_byte(d, i)::bigint) * m) & mask;
  END IF;
  h := h # (h >> 13);
  h := (h * m) & mask;
  h := h # (h >> 15);
  RETURN ((h & 2147483647) % p_partitions)::integer;
END
$$;

-- The sequencer's batch (V9), and with p_place_unassigned (the Java partitioner is the default) it no longer
-- stops in front of rows published from SQL: it places them itself.
CREATE FUNCTION ${schema}.${p}sequence_batch(p_lease_secs double precision, p_owner text, p_max_events integer,
                                             p_channel text, p_max_notify integer, p_return_events boolean,
                                             p_place_unassigned boolean)
RETURNS TABLE (kind integer, leased boolean, taken bigint, unassigned boolean, heads text, notified text,
               aborted boolean, topic_id bigint, partition integer, seq bigint, event_id uuid, event_key text,
               event_type text, source text, content_type text, payload bytea, headers text,
               created_at timestamptz, deliver_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  -- The plan is made once per session, maybe while the tables are still tiny, and must suit them at any
  -- size: index scans and nested loops only (with the defaults a new session's plan took the outbox rows
  -- by a scan of the whole heap, and the partition rows by a hash join over every partition).
  PERFORM set_config('plan_cache_mode', 'force_generic_plan', true),
          set_config('enable_seqscan', 'off', true),
          set_config('enable_hashjoin', 'off', true),
          set_config('enable_mergejoin', 'off', true);
  RETURN QUERY
  WITH lease AS (
    UPDATE ${schema}.${p}sequencer_lease
       SET expires_at = now() + make_interval(secs => p_lease_secs)
     WHERE name = 'sequencer' AND owner = p_owner
    RETURNING set_config('synchronous_commit', 'off', true) AS async
  ), taken AS (
    DELETE FROM ${schema}.${p}outbox o
     WHERE o.id = ANY (ARRAY(SELECT id FROM ${schema}.${p}outbox
                     WHERE EXISTS (SELECT 1 FROM lease)
                       AND (p_place_unassigned
                            OR id < coalesce((SELECT min(id) FROM ${schema}.${p}outbox WHERE partition IS NULL),
                                             9223372036854775807))
                     ORDER BY id LIMIT p_max_events))
    RETURNING o.*
  ), placed AS (
    -- Rows published from SQL have no partition: the default partitioner's, computed here (a keyless row
    -- goes to a random partition, as in Java).
    SELECT t.id, t.event_id, t.topic_id,
           coalesce(t.partition,
                    CASE WHEN t.event_key IS NULL THEN floor(random() * tp.partitions)::integer
                         ELSE ${schema}.${p}murmur2_partition(t.event_key, tp.partitions) END) AS partition,
           t.event_key, t.event_type, t.source, t.content_type, t.payload, t.headers, t.created_at, t.deliver_at
      FROM taken t
      LEFT JOIN ${schema}.${p}topic tp ON t.partition IS NULL AND tp.id = t.topic_id
  ), numbered AS (
    SELECT t.*, row_number() OVER (PARTITION BY t.topic_id, t.partition ORDER BY t.id) AS rn
      FROM placed t
  ), counts AS (
    SELECT topic_id, partition, count(*) AS n FROM placed GROUP BY topic_id, partition
  ), advanced AS (
    UPDATE ${schema}.${p}partition p
       SET last_seq = p.last_seq + c.n
      FROM counts c
     WHERE p.topic_id = c.topic_id AND p.partition = c.partition
    RETURNING p.topic_id, p.partition, p.last_seq, c.n
  ), appended AS (
    INSERT INTO ${schema}.${p}log
      (topic_id, partition, seq, event_id, event_key, event_type, source, content_type, payload, headers,
       created_at, deliver_at)
    SELECT m.topic_id, m.partition, a.last_seq - a.n + m.rn, m.event_id, m.event_key, m.event_type, m.source,
           m.content_type, m.payload, m.headers, m.created_at, m.deliver_at
      FROM numbered m
      JOIN advanced a ON a.topic_id = m.topic_id AND a.partition = m.partition
    RETURNING topic_id, partition, seq, event_id, event_key, event_type, source, content_type, payload, headers,
              created_at, deliver_at
  ), heads AS (
    SELECT string_agg(topic_id || ':' || partition || ':' || last_seq, ',') AS list FROM advanced
  )
  SELECT 0 AS kind,
         EXISTS (SELECT 1 FROM lease),
         (SELECT count(*) FROM taken),
         NOT p_place_unassigned AND EXISTS (SELECT 1 FROM ${schema}.${p}outbox WHERE partition IS NULL),
         h.list,
         (CASE WHEN h.list IS NULL THEN NULL
               ELSE pg_notify(p_channel, CASE WHEN length(h.list) > p_max_notify THEN '*' ELSE h.list END) END)::text,
         CASE WHEN (SELECT count(*) FROM appended) <> (SELECT count(*) FROM taken)
              THEN ${schema}.${p}sequencer_abort('outbox holds events for a partition that does not exist'
                   || ' (topic deleted or rows written by hand?)') END,
         NULL::bigint, NULL::integer, NULL::bigint, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::text,
         NULL::bytea, NULL::text, NULL::timestamptz, NULL::timestamptz
    FROM heads h
  UNION ALL
  SELECT 1, NULL, NULL, NULL, NULL, NULL, NULL,
         a.topic_id, a.partition, a.seq, a.event_id, a.event_key, a.event_type, a.source, a.content_type,
         a.payload, a.headers::text, a.created_at, a.deliver_at
    FROM appended a
   WHERE p_return_events;
END
$$;

-- Outbox rows the sequencer cannot place, because their topic or partition does not exist (written by hand or
-- by a script): set aside here with the reason, instead of stopping all sequencing. Nothing reads this table;
-- an operator inspects it, and may move a row back into the outbox once its topic exists.
CREATE TABLE ${schema}.${p}outbox_rejected (LIKE ${schema}.${p}outbox);
ALTER TABLE ${schema}.${p}outbox_rejected
  ADD COLUMN reason text NOT NULL,
  ADD COLUMN rejected_at timestamptz NOT NULL DEFAULT now(),
  ADD PRIMARY KEY (id);
