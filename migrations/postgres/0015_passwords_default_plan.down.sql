DROP TABLE instance_settings;
DROP INDEX dashboard_sessions_user;
DROP TABLE dashboard_password_resets;
