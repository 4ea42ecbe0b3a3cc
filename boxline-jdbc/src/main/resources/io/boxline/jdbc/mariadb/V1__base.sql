-- Boxline schema, version 1 (MariaDB 10.6+ / MySQL 8.0+).
-- ${schema} (a database) and ${p} (table prefix) are validated identifiers substituted by the migrator;
-- nothing else is. Statements end with ";" at the end of a line; DELIMITER lines work as in the mysql client.
--
-- Conventions of this dialect (see docs/mariadb.md):
-- * Times are BIGINT microseconds since 1970-01-01 UTC, taken from the server clock with
--   UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6)). TIMESTAMP ends in 2038 and DATETIME has no zone, and
--   both would depend on the session and JVM time zones; an integer depends on neither.
-- * Names are case-sensitive: every table uses utf8mb4_bin.
-- * `partition` is a reserved word and is always quoted; `${p}cursor` and `${p}member` are always
--   qualified by the database name, where reserved words need no quotes.
-- * Keys of unbounded length (idempotency keys, inbox keys) are indexed by their SHA-256.
-- * Every statement is re-runnable (IF NOT EXISTS / INSERT IGNORE): DDL commits implicitly here, so a
--   migration interrupted half-way is simply run again.

CREATE TABLE IF NOT EXISTS ${schema}.${p}namespace (
  id          BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  path        VARCHAR(512)  NOT NULL,
  parent_id   BIGINT,
  created_at  BIGINT        NOT NULL,
  UNIQUE KEY ${p}namespace_path (path),
  FOREIGN KEY (parent_id) REFERENCES ${schema}.${p}namespace (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ${schema}.${p}topic (
  id                         BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  namespace_id               BIGINT        NOT NULL,
  name                       VARCHAR(128)  NOT NULL,
  partitions                 INT           NOT NULL CHECK (partitions BETWEEN 1 AND 65536),
  created_at                 BIGINT        NOT NULL,
  -- Retention by age (NULL: no age bound); keep_unconsumed: never delete what a cursor has not passed.
  retention_ms               BIGINT,
  retention_keep_unconsumed  BOOLEAN       NOT NULL DEFAULT TRUE,
  -- Retention by size: each partition keeps its newest retention_max_events events (0: no bound).
  retention_max_events       BIGINT        NOT NULL DEFAULT 0,
  UNIQUE KEY ${p}topic_name (namespace_id, name),
  FOREIGN KEY (namespace_id) REFERENCES ${schema}.${p}namespace (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One row per partition: the last sequence handed out. Only the sequencer writes it. seq_version is the
-- sequencer batch that last advanced the partition, so the wake-up poll reads only what changed.
CREATE TABLE IF NOT EXISTS ${schema}.${p}partition (
  topic_id     BIGINT  NOT NULL,
  `partition`  INT     NOT NULL,
  last_seq     BIGINT  NOT NULL DEFAULT 0,
  seq_version  BIGINT  NOT NULL DEFAULT 0,
  PRIMARY KEY (topic_id, `partition`),
  KEY ${p}partition_version (seq_version),
  FOREIGN KEY (topic_id) REFERENCES ${schema}.${p}topic (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Producers append here in their own transactions: one cheap insert, no shared row locked.
-- partition is NULL when the SQL-level publish procedure wrote the row; the sequencer assigns it.
CREATE TABLE IF NOT EXISTS ${schema}.${p}outbox (
  id            BIGINT     NOT NULL AUTO_INCREMENT PRIMARY KEY,
  event_id      CHAR(36)   CHARACTER SET ascii NOT NULL,
  topic_id      BIGINT     NOT NULL,
  `partition`   INT,
  event_key     TEXT,
  event_type    TEXT       NOT NULL,
  source        TEXT,
  content_type  TEXT       NOT NULL,
  payload       LONGBLOB   NOT NULL,
  headers       LONGTEXT,
  created_at    BIGINT     NOT NULL,
  deliver_at    BIGINT
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The ordered log: gap-free sequence per (topic, partition), append-only.
CREATE TABLE IF NOT EXISTS ${schema}.${p}log (
  topic_id      BIGINT     NOT NULL,
  `partition`   INT        NOT NULL,
  seq           BIGINT     NOT NULL,
  event_id      CHAR(36)   CHARACTER SET ascii NOT NULL,
  event_key     TEXT,
  event_type    TEXT       NOT NULL,
  source        TEXT,
  content_type  TEXT       NOT NULL,
  payload       LONGBLOB   NOT NULL,
  headers       LONGTEXT,
  created_at    BIGINT     NOT NULL,
  sequenced_at  BIGINT     NOT NULL,
  deliver_at    BIGINT,
  PRIMARY KEY (topic_id, `partition`, seq),
  KEY ${p}log_created (created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Idempotent publish: the first event stored with a key on a topic wins. key_hash = SHA-256 of the key.
CREATE TABLE IF NOT EXISTS ${schema}.${p}idempotency (
  topic_id         BIGINT     NOT NULL,
  key_hash         BINARY(32) NOT NULL,
  idempotency_key  TEXT       NOT NULL,
  event_id         CHAR(36)   CHARACTER SET ascii NOT NULL,
  created_at       BIGINT     NOT NULL,
  PRIMARY KEY (topic_id, key_hash),
  KEY ${p}idempotency_age (created_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ${schema}.${p}subscription (
  id          BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name        VARCHAR(128)  NOT NULL,
  created_at  BIGINT        NOT NULL,
  UNIQUE KEY ${p}subscription_name (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS ${schema}.${p}subscription_topic (
  subscription_id  BIGINT  NOT NULL,
  topic_id         BIGINT  NOT NULL,
  PRIMARY KEY (subscription_id, topic_id),
  FOREIGN KEY (subscription_id) REFERENCES ${schema}.${p}subscription (id),
  FOREIGN KEY (topic_id) REFERENCES ${schema}.${p}topic (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- position = sequence of the last handled event; epoch fences consumers that lost the partition.
CREATE TABLE IF NOT EXISTS ${schema}.${p}cursor (
  subscription_id  BIGINT        NOT NULL,
  topic_id         BIGINT        NOT NULL,
  `partition`      INT           NOT NULL,
  position         BIGINT        NOT NULL,
  epoch            BIGINT        NOT NULL DEFAULT 0,
  owner            VARCHAR(255),
  updated_at       BIGINT        NOT NULL,
  PRIMARY KEY (subscription_id, topic_id, `partition`),
  -- Retention asks for the slowest cursor of a partition across subscriptions.
  KEY ${p}cursor_partition (topic_id, `partition`),
  FOREIGN KEY (subscription_id) REFERENCES ${schema}.${p}subscription (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The single sequencer lease of this schema. It also carries the two counters that the wake-up poll reads
-- (MariaDB has no LISTEN/NOTIFY): log_version grows with every sequencer batch that appended events,
-- wake_all with every redrive of dead letters ("everyone look at everything").
CREATE TABLE IF NOT EXISTS ${schema}.${p}sequencer_lease (
  name         VARCHAR(64)   NOT NULL PRIMARY KEY,
  owner        VARCHAR(255),
  epoch        BIGINT        NOT NULL DEFAULT 0,
  expires_at   BIGINT        NOT NULL DEFAULT 0,
  log_version  BIGINT        NOT NULL DEFAULT 0,
  wake_all     BIGINT        NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT IGNORE INTO ${schema}.${p}sequencer_lease (name) VALUES ('sequencer');
