-- Events by user move from an index on events to a table of their own,
-- which the writer fills in key order shortly after the events commit
-- (store/eventindex.go): the index put nearly every event of a commit on a
-- page of its own. Every event with a user and an id up to
-- event_users_upto.upto is in event_users; readers scan the events above
-- it, the writer keeps them in memory, and opening the database indexes
-- whatever a crash left above it.
CREATE TABLE event_users (
    app_id   INTEGER NOT NULL,
    user_id  TEXT    NOT NULL,
    event_id TEXT    NOT NULL,
    ts       INTEGER NOT NULL,
    id       INTEGER NOT NULL,
    PRIMARY KEY (app_id, user_id, event_id, ts, id)
) WITHOUT ROWID;

INSERT INTO event_users (app_id, user_id, event_id, ts, id)
    SELECT app_id, user_id, event_id, ts, id FROM events WHERE user_id IS NOT NULL
    ORDER BY app_id, user_id, event_id, ts, id;

CREATE TABLE event_users_upto (upto INTEGER NOT NULL);

INSERT INTO event_users_upto (upto) SELECT COALESCE(MAX(id), 0) FROM events;

-- Retention and app deletion remove an event's index row with it.
CREATE TRIGGER events_delete_event_users AFTER DELETE ON events WHEN old.user_id IS NOT NULL BEGIN
    DELETE FROM event_users WHERE app_id = old.app_id AND user_id = old.user_id
        AND event_id = old.event_id AND ts = old.ts AND id = old.id;
END;

DROP INDEX events_app_user_event_ts;
