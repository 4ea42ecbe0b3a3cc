-- Subscriptions remember where they started and when a consumer of theirs was last live (times in epoch
-- microseconds). start_kind / start_at: the StartPosition given at creation (NULL for older subscriptions).
-- active_at: stamped by the retention run while the group has a live member; a subscription whose stamp is
-- older than its topic's retention_abandon_ms no longer holds events back with keep_unconsumed.
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS start_kind VARCHAR(16) NULL;
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS start_at BIGINT NULL;
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS active_at BIGINT NOT NULL DEFAULT 0;
UPDATE ${schema}.${p}subscription SET active_at = UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6))
 WHERE active_at = 0;
ALTER TABLE ${schema}.${p}topic ADD COLUMN IF NOT EXISTS retention_abandon_ms BIGINT NOT NULL DEFAULT 604800000;
