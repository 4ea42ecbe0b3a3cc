-- Boxline schema, version 2 (PostgreSQL): consumer groups coordinated in the database.
-- A group is a subscription, named by the subscription's name.

-- Live members: a member is alive until expires_at, which it pushes forward at every check-in.
CREATE TABLE ${schema}.${p}member (
  group_name    text              NOT NULL,
  member_id     text              NOT NULL,
  weight        double precision  NOT NULL,
  heartbeat_at  timestamptz       NOT NULL,
  expires_at    timestamptz       NOT NULL,
  PRIMARY KEY (group_name, member_id)
);

-- One row per partition ever leased in a group. The row outlives its owners so that the epoch only grows.
CREATE TABLE ${schema}.${p}lease (
  group_name  text         NOT NULL,
  topic_id    bigint       NOT NULL,
  partition   integer      NOT NULL,
  owner       text,
  epoch       bigint       NOT NULL,
  releasing   boolean      NOT NULL DEFAULT false,
  since       timestamptz  NOT NULL DEFAULT now(),
  PRIMARY KEY (group_name, topic_id, partition)
);

-- Group policies: group_name '' is the cluster-wide default; other rows override it per subscription.
CREATE TABLE ${schema}.${p}group_policy (
  group_name            text              PRIMARY KEY,
  check_in_rate         double precision  NOT NULL,
  min_check_in_ms       bigint            NOT NULL,
  deadline_multiplier   double precision  NOT NULL,
  slack                 double precision  NOT NULL,
  release_grace_ms      bigint            NOT NULL,
  idle_release_ms       bigint            NOT NULL,
  updated_at            timestamptz       NOT NULL DEFAULT now()
);
