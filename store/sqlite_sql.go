package store

// sqliteDialect is the SQLite text of the statements in dialect.
var sqliteDialect = dialect{
	eventsInsert: eventsInsert,
	greatest:     `MAX`,
	jsonEach:     `json_each(?) AS j`,
	unindexed:    `+`,
	eventIndex:   true,
	eventsByUser: `event_users`,
	eventRun:     `e.run`,
	jsonTexts:    `json_each(?) AS u`,
	jsonIDs:      `SELECT value FROM json_each(?)`,
}
