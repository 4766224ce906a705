package store

// pgMaxRows bounds the rows of one multi-row statement: a group commit of
// the 64 connections a load balancer commonly keeps fits one statement.
const pgMaxRows = 64

// postgresDialect is the PostgreSQL text of the statements in dialect.
var postgresDialect = dialect{
	// PostgreSQL binds parameters by position, so a statement takes up to
	// pgMaxRows rows whatever their width: each statement is a round trip.
	usersInsert: newMultiRowExact(`INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES `, `(?, ?, '{}', ?, ?)`,
		usersUpsert, pgMaxRows),
	assignInsert:    newMultiRowExact(assignPrefix, `(?, ?, ?, ?)`, assignSuffix, pgMaxRows),
	assignReturning: newMultiRowExact(assignPrefix, `(?, ?, ?, ?)`, assignSuffix+` RETURNING campaign_id, user_key`, pgMaxRows),
	// RETURNING gives the ids in VALUES order: PostgreSQL numbers the rows
	// from the sequence as it inserts them, in that order.
	eventsInsert: newMultiRowExact(`INSERT INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES `,
		`(?, ?, ?, ?, ?, ?, ?)`, ` RETURNING id`, pgMaxRows),
	greatest: `GREATEST`,
	jsonEach: `jsonb_array_elements(CAST(? AS JSONB)) WITH ORDINALITY AS j(value, key)`,
	// PostgreSQL's planner needs no steering off the due index: it
	// estimates the id list's rows.
	unindexed:       ``,
	eventsByEventTS: `events`,
	instr:           `strpos`,
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
