DROP TABLE dashboard_setup;
DROP TABLE dashboard_sessions;
DROP TABLE dashboard_users;
