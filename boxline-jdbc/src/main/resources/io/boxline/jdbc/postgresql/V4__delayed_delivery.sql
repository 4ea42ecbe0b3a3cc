-- Boxline schema, version 4 (PostgreSQL): delayed delivery.
-- An event with deliver_at in the future is parked by each subscription until then, without holding up its
-- partition (later events of its key wait behind it, other keys do not).
ALTER TABLE ${schema}.${p}outbox ADD COLUMN deliver_at timestamptz;
ALTER TABLE ${schema}.${p}log ADD COLUMN deliver_at timestamptz;
