-- A group policy may fix the batch size of every consumer of the group (0: each consumer's own).
ALTER TABLE ${schema}.${p}group_policy ADD COLUMN batch_size integer NOT NULL DEFAULT 0;
