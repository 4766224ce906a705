-- One-time links an owner makes for another dashboard user to set a new
-- password. As for invitations, the link carries a random token of which
-- only the SHA-256 is stored, so a copy of the database resets nobody's
-- password. used_at marks a spent link, kept so that it answers "already
-- used" rather than "invalid"; a password change deletes the user's
-- unused ones.
CREATE TABLE dashboard_password_resets (
    id         INTEGER PRIMARY KEY,
    token_hash BLOB    NOT NULL UNIQUE,
    user_id    INTEGER NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    created_by INTEGER REFERENCES dashboard_users(id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX dashboard_password_resets_user ON dashboard_password_resets (user_id);

-- A password change ends every session of its user.
CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id);

-- The instance's own settings, in one row. default_plan is the plan of apps
-- created without one: serve writes it at start from --default-plan, so
-- that `service apps create`, run beside it, follows it too. No row means
-- free.
CREATE TABLE instance_settings (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    default_plan TEXT    NOT NULL
);
