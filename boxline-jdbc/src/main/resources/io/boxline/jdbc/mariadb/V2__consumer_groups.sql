-- Boxline schema, version 2 (MariaDB / MySQL): consumer groups coordinated in the database.
-- A group is a subscription, named by the subscription's name.

-- Live members: a member is alive until expires_at, which it pushes forward at every check-in.
CREATE TABLE IF NOT EXISTS ${schema}.${p}member (
  group_name    VARCHAR(128)  NOT NULL,
  member_id     VARCHAR(255)  NOT NULL,
  weight        DOUBLE        NOT NULL,
  heartbeat_at  BIGINT        NOT NULL,
  expires_at    BIGINT        NOT NULL,
  PRIMARY KEY (group_name, member_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One row per partition ever leased in a group. The row outlives its owners so that the epoch only grows.
CREATE TABLE IF NOT EXISTS ${schema}.${p}lease (
  group_name   VARCHAR(128)  NOT NULL,
  topic_id     BIGINT        NOT NULL,
  `partition`  INT           NOT NULL,
  owner        VARCHAR(255),
  epoch        BIGINT        NOT NULL,
  releasing    BOOLEAN       NOT NULL DEFAULT FALSE,
  since        BIGINT        NOT NULL,
  PRIMARY KEY (group_name, topic_id, `partition`)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Group policies: group_name '' is the cluster-wide default; other rows override it per subscription.
CREATE TABLE IF NOT EXISTS ${schema}.${p}group_policy (
  group_name           VARCHAR(128)  NOT NULL PRIMARY KEY,
  check_in_rate        DOUBLE        NOT NULL,
  min_check_in_ms      BIGINT        NOT NULL,
  deadline_multiplier  DOUBLE        NOT NULL,
  slack                DOUBLE        NOT NULL,
  release_grace_ms     BIGINT        NOT NULL,
  idle_release_ms      BIGINT        NOT NULL,
  -- The batch size of every consumer of the group (0: each consumer's own).
  batch_size           INT           NOT NULL DEFAULT 0,
  updated_at           BIGINT        NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
