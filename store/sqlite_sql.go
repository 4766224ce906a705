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
	// The index by app, event id and time holds every column the event
	// counts read, so SQLite is held to it.
	eventsByEvent: `events INDEXED BY events_app_event_ts`,
}
