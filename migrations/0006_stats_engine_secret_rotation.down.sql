ALTER TABLE webhooks DROP COLUMN secret_rotated_at;
ALTER TABLE webhooks DROP COLUMN previous_secret_expires_at;
ALTER TABLE webhooks DROP COLUMN previous_secret;
ALTER TABLE campaigns DROP COLUMN stats_engine;
