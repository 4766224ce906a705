-- Every event of a run gets a row of its own again.
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
    SELECT e.app_id, e.user_id, e.event_id, j.value->>0, j.value->>1
    FROM event_users AS e, json_each(e.run) AS j WHERE e.run IS NOT NULL;
DROP TRIGGER events_delete_event_users;
ALTER TABLE event_users DROP COLUMN run;
CREATE TRIGGER events_delete_event_users AFTER DELETE ON events WHEN old.user_id IS NOT NULL BEGIN
    DELETE FROM event_users WHERE app_id = old.app_id AND user_id = old.user_id
        AND event_id = old.event_id AND ts = old.ts AND id = old.id;
END;
