DROP INDEX events_app_session;
