package store

// postgresDialect is the PostgreSQL text of the statements in dialect.
var postgresDialect = dialect{
	// RETURNING gives the ids in VALUES order: PostgreSQL numbers the rows
	// from the sequence as it inserts them, in that order.
	eventsInsert: newMultiRow(`INSERT INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES `,
		`(?, ?, ?, ?, ?, ?, ?)`, ` RETURNING id`),
	greatest: `GREATEST`,
	jsonEach: `jsonb_array_elements(CAST(? AS JSONB)) WITH ORDINALITY AS j(value, key)`,
	// PostgreSQL's planner needs no steering off the due index: it
	// estimates the id list's rows.
	unindexed:    ``,
	eventsByUser: `events`,
	// The planner picks the index by app, event id and time by itself.
	eventsByEvent: `events`,
	eventRun:      `NULL`,
	jsonTexts:     `(SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST(? AS JSONB)) WITH ORDINALITY) AS u`,
	jsonIDs:       `SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST(? AS JSONB))`,
}
