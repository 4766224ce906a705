-- Origins a browser app may call the SDK routes from, comma-separated;
-- '*' allows any origin.
ALTER TABLE apps ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '*';
