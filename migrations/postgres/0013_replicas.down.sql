DROP TABLE rate_limit_windows;
DROP TABLE dashboard_signin_failures;
DROP TABLE dashboard_setup;
CREATE TABLE dashboard_setup (
    id         BIGINT PRIMARY KEY CHECK (id = 1),
    token_hash BYTEA  NOT NULL,
    created_at BIGINT NOT NULL
);
DROP INDEX webhook_deliveries_claimed;
ALTER TABLE webhook_deliveries DROP COLUMN claimed_by;
