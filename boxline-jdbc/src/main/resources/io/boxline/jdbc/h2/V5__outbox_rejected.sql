-- Boxline schema, version 5 (H2): outbox rows the sequencer cannot place, because their topic or partition
-- does not exist (written by hand or by a script), are set aside here with the reason instead of stopping
-- all sequencing. Nothing reads this table; an operator inspects it.
CREATE TABLE IF NOT EXISTS ${schema}.${p}outbox_rejected AS SELECT * FROM ${schema}.${p}outbox WITH NO DATA;
ALTER TABLE ${schema}.${p}outbox_rejected ADD COLUMN IF NOT EXISTS reason VARCHAR NOT NULL;
ALTER TABLE ${schema}.${p}outbox_rejected ADD COLUMN IF NOT EXISTS rejected_at BIGINT NOT NULL;
