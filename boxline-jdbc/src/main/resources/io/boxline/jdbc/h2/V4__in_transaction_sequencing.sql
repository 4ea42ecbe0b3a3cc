-- Topics whose producers number their events themselves (Sequencing.IN_TRANSACTION): the producer's
-- transaction locks the partition rows, advances last_seq and writes the log rows; no outbox, no sequencer.
ALTER TABLE ${schema}.${p}topic ADD COLUMN IF NOT EXISTS sequencing VARCHAR(16) DEFAULT 'SEQUENCER' NOT NULL;
