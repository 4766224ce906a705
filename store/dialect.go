package store

// dialect holds the few statements whose text differs between SQLite and
// PostgreSQL. Everything else is written once, in SQL both accept (with ?
// placeholders, which the PostgreSQL connection rewrites): a statement
// that needs a dialect of its own gets a field here, and its two texts sit
// in sqlite_sql.go and postgres_sql.go.
type dialect struct {
	// eventsInsert is the group commit's multi-row events insert.
	eventsInsert multiRow
	// greatest is the scalar maximum of its arguments.
	greatest string
	// jsonEach is a table j of the elements of a JSON array parameter:
	// j.value, whose ->> picks an element's member, in the order j.key.
	jsonEach string
	// eventIndex: lookups by user go through event_users, the SQLite
	// store's index of events by user, and the tail of events it has not
	// indexed yet. Without it they read events through a plain index.
	eventIndex bool
	// eventsByUser is the table that finds a user's events, and eventRun
	// its column of further events in a row (see sqlite_eventruns.go).
	eventsByUser, eventRun string
	// jsonTexts is a table u of the strings of a JSON array parameter:
	// u.value, at the 0-based position u.key.
	jsonTexts string
	// unindexed prefixes a column whose index the planner must not use.
	unindexed string
	// jsonIDs selects the integers of a JSON array parameter.
	jsonIDs string
	// eventsByEvent is the events table, read through its index by app,
	// event id and time where the planner must be told to.
	eventsByEvent string
}
