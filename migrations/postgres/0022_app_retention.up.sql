-- An app's own retention, in days: NULL follows the server (see the SQLite
-- migration).
ALTER TABLE apps ADD COLUMN event_retention_days BIGINT CHECK (event_retention_days BETWEEN 1 AND 3650);
ALTER TABLE apps ADD COLUMN form_retention_days BIGINT CHECK (form_retention_days BETWEEN 1 AND 3650);
