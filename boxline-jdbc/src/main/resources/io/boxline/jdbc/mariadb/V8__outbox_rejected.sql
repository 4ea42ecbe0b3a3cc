-- Boxline schema, version 8 (MariaDB / MySQL): outbox rows the sequencer cannot place, because their topic or
-- partition does not exist (written by hand or by a script), are set aside here with the reason instead of
-- stopping all sequencing. Nothing reads this table; an operator inspects it, and may move a row back into
-- the outbox once its topic exists.
CREATE TABLE IF NOT EXISTS ${schema}.${p}outbox_rejected LIKE ${schema}.${p}outbox;
ALTER TABLE ${schema}.${p}outbox_rejected
  ADD COLUMN IF NOT EXISTS reason       TEXT    NOT NULL,
  ADD COLUMN IF NOT EXISTS rejected_at  BIGINT  NOT NULL;
