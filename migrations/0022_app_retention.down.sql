ALTER TABLE apps DROP COLUMN form_retention_days;
ALTER TABLE apps DROP COLUMN event_retention_days;
