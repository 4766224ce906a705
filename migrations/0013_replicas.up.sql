-- Version 13: what several processes on one database share.
--
-- claimed_by names the process holding a delivery's claim. SQLite leaves it
-- NULL: its claims lapse with their lease. On PostgreSQL it is the key of
-- the holder's presence lock, so a dead holder's claims are taken back at
-- once instead of after the lease.
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by INTEGER;

-- The setup link is made once and kept until used or expired, so every
-- boot (of any process) prints the same link rather than replacing it.
DROP TABLE dashboard_setup;
CREATE TABLE dashboard_setup (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    token      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

-- The sign-in throttle: failures per key (an e-mail or a client address)
-- since the first one of the current window. Rows whose window has ended
-- count for nothing and are trimmed by time.
CREATE TABLE dashboard_signin_failures (
    key      TEXT    PRIMARY KEY,
    first_at INTEGER NOT NULL,
    failures INTEGER NOT NULL
);
CREATE INDEX dashboard_signin_failures_first ON dashboard_signin_failures (first_at);
