-- An app's own retention, in days: NULL follows the server (events: its
-- --retention; form submissions: kept until deleted).
ALTER TABLE apps ADD COLUMN event_retention_days INTEGER CHECK (event_retention_days BETWEEN 1 AND 3650);
ALTER TABLE apps ADD COLUMN form_retention_days INTEGER CHECK (form_retention_days BETWEEN 1 AND 3650);
