-- The cursor moves of several subscriptions in one statement: the consumers of one instance commit what
-- they handled at the same moment together, so the primary sees one statement and one transaction per
-- moment instead of one per subscription. The same compare-and-set per cursor as commit_cursors (V9),
-- which stays for instances not yet upgraded.
CREATE FUNCTION ${schema}.${p}commit_cursors_across(p_subscription bigint[], p_topic bigint[],
                                                    p_partition integer[], p_expected bigint[],
                                                    p_position bigint[], p_epoch bigint[],
                                                    p_first_seq bigint[], p_last_seq bigint[],
                                                    p_first_id integer[], p_ids uuid[])
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
       WHERE c.subscription_id = p_subscription[i] AND c.topic_id = p_topic[i]
         AND c.partition = p_partition[i] AND c.epoch = p_epoch[i] AND c.position = p_expected[i];
      moved := FOUND;
    END IF;
    IF held AND NOT moved THEN
      SELECT c.epoch INTO stored_epoch FROM ${schema}.${p}cursor c
       WHERE c.subscription_id = p_subscription[i] AND c.topic_id = p_topic[i]
         AND c.partition = p_partition[i];
      same_epoch := stored_epoch IS NOT DISTINCT FROM p_epoch[i];
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
