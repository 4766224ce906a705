-- Instance keys go with the role: the old table cannot hold them.
CREATE TABLE api_keys_old (
    id          INTEGER PRIMARY KEY,
    app_id      INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('admin','read','client')),
    name        TEXT    NOT NULL DEFAULT '',
    key_hash    BLOB    NOT NULL UNIQUE,
    key_prefix  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);
INSERT INTO api_keys_old (id, app_id, role, name, key_hash, key_prefix, created_at, revoked_at)
    SELECT id, app_id, role, name, key_hash, key_prefix, created_at, revoked_at FROM api_keys WHERE role <> 'instance';
DROP TABLE api_keys;
ALTER TABLE api_keys_old RENAME TO api_keys;
CREATE INDEX api_keys_app ON api_keys(app_id);
