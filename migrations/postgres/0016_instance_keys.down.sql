-- Instance keys go with the role: the old table cannot hold them.
DELETE FROM api_keys WHERE role = 'instance';
ALTER TABLE api_keys DROP CONSTRAINT api_keys_app_check;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('admin','read','client'));
ALTER TABLE api_keys ALTER COLUMN app_id SET NOT NULL;
