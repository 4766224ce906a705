DROP TABLE dashboard_signin_failures;
DROP TABLE dashboard_setup;
CREATE TABLE dashboard_setup (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    token_hash BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);
ALTER TABLE webhook_deliveries DROP COLUMN claimed_by;
