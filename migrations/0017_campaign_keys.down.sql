DROP INDEX campaigns_app_key;
ALTER TABLE campaigns DROP COLUMN key;
