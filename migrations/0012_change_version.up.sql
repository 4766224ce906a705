-- Version 10 adds PostgreSQL's change counter (postgres/0010). SQLite has
-- no use for it: PRAGMA data_version tells a process of the others'
-- commits. The step exists so that both stores carry the same version.
SELECT 1;
