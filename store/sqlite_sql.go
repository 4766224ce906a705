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
	eventsByEventTS:  `events INDEXED BY events_app_event_ts`,
	instr:            `instr`,
	eventIndex:       true,
	eventsByUser:     `event_users`,
	eventRun:         `e.run`,
	jsonTexts:        `json_each(?) AS u`,
	eventsOfEachUser: `CROSS JOIN event_users AS e ON %s`,
	jsonIDs:          `SELECT value FROM json_each(?)`,
	// On the writer event_users holds every indexed event; the indexer's
	// memory adds the rest. A row's ts is its run's last, so a row from
	// the time on may hold earlier events, which the caller drops. CROSS
	// JOIN keeps the user list outside: the planner, knowing nothing of
	// the list's length, would otherwise walk every event of the app and
	// look each one up in the list.
	covariateEvents: `SELECT u.key, e.ts, e.id, e.run FROM json_each(?) AS u
		CROSS JOIN event_users AS e ON e.app_id = ? AND e.user_id = u.value AND e.event_id = ? AND e.ts >= ?`,
	// Written with the event, in the same transaction: nothing of them
	// waits in the indexer's memory.
	covariateSessionEvents: `SELECT u.key, e.ts, e.id, NULL FROM json_each(?) AS u
		CROSS JOIN events AS e INDEXED BY events_app_session ON e.app_id = ? AND e.session_id = u.value AND e.user_id IS NULL AND e.event_id = ? AND e.ts >= ?`,
}
