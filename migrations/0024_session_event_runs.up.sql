-- Events a visitor logged by sessionId alone are indexed by session in
-- event_users' sorted runs, as events with a userId are by user, instead
-- of in events_app_session. That index put nearly every such event of a
-- group commit on a b-tree page of its own (sessions are spread over the
-- whole key space), which cost such an event about as much again as the
-- event itself (store/sqlite_eventindex.go). A session's rows sit under
-- the app's id negated, so that they never meet a user's: every lookup by
-- user names a real app's id, and a session's key is (-app_id, session).
--
-- The events up to upto are indexed here; those above it are indexed when
-- the database opens, as after a crash.
INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
    SELECT -app_id, session_id, event_id, ts, id FROM events
    WHERE user_id IS NULL AND session_id IS NOT NULL AND id <= (SELECT upto FROM event_users_upto);

-- Deleting an event takes it out of its run, a user's or a session's:
-- the trigger of version 9, by the event's key in event_users.
DROP TRIGGER events_delete_event_users;
CREATE TRIGGER events_delete_event_index AFTER DELETE ON events WHEN coalesce(old.user_id, old.session_id) IS NOT NULL BEGIN
    INSERT OR REPLACE INTO event_users (app_id, user_id, event_id, ts, id, run)
        SELECT app_id, user_id, event_id,
            CASE WHEN id = old.id THEN run->>'$[#-2][0]' ELSE ts END,
            CASE WHEN id = old.id THEN run->>'$[#-2][1]' ELSE id END,
            CASE WHEN json_array_length(run) > 2 THEN json_remove(run, '$[' || pos || ']') END
        FROM (SELECT *, (SELECT key FROM json_each(c.run) WHERE value->>1 = old.id) AS pos
            FROM (SELECT * FROM event_users
                WHERE app_id = CASE WHEN old.user_id IS NULL THEN -old.app_id ELSE old.app_id END
                    AND user_id = coalesce(old.user_id, old.session_id) AND event_id = old.event_id
                    AND (ts, id) >= (old.ts, old.id)
                ORDER BY ts, id LIMIT 1) AS c
            WHERE instr(c.run, ',' || old.id || ']') > 0)
        WHERE pos IS NOT NULL;
    DELETE FROM event_users WHERE app_id = CASE WHEN old.user_id IS NULL THEN -old.app_id ELSE old.app_id END
        AND user_id = coalesce(old.user_id, old.session_id)
        AND event_id = old.event_id AND ts = old.ts AND id = old.id;
END;

DROP INDEX events_app_session;
