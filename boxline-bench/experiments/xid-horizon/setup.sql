-- Tables for the experiment, next to Boxline's own (created from PrintDdl in the same schema, written SCHEMA).
CREATE TABLE SCHEMA.bench_order (id bigserial PRIMARY KEY, customer text NOT NULL, amount_cents bigint NOT NULL,
                                 status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
-- The raw baseline's table: Boxline's outbox columns, nothing else.
CREATE TABLE SCHEMA.plain_event (id bigserial PRIMARY KEY, event_id uuid NOT NULL, topic_id bigint NOT NULL,
                                 partition integer, event_key text, event_type text NOT NULL, source text,
                                 content_type text NOT NULL, payload bytea NOT NULL, headers jsonb,
                                 created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO SCHEMA.namespace (path) VALUES ('probe');
INSERT INTO SCHEMA.topic (namespace_id, name, partitions) SELECT id, 'orders', 8 FROM SCHEMA.namespace;
INSERT INTO SCHEMA.partition (topic_id, partition) SELECT t.id, g FROM SCHEMA.topic t, generate_series(0, 7) g;
INSERT INTO SCHEMA.sequencer_lease (name, owner, epoch, expires_at) VALUES ('sequencer', 'probe', 1, 'infinity')
  ON CONFLICT (name) DO UPDATE SET owner = 'probe', expires_at = 'infinity';

-- The alternative: the outbox keeps its rows and records the inserting transaction; the sequencer takes the rows
-- that became visible since its last snapshot and writes one range row per partition and batch (no copy, no
-- delete).
CREATE TABLE SCHEMA.outbox_xid (id bigserial PRIMARY KEY, event_id uuid NOT NULL, topic_id bigint NOT NULL,
                                partition integer, event_key text, event_type text NOT NULL, source text,
                                content_type text NOT NULL, payload bytea NOT NULL, headers jsonb,
                                created_at timestamptz NOT NULL DEFAULT now(),
                                xid xid8 NOT NULL DEFAULT pg_current_xact_id());
CREATE INDEX outbox_xid_xid ON SCHEMA.outbox_xid (xid);
CREATE TABLE SCHEMA.seq_range (topic_id bigint, partition int, first_seq bigint, last_seq bigint, ids bigint[],
                               PRIMARY KEY (topic_id, partition, first_seq));
CREATE TABLE SCHEMA.seq_snapshot (id int PRIMARY KEY, snap pg_snapshot NOT NULL);
INSERT INTO SCHEMA.seq_snapshot VALUES (1, pg_current_snapshot());

-- Must run in a REPEATABLE READ transaction, so that pg_current_snapshot() is the snapshot its scan used.
CREATE FUNCTION SCHEMA.sequence_by_snapshot()
RETURNS TABLE (topic_id bigint, partition int, seq bigint, event_id uuid, payload bytea)
LANGUAGE plpgsql AS $$
DECLARE prev pg_snapshot;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true),
          set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true),
          set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true);
  SELECT s.snap INTO prev FROM SCHEMA.seq_snapshot s WHERE s.id = 1;
  RETURN QUERY
  WITH fresh AS (
    SELECT o.id, o.topic_id, o.partition, o.event_id, o.payload,
           row_number() OVER (PARTITION BY o.topic_id, o.partition ORDER BY o.id) AS rn
      FROM SCHEMA.outbox_xid o
     WHERE o.xid >= pg_snapshot_xmin(prev) AND NOT pg_visible_in_snapshot(o.xid, prev)
  ), per AS (
    SELECT f.topic_id, f.partition, array_agg(f.id ORDER BY f.id) AS ids, count(*) AS n FROM fresh f GROUP BY 1, 2
  ), advanced AS (
    UPDATE SCHEMA.partition p SET last_seq = p.last_seq + per.n FROM per
     WHERE p.topic_id = per.topic_id AND p.partition = per.partition
    RETURNING p.topic_id, p.partition, p.last_seq, per.n, per.ids
  ), ranges AS (
    INSERT INTO SCHEMA.seq_range SELECT a.topic_id, a.partition, a.last_seq - a.n + 1, a.last_seq, a.ids
      FROM advanced a RETURNING 1
  ), moved AS (
    UPDATE SCHEMA.seq_snapshot SET snap = pg_current_snapshot() WHERE id = 1 RETURNING 1
  )
  SELECT f.topic_id, f.partition, a.last_seq - a.n + f.rn, f.event_id, f.payload
    FROM fresh f JOIN advanced a ON a.topic_id = f.topic_id AND a.partition = f.partition
   WHERE (SELECT count(*) FROM ranges) >= 0 AND (SELECT count(*) FROM moved) = 1;
END $$;
