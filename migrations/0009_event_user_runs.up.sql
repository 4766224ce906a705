-- A row of event_users may hold a run: several events of one user and
-- event id that the writer indexed in the same chunk (store/eventruns.go).
-- The key's ts and id are then the run's last event in (ts, id) order, and
-- run is a JSON array of every event of the run as [ts, id], in that
-- order; run is NULL for a row of one event, which its key describes.
ALTER TABLE event_users ADD COLUMN run TEXT;

-- Deleting an event drops it from the run holding it, which is the first
-- row of its user and event id at or after it in key order; the rest of
-- the run is kept under its own last event. A row of one event goes with
-- its event. The text search (an id is the only number followed by "]")
-- spares parsing a run that does not hold the event; retention takes its
-- events out of their runs itself, a run at a time (store/eventruns.go),
-- so its deletions find none.
DROP TRIGGER events_delete_event_users;
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
