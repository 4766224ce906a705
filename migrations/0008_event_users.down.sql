CREATE INDEX events_app_user_event_ts ON events(app_id, user_id, event_id, ts);
DROP TRIGGER events_delete_event_users;
DROP TABLE event_users_upto;
DROP TABLE event_users;
