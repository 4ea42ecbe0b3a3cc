-- Boxline schema, version 2 (H2): consumer groups coordinated in the database.
-- A group is a subscription, named by the subscription's name.

-- Live members: a member is alive until expires_at, which it pushes forward at every check-in.
CREATE TABLE IF NOT EXISTS ${schema}.${p}member (
  group_name    VARCHAR(128)  NOT NULL,
  member_id     VARCHAR(255)  NOT NULL,
  weight        DOUBLE PRECISION NOT NULL,
  heartbeat_at  BIGINT        NOT NULL,
  expires_at    BIGINT        NOT NULL,
  PRIMARY KEY (group_name, member_id)
);

-- One row per partition ever leased in a group. The row outlives its owners so that the epoch only grows.
CREATE TABLE IF NOT EXISTS ${schema}.${p}lease (
  group_name   VARCHAR(128)  NOT NULL,
  topic_id     BIGINT        NOT NULL,
  "PARTITION"  INT           NOT NULL,
  owner        VARCHAR(255),
  epoch        BIGINT        NOT NULL,
  releasing    BOOLEAN       DEFAULT FALSE NOT NULL,
  since        BIGINT        NOT NULL,
  PRIMARY KEY (group_name, topic_id, "PARTITION")
);

-- Group policies: group_name '' is the cluster-wide default; other rows override it per subscription.
CREATE TABLE IF NOT EXISTS ${schema}.${p}group_policy (
  group_name           VARCHAR(128)  NOT NULL PRIMARY KEY,
  check_in_rate        DOUBLE PRECISION NOT NULL,
  min_check_in_ms      BIGINT        NOT NULL,
  deadline_multiplier  DOUBLE PRECISION NOT NULL,
  slack                DOUBLE PRECISION NOT NULL,
  release_grace_ms     BIGINT        NOT NULL,
  idle_release_ms      BIGINT        NOT NULL,
  -- The batch size of every consumer of the group (0: each consumer's own).
  batch_size           INT           DEFAULT 0 NOT NULL,
  updated_at           BIGINT        NOT NULL
);
