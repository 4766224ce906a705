-- The metric values' moves that group commits judged and the applier has
-- not yet applied: one row per commit, its moves as text (see
-- store/metricmoves.go), or, merged, a slice of many commits' moves by
-- user, sorted, that one short transaction applies. The applier deletes
-- the rows it applies, in the transaction that writes their values and
-- sums, so the table holds about a second of commits. AUTOINCREMENT: a
-- pass deletes the rows it read by id, so an id must never name another
-- row later, as SQLite's rowids do once the table is empty.
CREATE TABLE metric_moves (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    moves  TEXT NOT NULL,
    merged INTEGER NOT NULL DEFAULT 0
);
