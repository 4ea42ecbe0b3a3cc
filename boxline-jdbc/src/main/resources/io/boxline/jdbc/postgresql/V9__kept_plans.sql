-- The two statements that run for nearly every batch, as functions that keep their plans.
-- As prepared statements the server planned both anew on every call: their custom plans always looked
-- cheaper than the generic one, and planning these multi-CTE statements took longer than running them
-- (sequencer batch 0.4-1 ms of planning against 0.35 ms of execution, measured in W1; see
-- docs/benchmarks.md, session 4). A PL/pgSQL function keeps its plans for the session, and the generic plan
-- is forced for the calling transaction only: set_config(..., true) ends with the statement, which runs in
-- auto-commit. The SQL is otherwise the statement described at the same name in queries.sql.

-- The sequencer's batch. Its DELETE takes the rows by primary key (= ANY of an array): with IN (subquery)
-- the planner joined the whole outbox heap by hash, and that heap keeps its deleted rows until a vacuum.
-- Parameters: lease time, owner, batch size, notify channel, longest notify payload, whether to return the
-- appended rows.
CREATE FUNCTION ${schema}.${p}sequence_batch(p_lease_secs double precision, p_owner text, p_max_events integer,
                                             p_channel text, p_max_notify integer, p_return_events boolean)
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
                       AND id < coalesce((SELECT min(id) FROM ${schema}.${p}outbox WHERE partition IS NULL),
                                         9223372036854775807)
                     ORDER BY id LIMIT p_max_events))
    RETURNING o.*
  ), numbered AS (
    SELECT t.*, row_number() OVER (PARTITION BY t.topic_id, t.partition ORDER BY t.id) AS rn
      FROM taken t
  ), counts AS (
    SELECT topic_id, partition, count(*) AS n FROM taken GROUP BY topic_id, partition
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
         EXISTS (SELECT 1 FROM ${schema}.${p}outbox WHERE partition IS NULL),
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

-- A consumer's group commit of cursor moves; see commit_cursors in queries.sql. Parallel arrays, one element
-- per move; p_first_seq is 0 for events read from the log (sequences start at 1), else the move's
-- handed-over events are p_first_seq..p_last_seq with ids p_ids[p_first_id ...]. One primary-key statement
-- per move: a single UPDATE ... FROM unnest() got a generic plan that hash-joined every cursor of the
-- subscription.
CREATE FUNCTION ${schema}.${p}commit_cursors(p_subscription bigint, p_topic bigint[], p_partition integer[],
                                             p_expected bigint[], p_position bigint[], p_epoch bigint[],
                                             p_first_seq bigint[], p_last_seq bigint[], p_first_id integer[],
                                             p_ids uuid[])
RETURNS TABLE (held boolean, moved boolean, same_epoch boolean)
LANGUAGE plpgsql AS $$
DECLARE
  stored_epoch bigint;
BEGIN
  PERFORM set_config('plan_cache_mode', 'force_generic_plan', true),
          set_config('synchronous_commit', 'off', true);
  FOR i IN 1 .. coalesce(array_length(p_topic, 1), 0) LOOP
    held := p_first_seq[i] = 0
            OR (SELECT count(*) FROM ${schema}.${p}log l
                 WHERE l.topic_id = p_topic[i] AND l.partition = p_partition[i]
                   AND l.seq BETWEEN p_first_seq[i] AND p_last_seq[i]
                   AND l.event_id = p_ids[p_first_id[i] + (l.seq - p_first_seq[i])::integer])
               = p_last_seq[i] - p_first_seq[i] + 1;
    moved := false;
    same_epoch := true;
    IF held THEN
      UPDATE ${schema}.${p}cursor c SET position = p_position[i], updated_at = now()
       WHERE c.subscription_id = p_subscription AND c.topic_id = p_topic[i] AND c.partition = p_partition[i]
         AND c.epoch = p_epoch[i] AND c.position = p_expected[i];
      moved := FOUND;
    END IF;
    IF held AND NOT moved THEN
      SELECT c.epoch INTO stored_epoch FROM ${schema}.${p}cursor c
       WHERE c.subscription_id = p_subscription AND c.topic_id = p_topic[i] AND c.partition = p_partition[i];
      same_epoch := stored_epoch IS NOT DISTINCT FROM p_epoch[i];
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
