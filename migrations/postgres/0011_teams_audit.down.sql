DROP TABLE audit_log;
DROP TABLE dashboard_invitations;
DROP TABLE app_members;
ALTER TABLE dashboard_users DROP COLUMN owner;
