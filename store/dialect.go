package store

import "fmt"

// dialect holds the few statements whose text differs between SQLite and
// PostgreSQL. Everything else is written once, in SQL both accept (with ?
// placeholders, which the PostgreSQL connection rewrites): a statement
// that needs a dialect of its own gets a field here, and its two texts sit
// in sqlite_sql.go and postgres_sql.go.
type dialect struct {
	// columns: a group commit's users, first assignments and events go
	// as one array per column (postgres_rows.go), and so do its counter
	// deltas (postgres_counts.go); otherwise as multi-row statements
	// (sqlite_rows.go) and a statement per variant.
	columns bool
	// greatest is the scalar maximum of its arguments.
	greatest string
	// jsonEach is a table j of the elements of a JSON array parameter:
	// j.value, whose ->> picks an element's member, in the order j.key.
	jsonEach string
	// eventIndex: lookups by user go through event_users, the SQLite
	// store's index of events by user, and the tail of events it has not
	// indexed yet. Without it they read events through a plain index.
	eventIndex bool
	// eventsByUser is the table, aliased e, that finds a user's events,
	// eventsBySession the one that finds the events of a visitor known
	// only by a sessionId, and eventRun the column of further events in a
	// row of eventsByUser (see sqlite_eventruns.go).
	eventsByUser, eventsBySession, eventRun string
	// jsonTexts is a table u of the strings of a JSON array parameter:
	// u.value, at the 0-based position u.key.
	jsonTexts string
	// eachKeysEvents joins a jsonTexts list u to the rows of the table
	// %[1]s (aliased e) that match the condition %[2]s, in which u.value
	// is the list's key: one index seek per key, with the list as the
	// outer loop. Left to themselves, the planners would walk every event
	// of the app and look each up in the list (SQLite, knowing nothing of
	// the list's length), or hash them all (PostgreSQL, when its
	// statistics lag behind a table that just grew), which made a pass
	// over an app's users quadratic in its size and a group commit's
	// covariates read every goal event of the app.
	eachKeysEvents string
	// eventsByEventTS is the events table read through its (app_id,
	// event_id, ts) index.
	eventsByEventTS string
	// payloadHas is the condition that a webhook delivery's payload
	// (d.payload) holds the bytes of a parameter.
	payloadHas string
	// instr is the function that finds text in text, 1-based, 0 for none.
	instr string
	// unindexed prefixes a column whose index the planner must not use.
	unindexed string
	// jsonIDs selects the integers of a JSON array parameter.
	jsonIDs string
	// covariateEvents finds, for the keys of a JSON array parameter,
	// their events of one id from a time on: the 0-based position of the
	// key in the array, and the event's ts, id and run (see covariates).
	// Its parameters: the array, the app, the event id and the time; for
	// users, then the array, the event id, the time and the app again
	// (linked sessions' events). It is built from the fields above (withCovariates),
	// for users ('u') and for sessions ('s').
	covariateEvents map[byte]string
	// forUpdate ends a SELECT whose rows the transaction goes on to
	// update, locking them until it ends: on PostgreSQL, where writers of
	// other processes run at once; empty on SQLite, whose one writer at a
	// time holds the whole database.
	forUpdate string
	// skipLocked ends a SELECT that locks the rows it picks and passes
	// over those other transactions hold rather than wait for them: a
	// claim of deliveries another process is claiming at that moment, or
	// housekeeping any transaction may do, so that it never waits on, or
	// deadlocks with, another process doing the same; empty on SQLite.
	skipLocked string
	// lockOrder sorts the rows a group commit writes by key (see
	// flushUsers, sortAssignments and flushConversions): where
	// transactions of several processes take row locks at once, rows
	// taken in one order cannot deadlock.
	lockOrder bool
}

// withCovariates fills in the covariate queries of d, which only join its
// other texts, and returns d.
func (d dialect) withCovariates() dialect {
	d.covariateEvents = map[byte]string{
		// A user's events are theirs by userId, and those their linked
		// sessions logged without one (see links.go): each event once,
		// since the second part takes only events without a userId.
		'u': d.keysEvents(`u.key, e.ts, e.id, `+d.eventRun, d.eventsByUser, `e.app_id = ? AND e.user_id = u.value AND e.event_id = ? AND e.ts >= ?`) +
			// CROSS JOIN keeps SQLite's planner from scanning every
			// link of the app for each key.
			` UNION ALL SELECT u.key, e.ts, e.id, NULL FROM ` + d.jsonTexts + ` CROSS JOIN session_links AS l ` +
			fmt.Sprintf(d.eachKeysEvents, d.eventsBySession, `e.app_id = l.app_id AND e.session_id = l.session_id AND e.user_id IS NULL AND e.event_id = ? AND e.ts >= ?`) +
			` WHERE l.app_id = ? AND l.user_id = u.value`,
		's': d.keysEvents(`u.key, e.ts, e.id, NULL`, d.eventsBySession, `e.app_id = ? AND e.session_id = u.value AND e.user_id IS NULL AND e.event_id = ? AND e.ts >= ?`),
	}
	return d
}

// keysEvents selects cols from the rows of table that match cond for
// each key of a jsonTexts list (see eachKeysEvents).
func (d *dialect) keysEvents(cols, table, cond string) string {
	return `SELECT ` + cols + ` FROM ` + d.jsonTexts + ` ` + fmt.Sprintf(d.eachKeysEvents, table, cond)
}
