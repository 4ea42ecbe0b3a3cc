-- 1,000 sequencer batches of 23 events; run.sh puts the batch statement in place of BATCH_QUERY: the
-- sequence_batch function as Boxline calls it, or the function's own query run directly (no PL/pgSQL wrapper,
-- no RETURN QUERY), taken from the migration that defines it.
DO $$
DECLARE t0 timestamptz; total interval := '0'; n int := 0; taken bigint := 0; r record;
BEGIN
  LOOP
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true);
    t0 := clock_timestamp();
    FOR r IN BATCH_QUERY LOOP
      IF r.kind = 1 THEN taken := taken + 1; END IF;
    END LOOP;
    COMMIT;
    total := total + (clock_timestamp() - t0);
    n := n + 1;
    EXIT WHEN n >= 1000;
  END LOOP;
  RAISE NOTICE 'batches % events % per batch % us, per event % us', n, taken,
    round(extract(epoch from total) * 1e6 / n, 1), round(extract(epoch from total) * 1e6 / greatest(taken, 1), 1);
END $$;
