-- The log becomes a table partitioned by range of sequenced_at, so that retention can drop a whole time
-- segment instead of deleting its rows one by one (no dead tuples, no vacuum debt). It starts as a single
-- segment that holds every event, old and new ([MINVALUE, MAXVALUE)): reads cost what they cost on a plain
-- table. The retention loop splits the newest (open) segment into segments of a bounded width only while a
-- topic's retention by age is long enough to use them (docs/guide/operations.md, "Retention by segments").
--
-- The primary key gains sequenced_at, the partition key, as PostgreSQL requires. (topic_id, partition, seq)
-- stays unique: the sequencer hands out each sequence once, under the lock of the partition row.

ALTER TABLE ${schema}.${p}log RENAME TO ${p}log_s0;
ALTER INDEX ${schema}.${p}log_pkey RENAME TO ${p}log_s0_seq;
ALTER INDEX ${schema}.${p}log_created RENAME TO ${p}log_s0_created;

CREATE TABLE ${schema}.${p}log (
  LIKE ${schema}.${p}log_s0 INCLUDING DEFAULTS INCLUDING STORAGE
) PARTITION BY RANGE (sequenced_at);
ALTER TABLE ${schema}.${p}log ADD CONSTRAINT ${p}log_pkey PRIMARY KEY (topic_id, partition, seq, sequenced_at);
CREATE INDEX ${p}log_created ON ${schema}.${p}log (created_at);

-- Attaching builds the new primary key's index on the old table (a table has one primary key: the old one
-- goes first) and adopts its created_at index.
ALTER TABLE ${schema}.${p}log_s0 DROP CONSTRAINT ${p}log_s0_seq;
ALTER TABLE ${schema}.${p}log ATTACH PARTITION ${schema}.${p}log_s0 FOR VALUES FROM (MINVALUE) TO (MAXVALUE);

-- The segments and their bounds, written in the same transaction as the DDL that changes them. Segment n is
-- the table ${p}log_s<n>. lower_bound NULL: from the first event; upper_bound NULL: the open segment, which
-- takes every newer event (exactly one).
CREATE TABLE ${schema}.${p}log_segment (
  number       bigint       PRIMARY KEY,
  lower_bound  timestamptz,
  upper_bound  timestamptz,
  created_at   timestamptz  NOT NULL DEFAULT now()
);
INSERT INTO ${schema}.${p}log_segment (number, lower_bound, upper_bound) VALUES (0, NULL, NULL);

-- Ends the open segment at p_upper and opens a new one from there, in one short transaction that holds the
-- log's ACCESS EXCLUSIVE lock for a few catalog changes (at most p_lock_timeout waiting for it). Attaching
-- the old open segment with its new bound checks its rows against the bound: that is a scan, so the caller
-- seals a segment holding many rows first (log_seal, log_seal_validate), which lets the check be skipped.
CREATE FUNCTION ${schema}.${p}log_split(p_upper timestamptz, p_lock_timeout text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_open   ${schema}.${p}log_segment;
  v_next   bigint;
  v_table  text;
BEGIN
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  LOCK TABLE ${schema}.${p}log IN ACCESS EXCLUSIVE MODE;
  SELECT * INTO v_open FROM ${schema}.${p}log_segment WHERE upper_bound IS NULL FOR UPDATE;
  IF v_open.lower_bound IS NOT NULL AND p_upper <= v_open.lower_bound THEN
    RAISE EXCEPTION 'log segment % starts at %, it cannot end at %', v_open.number, v_open.lower_bound, p_upper;
  END IF;
  SELECT max(number) + 1 INTO v_next FROM ${schema}.${p}log_segment;
  v_table := '${p}log_s' || v_open.number;
  EXECUTE format('ALTER TABLE %I.%I DETACH PARTITION %I.%I', '${schema}', '${p}log', '${schema}', v_table);
  IF v_open.lower_bound IS NULL THEN
    EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (MINVALUE) TO (%L)',
                   '${schema}', '${p}log', '${schema}', v_table, p_upper);
  ELSE
    EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                   '${schema}', '${p}log', '${schema}', v_table, v_open.lower_bound, p_upper);
  END IF;
  EXECUTE format('ALTER TABLE %I.%I DROP CONSTRAINT IF EXISTS %I', '${schema}', v_table, '${p}log_seal');
  EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.%I FOR VALUES FROM (%L) TO (MAXVALUE)',
                 '${schema}', '${p}log_s' || v_next, '${schema}', '${p}log', p_upper);
  UPDATE ${schema}.${p}log_segment SET upper_bound = p_upper WHERE number = v_open.number;
  INSERT INTO ${schema}.${p}log_segment (number, lower_bound, upper_bound) VALUES (v_next, p_upper, NULL);
  RETURN v_next;
END $$;

-- Step one of splitting an open segment that holds many rows: a CHECK constraint, not yet validated, that
-- states the bound the split will give it. New rows are checked against it at once (p_upper lies ahead of
-- the clock, so none fails); log_seal_validate then checks the old rows without blocking writers.
CREATE FUNCTION ${schema}.${p}log_seal(p_upper timestamptz, p_lock_timeout text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_open ${schema}.${p}log_segment;
BEGIN
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  SELECT * INTO v_open FROM ${schema}.${p}log_segment WHERE upper_bound IS NULL;
  EXECUTE format('ALTER TABLE %I.%I DROP CONSTRAINT IF EXISTS %I', '${schema}', '${p}log_s' || v_open.number,
                 '${p}log_seal');
  IF v_open.lower_bound IS NULL THEN
    EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I CHECK (sequenced_at < %L) NOT VALID',
                   '${schema}', '${p}log_s' || v_open.number, '${p}log_seal', p_upper);
  ELSE
    EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I CHECK (sequenced_at >= %L AND sequenced_at < %L) NOT VALID',
                   '${schema}', '${p}log_s' || v_open.number, '${p}log_seal', v_open.lower_bound, p_upper);
  END IF;
