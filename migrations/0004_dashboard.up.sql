-- People who sign in to the dashboard. Emails compare case-insensitively.
CREATE TABLE dashboard_users (
    id            INTEGER PRIMARY KEY,
    email         TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
);

-- Signed-in sessions. The cookie carries a random token; only its SHA-256
-- is stored, so a copy of the database signs nobody in.
CREATE TABLE dashboard_sessions (
    token_hash BLOB    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    csrf_token TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at);

-- The one-time link that creates the first user; at most one row.
CREATE TABLE dashboard_setup (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    token_hash BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);
