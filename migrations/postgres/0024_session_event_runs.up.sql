-- Version 24 moves SQLite's index of events by session into its runs
-- (see the SQLite migration). PostgreSQL keeps events_app_session: a
-- page it writes costs it far less than a b-tree page costs SQLite's
-- WAL, and its group commits are bound by their round trips.
SELECT 1;
