-- Boxline schema, version 11 (PostgreSQL): publish() refuses every argument the Java publisher refuses (the
-- rules of io.boxline.Names), so that nothing a consumer cannot decode enters the outbox through it, and it
-- wakes the sequencer the way a Java publisher in another process does.
--
-- Every refusal is SQLSTATE 22023 (invalid_parameter_value) with a message that starts "boxline:", names the
-- argument and says the rule; nothing is written. (PostgreSQL itself refuses a NUL character or invalid
-- UTF-8 in text, and \u0000 in jsonb, before the function runs.)
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
  v_notified text;
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

  -- Wake the sequencer, sent at commit (dropped with a rollback), as a Java publisher in another process does:
  -- at most once per 2 ms per session (producerNotifyInterval's default), since a NOTIFY in every transaction
  -- would serialise all commits on the notification queue. A suppressed one is found by the quick looks the
  -- previous wake-up started.
  v_notified := current_setting('boxline.notified_${schema}_${p}', true);
  IF v_notified IS NULL OR v_notified = ''
     OR clock_timestamp() - v_notified::timestamptz > interval '2 milliseconds' THEN
    PERFORM pg_notify('${schema}_${p}outbox', ''),
            set_config('boxline.notified_${schema}_${p}', clock_timestamp()::text, false);
  END IF;
  RETURN v_event_id;
END
$fn$;
