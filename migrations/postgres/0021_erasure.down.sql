DROP TABLE erasure_scrubs;
DROP TABLE erasure_state;
DROP INDEX form_submissions_session;
DROP INDEX form_submissions_user;
ALTER TABLE webhook_deliveries DROP COLUMN redacted_at;
