-- Version 16: instance keys, which manage apps and their keys over HTTP
-- and belong to no app. A key has an app exactly when its role is not
-- instance.
ALTER TABLE api_keys ALTER COLUMN app_id DROP NOT NULL;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('admin','read','client','instance'));
ALTER TABLE api_keys ADD CONSTRAINT api_keys_app_check CHECK ((role = 'instance') = (app_id IS NULL));
