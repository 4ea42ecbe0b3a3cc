-- Loop of CALLS commit_cursors calls, each moving 4 of the 8 partitions by 3 handed-over events (the
-- log check included), committed one by one; prints the mean server time per call. FN is replaced by run.sh.
DO $$
DECLARE
  pos bigint[] := ARRAY[0,0,0,0,0,0,0,0];
  k int; j int; p int;
  t_topic bigint[]; t_part int[]; t_exp bigint[]; t_pos bigint[]; t_epoch bigint[];
  t_first bigint[]; t_last bigint[]; t_fid int[]; t_ids uuid[];
  ids uuid[];
  t0 timestamptz; total interval := '0'; n int := 0; bad int := 0; r record;
BEGIN
  FOR k IN 1 .. :calls LOOP
    t_topic := '{}'; t_part := '{}'; t_exp := '{}'; t_pos := '{}'; t_epoch := '{}';
    t_first := '{}'; t_last := '{}'; t_fid := '{}'; t_ids := '{}';
    FOR j IN 0 .. 3 LOOP
      p := (k * 4 + j) % 8;
      SELECT array_agg(event_id ORDER BY seq) INTO ids FROM ccb.log
       WHERE topic_id = 1 AND partition = p AND seq BETWEEN pos[p+1] + 1 AND pos[p+1] + 3;
      t_topic := t_topic || 1::bigint; t_part := t_part || p; t_exp := t_exp || pos[p+1];
      t_pos := t_pos || (pos[p+1] + 3); t_epoch := t_epoch || 7::bigint;
      t_first := t_first || (pos[p+1] + 1); t_last := t_last || (pos[p+1] + 3);
      t_fid := t_fid || (coalesce(array_length(t_ids, 1), 0) + 1); t_ids := t_ids || ids;
      pos[p+1] := pos[p+1] + 3;
    END LOOP;
    t0 := clock_timestamp();
    FOR r IN SELECT * FROM ccb.FN(1, t_topic, t_part, t_exp, t_pos, t_epoch, t_first, t_last, t_fid, t_ids) LOOP
      IF NOT r.moved THEN bad := bad + 1; END IF;
    END LOOP;
    COMMIT;
    total := total + (clock_timestamp() - t0);
    n := n + 1;
  END LOOP;
  RAISE NOTICE 'calls % not moved % mean per call % us', n, bad, round(extract(epoch from total) * 1e6 / n, 1);
END $$;
