package store

// sqliteDialect is the SQLite text of the statements in dialect.
var sqliteDialect = dialect{
	greatest:  `MAX`,
	jsonEach:  `json_each(?) AS j`,
	unindexed: `+`,
	// The planner would take the (app_id, ts) index for the window and
	// then sort; this index covers the count and groups as it reads.
	eventsByEventTS: `events INDEXED BY events_app_event_ts`,
	instr:           `instr`,
	payloadHas:      `instr(d.payload, ?) > 0`,
	eventIndex:      true,
	// On the writer event_users holds every indexed event; the indexer's
	// memory adds the rest. A row's ts is its run's last, so a row from
	// the time on may hold earlier events, which the caller drops.
	eventsByUser: `event_users AS e`,
	// Written with the event, in the same transaction: nothing of them
	// waits in the indexer's memory.
	eventsBySession: `events AS e INDEXED BY events_app_session`,
	eventRun:        `e.run`,
	jsonTexts:       `json_each(?) AS u`,
	eachKeysEvents:  `CROSS JOIN %s ON %s`,
	jsonIDs:         `SELECT value FROM json_each(?)`,
	// One writer at a time holds the whole database: no row is locked,
	// none is passed over, and no order of rows can deadlock.
	forUpdate:  ``,
	skipLocked: ``,
	lockOrder:  false,
	// Multi-row statements on the driver connection (sqlite_rows.go).
	columns: false,
}.withCovariates()
