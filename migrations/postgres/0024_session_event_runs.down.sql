-- Version 24 changes nothing here (see the up migration).
SELECT 1;
