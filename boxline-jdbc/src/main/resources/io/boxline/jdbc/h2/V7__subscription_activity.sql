-- Subscriptions remember where they started and when a consumer of theirs was last live (times in epoch
-- microseconds). start_kind / start_at: the StartPosition given at creation (NULL for older subscriptions).
-- active_at: stamped by the retention run while the group has a live member; a subscription whose stamp is
-- older than its topic's retention_abandon_ms no longer holds events back with keep_unconsumed.
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS start_kind VARCHAR(16);
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS start_at BIGINT;
ALTER TABLE ${schema}.${p}subscription ADD COLUMN IF NOT EXISTS active_at BIGINT DEFAULT 0 NOT NULL;
UPDATE ${schema}.${p}subscription SET active_at = CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)
 WHERE active_at = 0;
ALTER TABLE ${schema}.${p}topic ADD COLUMN IF NOT EXISTS retention_abandon_ms BIGINT DEFAULT 604800000 NOT NULL;
