-- Group policy: a cap on each member's check-in interval, and a limit on the group's members.
ALTER TABLE ${schema}.${p}group_policy ADD COLUMN IF NOT EXISTS max_check_in_ms bigint;
ALTER TABLE ${schema}.${p}group_policy ADD COLUMN IF NOT EXISTS max_members integer NOT NULL DEFAULT 0;
