-- Version 16: instance keys, which manage apps and their keys over HTTP
-- and belong to no app.
--
-- SQLite cannot drop a NOT NULL or change a CHECK in place, so api_keys is
-- rebuilt with its rows and ids. Nothing references api_keys, so dropping
-- the old table cascades nowhere. A key has an app exactly when its role
-- is not instance.
CREATE TABLE api_keys_new (
    id          INTEGER PRIMARY KEY,
    app_id      INTEGER REFERENCES apps(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('admin','read','client','instance')),
    name        TEXT    NOT NULL DEFAULT '',
    key_hash    BLOB    NOT NULL UNIQUE,
    key_prefix  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER,
    CHECK ((role = 'instance') = (app_id IS NULL))
);
INSERT INTO api_keys_new (id, app_id, role, name, key_hash, key_prefix, created_at, revoked_at)
    SELECT id, app_id, role, name, key_hash, key_prefix, created_at, revoked_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_new RENAME TO api_keys;
CREATE INDEX api_keys_app ON api_keys(app_id);
