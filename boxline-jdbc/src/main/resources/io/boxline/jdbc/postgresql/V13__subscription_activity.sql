-- Subscriptions remember where they started and when a consumer of theirs was last live.
-- start_kind / start_at: the StartPosition given at creation (NULL for subscriptions created before this
-- version). active_at: stamped by the retention run while the group has a live member; a subscription whose
-- stamp is older than its topic's retention_abandon_ms no longer holds events back with keep_unconsumed.
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS start_kind text;
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS start_at timestamptz;
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS active_at timestamptz;
UPDATE ${schema}.${p}subscription SET active_at = now() WHERE active_at IS NULL;
ALTER TABLE ${schema}.${p}subscription ALTER COLUMN active_at SET DEFAULT now();
ALTER TABLE ${schema}.${p}subscription ALTER COLUMN active_at SET NOT NULL;
ALTER TABLE ${schema}.${p}topic ADD COLUMN IF NOT EXISTS retention_abandon_ms bigint NOT NULL DEFAULT 604800000;
