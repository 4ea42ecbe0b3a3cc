-- Topics whose producers number their events themselves (Sequencing.IN_TRANSACTION): the producer's
-- transaction locks the partition row, advances last_seq and writes the log rows; no outbox, no sequencer.
ALTER TABLE ${schema}.${p}topic
  ADD COLUMN sequencing text NOT NULL DEFAULT 'SEQUENCER' CHECK (sequencing IN ('SEQUENCER', 'IN_TRANSACTION'));

-- Appends events to the log in the caller's transaction. Parallel arrays, one element per event; returns
-- each event's sequence, in input order. Partitions are locked in (topic, partition) order, so two such
-- calls never deadlock on each other. The planner settings are the function's own (SET clauses), not the
-- caller's transaction's: they end with the call.
CREATE FUNCTION ${schema}.${p}append_to_log(p_topic bigint[], p_partition integer[], p_event_id uuid[],
                                            p_key text[], p_type text[], p_source text[], p_content_type text[],
                                            p_payload bytea[], p_headers jsonb[], p_created_at timestamptz[],
                                            p_deliver_at timestamptz[])
RETURNS SETOF bigint
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
  part record;
  seqs bigint[] := array_fill(0::bigint, ARRAY[cardinality(p_topic)]);
  last bigint;
  n integer;
BEGIN
  FOR part IN
    SELECT u.t, u.p, array_agg(u.i ORDER BY u.i) AS idx
      FROM unnest(p_topic, p_partition) WITH ORDINALITY AS u(t, p, i)
     GROUP BY u.t, u.p
     ORDER BY u.t, u.p
  LOOP
    n := cardinality(part.idx);
    UPDATE ${schema}.${p}partition SET last_seq = last_seq + n
     WHERE topic_id = part.t AND partition = part.p
    RETURNING last_seq INTO last;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'partition % of topic % does not exist', part.p, part.t;
    END IF;
    FOR j IN 1 .. n LOOP
      seqs[part.idx[j]] := last - n + j;
    END LOOP;
  END LOOP;
  INSERT INTO ${schema}.${p}log
    (topic_id, partition, seq, event_id, event_key, event_type, source, content_type, payload, headers,
     created_at, deliver_at)
  SELECT * FROM unnest(p_topic, p_partition, seqs, p_event_id, p_key, p_type, p_source, p_content_type,
                       p_payload, p_headers, p_created_at, p_deliver_at);
  RETURN QUERY SELECT s FROM unnest(seqs) AS s;
END
$$;
