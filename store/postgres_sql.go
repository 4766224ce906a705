package store

// postgresDialect is the PostgreSQL text of the statements in dialect.
var postgresDialect = dialect{
	// A group commit's rows go as one array per column (postgres_rows.go).
	columns:  true,
	greatest: `GREATEST`,
	jsonEach: `jsonb_array_elements(CAST(? AS JSONB)) WITH ORDINALITY AS j(value, key)`,
	// PostgreSQL's planner needs no steering off the due index: it
	// estimates the id list's rows.
	unindexed:       ``,
	eventsByEventTS: `events`,
	instr:           `strpos`,
	payloadHas:      `position(? IN d.payload) > 0`,
	// Events are found through the events table's own indexes: there is
	// no event_users (sqlite_eventindex.go) to keep.
	eventIndex:      false,
	eventsByUser:    `events AS e`,
	eventsBySession: `events AS e`,
	eventRun:        `NULL`,
	jsonTexts:       `(SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST(? AS JSONB)) WITH ORDINALITY) AS u`,
	// OFFSET 0 keeps the planner from flattening the subquery into a join
	// it may then hash: it runs once per key, as an index seek.
	eachKeysEvents: `CROSS JOIN LATERAL (SELECT e.event_id, e.ts, e.id FROM %s WHERE %s OFFSET 0) AS e`,
	jsonIDs:        `SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST(? AS JSONB))`,
	forUpdate:      ` FOR UPDATE`,
	skipLocked:     ` FOR UPDATE SKIP LOCKED`,
	lockOrder:      true,
}.withCovariates()
