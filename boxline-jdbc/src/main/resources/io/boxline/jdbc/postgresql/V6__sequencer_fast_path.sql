-- Rows published from SQL without a partition (the sequencer assigns it with the Java partitioner) are
-- found through this small index, so the one-statement sequencer batch can stop in front of them.
CREATE INDEX ${p}outbox_unassigned ON ${schema}.${p}outbox (id) WHERE partition IS NULL;

-- Lets the one-statement sequencer batch abort itself (and so roll back) with a clear message.
CREATE FUNCTION ${schema}.${p}sequencer_abort(message text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%', message USING ERRCODE = 'data_exception';
END
$$;
