package store

// pgMaxParams bounds a statement's parameters below PostgreSQL's 65,535.
const pgMaxParams = 4096

// postgresDialect is the PostgreSQL text of the statements in dialect.
var postgresDialect = dialect{
	// PostgreSQL binds parameters by position, so a statement takes a
	// whole group commit's rows: each statement is a round trip.
	usersInsert: newMultiRowUpTo(`INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES `, `(?, ?, '{}', ?, ?)`,
		usersUpsert, maxBatch, pgMaxParams),
	assignInsert:    newMultiRowUpTo(assignPrefix, `(?, ?, ?, ?)`, assignSuffix, maxBatch, pgMaxParams),
	assignReturning: newMultiRowUpTo(assignPrefix, `(?, ?, ?, ?)`, assignSuffix+` RETURNING campaign_id, user_key`, maxBatch, pgMaxParams),
	// RETURNING gives the ids in VALUES order: PostgreSQL numbers the rows
	// from the sequence as it inserts them, in that order.
	eventsInsert: newMultiRowUpTo(`INSERT INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES `,
		`(?, ?, ?, ?, ?, ?, ?)`, ` RETURNING id`, maxBatch, pgMaxParams),
	greatest: `GREATEST`,
	jsonEach: `jsonb_array_elements(CAST(? AS JSONB)) WITH ORDINALITY AS j(value, key)`,
	// PostgreSQL's planner needs no steering off the due index: it
	// estimates the id list's rows.
	unindexed:       ``,
	eventsByEventTS: `events`,
	instr:           `strpos`,
	eventsByUser:    `events`,
	eventRun:        `NULL`,
	jsonTexts:       `(SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST(? AS JSONB)) WITH ORDINALITY) AS u`,
	jsonIDs:         `SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST(? AS JSONB))`,
	forUpdate:       ` FOR UPDATE`,
	lockOrder:       true,
}
