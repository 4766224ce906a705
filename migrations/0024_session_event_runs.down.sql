DROP TRIGGER events_delete_event_index;
DELETE FROM event_users WHERE app_id < 0;
CREATE TRIGGER events_delete_event_users AFTER DELETE ON events WHEN old.user_id IS NOT NULL BEGIN
    INSERT OR REPLACE INTO event_users (app_id, user_id, event_id, ts, id, run)
        SELECT app_id, user_id, event_id,
            CASE WHEN id = old.id THEN run->>'$[#-2][0]' ELSE ts END,
            CASE WHEN id = old.id THEN run->>'$[#-2][1]' ELSE id END,
            CASE WHEN json_array_length(run) > 2 THEN json_remove(run, '$[' || pos || ']') END
        FROM (SELECT *, (SELECT key FROM json_each(c.run) WHERE value->>1 = old.id) AS pos
            FROM (SELECT * FROM event_users
                WHERE app_id = old.app_id AND user_id = old.user_id AND event_id = old.event_id
                    AND (ts, id) >= (old.ts, old.id)
                ORDER BY ts, id LIMIT 1) AS c
            WHERE instr(c.run, ',' || old.id || ']') > 0)
        WHERE pos IS NOT NULL;
    DELETE FROM event_users WHERE app_id = old.app_id AND user_id = old.user_id
        AND event_id = old.event_id AND ts = old.ts AND id = old.id;
END;
CREATE INDEX events_app_session ON events(app_id, session_id, event_id, ts) WHERE user_id IS NULL AND session_id IS NOT NULL;
