ALTER TABLE apps DROP COLUMN allowed_origins;
