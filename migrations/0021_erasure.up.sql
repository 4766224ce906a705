-- Version 21: erasing an end user's data on request.
--
-- A delivery whose payload named an erased user keeps its row, with the
-- user's fields taken out of the payload and the time that was done.
ALTER TABLE webhook_deliveries ADD COLUMN redacted_at INTEGER;

-- An erasure finds a user's submissions, by userId and by sessionId,
-- without reading every submission of the app.
CREATE INDEX form_submissions_user ON form_submissions(app_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX form_submissions_session ON form_submissions(app_id, session_id) WHERE session_id IS NOT NULL;

-- The salt of the audit log's digests of erased ids, never shown by the
-- API, and the number of erasures so far: every process watches it to
-- forget the users it holds in memory once another process erased one.
CREATE TABLE erasure_state (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    salt  BLOB    NOT NULL,
    count INTEGER NOT NULL
);

-- Erasures whose leftovers (free pages, old WAL frames, dead row
-- versions) the leader's scrub has yet to clear.
CREATE TABLE erasure_scrubs (
    id           INTEGER PRIMARY KEY,
    requested_at INTEGER NOT NULL
);
