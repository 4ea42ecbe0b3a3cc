-- Retention may also bound each partition to its newest N events (NULL: no bound).
ALTER TABLE ${schema}.${p}topic ADD COLUMN retention_max_events bigint;