END $$;

-- p_timeout bounds the scan: it must end well before the seal's bound, or new events would be refused.
CREATE FUNCTION ${schema}.${p}log_seal_validate(p_timeout text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_number bigint;
BEGIN
  PERFORM set_config('statement_timeout', p_timeout, true);
  SELECT number INTO v_number FROM ${schema}.${p}log_segment WHERE upper_bound IS NULL;
  EXECUTE format('ALTER TABLE %I.%I VALIDATE CONSTRAINT %I', '${schema}', '${p}log_s' || v_number, '${p}log_seal');
END $$;

-- Takes a seal back (a split that did not happen must not leave a bound on the open segment).
CREATE FUNCTION ${schema}.${p}log_unseal(p_lock_timeout text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_number bigint;
BEGIN
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  SELECT number INTO v_number FROM ${schema}.${p}log_segment WHERE upper_bound IS NULL;
  EXECUTE format('ALTER TABLE %I.%I DROP CONSTRAINT IF EXISTS %I', '${schema}', '${p}log_s' || v_number,
                 '${p}log_seal');
END $$;

-- Whether every event of a closed segment may go: for each (topic, partition) with events in it, the topic's
-- retention has passed them all (by age: the segment ended at least retention_ms ago, and an event is never
-- created after it is sequenced; by count: the newest of them is retention_max_events behind the partition's
-- last), no subscription still owes them (keep_unconsumed, unless abandoned), and none is parked. The same
-- rules as the row-by-row purge (purge_log, purge_log_by_count), applied to a whole segment. A few index
-- probes per partition: the newest sequence of each partition in the segment.
CREATE FUNCTION ${schema}.${p}log_segment_expired(p_number bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_upper   timestamptz;
  v_kept    boolean;
BEGIN
  SELECT upper_bound INTO v_upper FROM ${schema}.${p}log_segment WHERE number = p_number;
  IF v_upper IS NULL OR v_upper > now() THEN
    RETURN false;
  END IF;
  EXECUTE format(
    'SELECT EXISTS (
       SELECT 1
         FROM %1$I.%2$I pp
         JOIN %1$I.%3$I t ON t.id = pp.topic_id
        CROSS JOIN LATERAL (SELECT max(s.seq) AS max_seq FROM %1$I.%4$I s
                             WHERE s.topic_id = pp.topic_id AND s.partition = pp.partition) m
        WHERE m.max_seq IS NOT NULL
          AND NOT ((    (t.retention_ms IS NOT NULL
                         AND $1 <= now() - t.retention_ms * interval ''1 millisecond'')
                     OR (t.retention_max_events IS NOT NULL
                         AND m.max_seq <= pp.last_seq - t.retention_max_events))
                   AND (NOT t.retention_keep_unconsumed
                        OR m.max_seq <= (SELECT coalesce(min(c.position), m.max_seq)
                                           FROM %1$I.%5$I c
                                           JOIN %1$I.%6$I sub ON sub.id = c.subscription_id
                                          WHERE c.topic_id = pp.topic_id AND c.partition = pp.partition
                                            AND sub.active_at >= now() - t.retention_abandon_ms
                                                                         * interval ''1 millisecond''))))
       OR EXISTS (SELECT 1 FROM %1$I.%7$I k
                    JOIN %1$I.%4$I s ON s.topic_id = k.topic_id AND s.partition = k.partition AND s.seq = k.seq)',
    '${schema}', '${p}partition', '${p}topic', '${p}log_s' || p_number, '${p}cursor', '${p}subscription',
    '${p}parked')
    INTO v_kept USING v_upper;
  RETURN NOT v_kept;
END $$;

-- Drops a closed segment whose events may all go; returns about how many it held (-1: it may not go, or is
-- gone).
-- The check runs again under the log's ACCESS EXCLUSIVE lock: a transaction that began before the segment's
-- end may still have written into it, and a consumer may have parked one of its events since.
CREATE FUNCTION ${schema}.${p}log_drop_segment(p_number bigint, p_lock_timeout text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_rows bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ${schema}.${p}log_segment WHERE number = p_number AND upper_bound IS NOT NULL) THEN
    RETURN -1;
  END IF;
  -- Counted before the lock is taken: a count under it would hold every reader and writer up for a scan.
  EXECUTE format('SELECT count(*) FROM %I.%I', '${schema}', '${p}log_s' || p_number) INTO v_rows;
  PERFORM set_config('lock_timeout', p_lock_timeout, true);
  LOCK TABLE ${schema}.${p}log IN ACCESS EXCLUSIVE MODE;
  IF NOT ${schema}.${p}log_segment_expired(p_number) THEN
    RETURN -1;
  END IF;
  EXECUTE format('DROP TABLE %I.%I', '${schema}', '${p}log_s' || p_number);
  DELETE FROM ${schema}.${p}log_segment WHERE number = p_number;
  RETURN v_rows;
END $$;
