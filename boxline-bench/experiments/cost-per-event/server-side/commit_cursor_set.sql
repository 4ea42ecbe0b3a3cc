-- The trial: the cursor moves of one commit_cursors call as ONE statement (an UPDATE ... FROM the moves,
-- the log checked per move in a subquery) instead of a PL/pgSQL loop with two statements per move.
CREATE OR REPLACE FUNCTION ccb.commit_cursor_set(p_subscription bigint, p_topic bigint[], p_partition integer[],
                                             p_expected bigint[], p_position bigint[], p_epoch bigint[],
                                             p_first_seq bigint[], p_last_seq bigint[], p_first_id integer[],
                                             p_ids uuid[])
RETURNS TABLE (held boolean, moved boolean, same_epoch boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  PERFORM set_config('plan_cache_mode', 'force_generic_plan', true),
          set_config('enable_seqscan', 'off', true),
          set_config('enable_hashjoin', 'off', true),
          set_config('enable_mergejoin', 'off', true),
          set_config('synchronous_commit', 'off', true),
          set_config('jit', 'off', true);
  RETURN QUERY
  WITH v AS (
    SELECT i, p_topic[i] AS topic_id, p_partition[i] AS partition, p_epoch[i] AS epoch,
           p_expected[i] AS expected, p_position[i] AS position,
           p_first_seq[i] = 0
           OR (SELECT count(*) FROM ccb.log l
                WHERE l.topic_id = p_topic[i] AND l.partition = p_partition[i]
                  AND l.seq BETWEEN p_first_seq[i] AND p_last_seq[i]
                  AND l.event_id = p_ids[p_first_id[i] + (l.seq - p_first_seq[i])::integer])
              = p_last_seq[i] - p_first_seq[i] + 1 AS held
      FROM generate_subscripts(p_topic, 1) i
  ), moved AS (
    UPDATE ccb.cursor c SET position = v.position, updated_at = now()
      FROM v
     WHERE v.held AND c.subscription_id = p_subscription
       AND c.topic_id = ANY (p_topic) AND c.partition = ANY (p_partition) AND c.topic_id = v.topic_id
       AND c.partition = v.partition AND c.epoch = v.epoch AND c.position = v.expected
    RETURNING v.i
  )
  SELECT v.held, m.i IS NOT NULL,
         m.i IS NOT NULL OR NOT v.held
         OR (SELECT c.epoch FROM ccb.cursor c
              WHERE c.subscription_id = p_subscription AND c.topic_id = v.topic_id
                AND c.partition = v.partition) IS NOT DISTINCT FROM v.epoch
    FROM v LEFT JOIN moved m ON m.i = v.i
   ORDER BY v.i;
END
$$;
