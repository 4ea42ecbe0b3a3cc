-- A topic of 8 partitions with 10,000 events each in the log, one subscription with its 8 cursors.
INSERT INTO ccb.namespace (path) VALUES ('acme');
INSERT INTO ccb.topic (namespace_id, name, partitions) SELECT id, 't', 8 FROM ccb.namespace;
INSERT INTO ccb.partition (topic_id, partition, last_seq) SELECT 1, p, 10000 FROM generate_series(0,7) p;
INSERT INTO ccb.log (topic_id, partition, seq, event_id, event_type, content_type, payload, created_at)
  SELECT 1, p, g, gen_random_uuid(), 'x', 'application/json', convert_to(repeat('x',200),'UTF8'), now()
    FROM generate_series(0,7) p, generate_series(1,10000) g;
INSERT INTO ccb.subscription (name) VALUES ('s');
INSERT INTO ccb.subscription_topic (subscription_id, topic_id) VALUES (1, 1);
INSERT INTO ccb.cursor (subscription_id, topic_id, partition, position, epoch) SELECT 1, 1, p, 0, 7 FROM generate_series(0,7) p;
VACUUM ANALYZE ccb.log; VACUUM ANALYZE ccb.cursor;
