-- Version 14: events of visitors known only by a sessionId, by session.
--
-- CUPED counts a visitor's goal events before the first assignment. A
-- visitor assigned by sessionId owns the events that carry that sessionId
-- and no userId; this index finds them. It holds only such events, so an
-- event with a userId, the common case, costs nothing more to log.
CREATE INDEX events_app_session ON events(app_id, session_id, event_id, ts) WHERE user_id IS NULL AND session_id IS NOT NULL;
