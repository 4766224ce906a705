package store

// sqliteDialect is the SQLite text of the statements in dialect.
var sqliteDialect = dialect{
	usersInsert:     usersInsert,
	assignInsert:    assignInsert,
	assignReturning: assignReturning,
	eventsInsert:    eventsInsert,
	assignProbe:     true,
	greatest:        `MAX`,
	jsonEach:        `json_each(?) AS j`,
	unindexed:       `+`,
	// The planner would take the (app_id, ts) index for the window and
	// then sort; this index covers the count and groups as it reads.
	eventsByEventTS: `events INDEXED BY events_app_event_ts`,
	instr:           `instr`,
	eventIndex:      true,
	eventsByUser:    `event_users`,
	eventRun:        `e.run`,
	jsonTexts:       `json_each(?) AS u`,
	jsonIDs:         `SELECT value FROM json_each(?)`,
}
