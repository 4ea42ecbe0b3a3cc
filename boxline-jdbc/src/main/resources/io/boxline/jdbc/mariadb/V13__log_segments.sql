-- The log becomes a table partitioned by range of sequenced_at, so that retention can drop a whole time
-- segment instead of deleting its rows one by one (no purge debt, no fragmented pages). It starts as one
-- segment, s0, that holds every event, old and new: reads cost what they cost on a plain table. The retention
-- loop splits the newest (open) segment into segments of a bounded width only while a topic's retention by
-- age is long enough to use them (docs/guide/operations.md, "Retention by segments"). Segment n is the table
-- partition s<n>.
--
-- The primary key gains sequenced_at, the partition key, as MariaDB requires. (topic_id, partition, seq)
-- stays unique: the sequencer hands out each sequence once, under the lock of the partition row. This
-- statement copies the log once.
ALTER TABLE ${schema}.${p}log
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (topic_id, `partition`, seq, sequenced_at)
  PARTITION BY RANGE (sequenced_at) (PARTITION s0 VALUES LESS THAN MAXVALUE);

-- The segments' bounds (epoch microseconds; NULL: open), copied from information_schema.PARTITIONS by each
-- retention run, for the row-by-row purge to tell which segment an event is in.
CREATE TABLE IF NOT EXISTS ${schema}.${p}log_segment (
  number       BIGINT  NOT NULL PRIMARY KEY,
  lower_bound  BIGINT  NULL,
  upper_bound  BIGINT  NULL
) ENGINE = InnoDB;
