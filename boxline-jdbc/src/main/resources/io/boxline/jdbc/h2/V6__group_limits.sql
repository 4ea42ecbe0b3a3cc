-- Group policy: a cap on each member's check-in interval, and a limit on the group's members.
ALTER TABLE ${schema}.${p}group_policy ADD COLUMN IF NOT EXISTS max_check_in_ms BIGINT;
ALTER TABLE ${schema}.${p}group_policy ADD COLUMN IF NOT EXISTS max_members INT DEFAULT 0 NOT NULL;
