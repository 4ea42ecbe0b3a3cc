\set ON_ERROR_STOP on
UPDATE cost_explain.sequencer_lease SET owner = 'explain', expires_at = now() + interval '1 hour';
INSERT INTO cost_explain.outbox (event_id, topic_id, partition, event_key, event_type, source, content_type, payload, headers, created_at)
SELECT gen_random_uuid(), topic_id, partition, event_key, event_type, source, content_type, payload, headers, now() FROM cost_explain.log ORDER BY seq DESC LIMIT 8;
VACUUM cost_explain.outbox;
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_analyze = on;
SET auto_explain.log_buffers = on;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_timing = on;
SET client_min_messages = log;
BEGIN;
-- warm the function's plan cache first (kept plans), then measure a second call in the same session
SELECT kind, leased, taken, heads FROM cost_explain.sequence_batch(9, 'explain', 100, 'cost_explain_log', 7000, true, true) WHERE kind = 0;
ROLLBACK;
BEGIN;
SELECT kind, leased, taken, heads FROM cost_explain.sequence_batch(9, 'explain', 100, 'cost_explain_log', 7000, true, true) WHERE kind = 0;
ROLLBACK;
-- consumer fetch (read): one partition after a cursor, batch 100
EXPLAIN (ANALYZE, BUFFERS) SELECT seq, event_id, event_key, event_type, source, content_type, payload, headers::text, created_at, deliver_at
  FROM cost_explain.log WHERE topic_id = 1 AND partition = 3 AND seq > 2000 ORDER BY seq LIMIT 100;
-- cursor group commit: 4 moves, two of them handed over (log check)
BEGIN;
SELECT * FROM cost_explain.commit_cursors(1, '{1,1,1,1}', '{0,1,2,3}', '{0,0,0,0}', '{5,5,5,5}', '{0,0,0,0}', '{1,0,1,0}', '{5,0,5,0}', '{1,1,6,1}',
  ARRAY(SELECT event_id FROM cost_explain.log WHERE topic_id=1 AND partition=0 AND seq BETWEEN 1 AND 5 ORDER BY seq) || ARRAY(SELECT event_id FROM cost_explain.log WHERE topic_id=1 AND partition=2 AND seq BETWEEN 1 AND 5 ORDER BY seq));
ROLLBACK;
BEGIN;
SELECT * FROM cost_explain.commit_cursors(1, '{1,1,1,1}', '{0,1,2,3}', '{0,0,0,0}', '{5,5,5,5}', '{0,0,0,0}', '{1,0,1,0}', '{5,0,5,0}', '{1,1,6,1}',
  ARRAY(SELECT event_id FROM cost_explain.log WHERE topic_id=1 AND partition=0 AND seq BETWEEN 1 AND 5 ORDER BY seq) || ARRAY(SELECT event_id FROM cost_explain.log WHERE topic_id=1 AND partition=2 AND seq BETWEEN 1 AND 5 ORDER BY seq));
ROLLBACK;
