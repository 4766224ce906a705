-- Identity: a visitor known by a sessionId who signs in is linked to their
-- userId, once. A session links to at most one user (the primary key); a
-- user may have many sessions (session_links_user, which also serves
-- erasure and export of everything a user's sessions left).
--
-- What a link does to the other tables, in the transaction that inserts
-- the row (store/links.go):
--   * assignments: in each campaign where the session ('s:' key) is
--     assigned and the user ('u:' key) is not, the user gets a copy of the
--     session's row (variant, assigned_at, converted_at, covariate); no
--     impression is counted. The session's row stays, so that a request by
--     the sessionId alone keeps its variant and counts no new impression,
--     but events never count on it again while the user holds a row in the
--     campaign.
--   * metric_values: the session's per-user values move to the user's key
--     in those campaigns (the variant's sums already hold them once).
-- Erasing a user must therefore also erase the rows keyed 's:' || session_id
-- of every session linked to them, and these links.
CREATE TABLE session_links (
    app_id     INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    session_id TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    linked_at  INTEGER NOT NULL,
    PRIMARY KEY (app_id, session_id)
) WITHOUT ROWID;
CREATE INDEX session_links_user ON session_links(app_id, user_id);
