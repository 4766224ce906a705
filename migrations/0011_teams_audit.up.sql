-- Roles. An owner runs the whole instance; every other dashboard user is a
-- member with a role in each app they may see. Users from before roles
-- could do everything, so they all become owners.
ALTER TABLE dashboard_users ADD COLUMN owner INTEGER NOT NULL DEFAULT 0;
UPDATE dashboard_users SET owner = 1;

CREATE TABLE app_members (
    app_id     INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES dashboard_users(id) ON DELETE CASCADE,
    role       TEXT    NOT NULL CHECK (role IN ('viewer','editor','admin')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, user_id)
);
CREATE INDEX app_members_user ON app_members (user_id);

-- One-time links that make someone a member of an app. The link carries a
-- random token; only its SHA-256 is stored, so a copy of the database
-- accepts no invitation. accepted_at marks a spent link, kept so that it
-- answers "already used" rather than "invalid".
CREATE TABLE dashboard_invitations (
    id          INTEGER PRIMARY KEY,
    token_hash  BLOB    NOT NULL UNIQUE,
    email       TEXT    NOT NULL COLLATE NOCASE,
    app_id      INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('viewer','editor','admin')),
    invited_by  INTEGER REFERENCES dashboard_users(id) ON DELETE SET NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    accepted_at INTEGER
);
CREATE INDEX dashboard_invitations_app ON dashboard_invitations (app_id, id);

-- Every change to the service's configuration, written in the transaction
-- of the change. app_id has no foreign key: an app's history outlives the
-- app until retention trims it. instance marks the changes listed to
-- owners (apps created and deleted, users, owners). changes is a JSON
-- object of field -> {"before", "after"}, secrets redacted; NULL when the
-- entry has none.
CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY,
    at           INTEGER NOT NULL,
    app_id       INTEGER,
    instance     INTEGER NOT NULL DEFAULT 0,
    actor_type   TEXT    NOT NULL,
    actor_id     INTEGER,
    actor_name   TEXT    NOT NULL DEFAULT '',
    actor_prefix TEXT    NOT NULL DEFAULT '',
    action       TEXT    NOT NULL,
    object_type  TEXT    NOT NULL,
    object_id    INTEGER,
    object_name  TEXT    NOT NULL DEFAULT '',
    request_id   TEXT    NOT NULL DEFAULT '',
    client_addr  TEXT    NOT NULL DEFAULT '',
    changes      TEXT
);
CREATE INDEX audit_log_app ON audit_log (app_id, id);
CREATE INDEX audit_log_object ON audit_log (app_id, object_type, object_id, id);
CREATE INDEX audit_log_instance ON audit_log (instance, id);
CREATE INDEX audit_log_at ON audit_log (at);
