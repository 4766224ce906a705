package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
)

// engine is what the domain code needs from the database engine under it,
// in the domain's terms: everything that differs between SQLite and
// PostgreSQL, and nothing else. The domain files write their SQL once, in
// text both engines run (? placeholders, which the PostgreSQL connection
// rewrites), and never ask which engine they run on; where an engine must
// differ, its implementation says why (sqlite_engine.go,
// postgres_engine.go). An engine that leaves a method out does not compile.
type engine interface {
	sqlText

	// Opening, pools and migrations.

	// migrations is the engine's migration files.
	migrations() fs.FS
	// migrator runs golang-migrate on them.
	migrator() (*migrate.Migrate, error)
	// close stops the engine's own sessions and goroutines (leadership,
	// change notification, presence, indexing, checkpoints) before the
	// pools close.
	close()

	// Transactions.

	// begin starts a write transaction.
	begin(ctx context.Context) (*Tx, error)
	// commit commits tx, whose group commit wrote written events, with
	// what the engine does at a commit: notifying other processes of a
	// change (Tx.changed), indexing events by user.
	commit(tx *Tx, written int) error
	// queryRowFirst runs a one-row statement of tx that is often its
	// first (a campaign's status): PostgreSQL's sends the transaction's
	// BEGIN in the same round trip.
	queryRowFirst(tx *Tx, q string, args []any, dest ...any) error
	// lostToConcurrent reports whether err is a write transaction's loss
	// to a concurrent transaction of another process, which a retry
	// resolves.
	lostToConcurrent(err error) bool

	// A group commit's rows and counters (rows.go).

	// insertUsers writes tx.userOrder's sightings.
	insertUsers(tx *Tx) error
	// insertAssignments writes the queued first assignments and marks
	// those that went in.
	insertAssignments(tx *Tx) error
	// orderConversions puts the queued conversions in the order the
	// engine's row locks need, by their i-th key.
	orderConversions(tx *Tx, i int)
	// convertUsers makes the queued conversions' attempts by their userId
	// keys, in their order (Tx.convertible, Tx.converted).
	convertUsers(tx *Tx) error
	// insertEvents writes the queued events and sets their ids.
	insertEvents(tx *Tx) error
	// moveMetricValues moves users' values of metrics by list, in its
	// order (the order of the row locks): conversions insert a 1 where
	// there is none, the others add their delta. It calls moved with each
	// row it changed and its value after: for conversions, the rows
	// inserted now.
	moveMetricValues(tx *Tx, conversion bool, list []*metricMove, moved func(ref metricValueRef, after float64)) error
	// lockMetricMoves makes the transaction's pass over the journaled
	// metric moves the only one under way (applyMetricMoves).
	lockMetricMoves(tx *Tx) error
	// insertLink links the session to the user unless the session is
	// linked already, and says whether it did; if so, it returns the
	// campaigns of the app, in id order (the order their rows are locked
	// in), where the session is assigned and the user is not.
	insertLink(tx *Tx, appID int64, sessionID, userID string) (bool, []int64, error)
	// flushCounts writes the counter deltas of the variants ids, sorted.
	flushCounts(tx *Tx, ids []int64) error

	// Events by user.

	// userEvents narrows FindEvents' query of an app's events (where,
	// args; of eventID when not empty) to a user's, and says what table
	// to read them from.
	userEvents(where []string, args []any, appID int64, userID, eventID string) (from string, _ []string, _ []any)
	// compileUserEvents sets the queries of a compiled audience that read
	// one user's events, whose filter (app, user, event ids, window) is
	// where.
	compileUserEvents(e *compiledAudience, where string)
	// audienceEvents is the query of an audience pass's batch of users
	// (see audienceEventQuery).
	audienceEvents(nEvents int, bounded bool) string
	// audienceTail reads, once for a pass, the events that audienceEvents
	// does not see, by user, and the arguments that end each batch's
	// query.
	audienceTail(ctx context.Context, rtx *sql.Tx, appID int64, eventIDs []string, bounded bool, since int64) (map[string][]scanEvent, []any, error)
	// unindexedEvents appends to dst the committed events of k, a user or
	// a session (sessionRef), that the queries by key do not see yet.
	unindexedEvents(dst []tailEvent, k userRef) []tailEvent
	// unindexedLinked calls fn with each committed event that the queries
	// by key do not see yet of the sessions linked to the app's users of
	// the JSON array users, with the user's position in it.
	unindexedLinked(tx *Tx, appID int64, users string, fn func(k int, e tailEvent)) error
	// expireEvents takes the events of batch, which retention is about
	// to delete, out of what the engine keeps of them beside the events
	// table: users' events under the app's id, sessions' under its id
	// negated (sessionRef).
	expireEvents(tx *Tx, appID, cutoff int64, batch []expiring, done map[runGroup]tailEvent) error
	// purgeApp deletes what the engine keeps of an app's events beside
	// the tables, before the app's rows go.
	purgeApp(tx *Tx, appID int64) error

	// Webhook claims.

	// presence returns the key that names this process's claims and the
	// context that ends when they can no longer be recorded.
	presence(ctx context.Context) (int64, context.Context, error)
	// reapClaims takes back the claims of processes that are gone.
	reapClaims(ctx context.Context, now time.Time, self int64) error
	// runClaim runs a claim of deliveries in a write transaction.
	runClaim(ctx context.Context, claim func(*Tx) error) error
	// capClaims returns the ids of cands this claim may take under the
	// per-webhook caps.
	capClaims(tx *Tx, cands []dueCandidate, o *ClaimOptions, t, holder int64) ([]int64, error)

	// Leadership.

	// election is the engine's leader election, for AwaitLeadership.
	election() election

	// Rate limits counted for every process.

	sharedRateLimits() bool
	claimRate(ctx context.Context, w RateWindow, want, limit int) (int64, error)
	returnRate(ctx context.Context, w RateWindow, n, limit int) error
	trimRateWindows(ctx context.Context, minute int64) (int64, error)

	// Secure deletion (and erasure.go's eraser).

	// scrubReplaced removes what replaced values leave behind after the
	// transaction committed (a WAL, old row versions), best effort.
	scrubReplaced(ctx context.Context)

	// Statistics.

	fileSizes() (main, wal int64, err error)
	tablesWithoutStatistics(ctx context.Context, minRows int64) ([]string, error)
	analyzeTable(ctx context.Context, name string) error
}

// sqlText is the SQL fragments whose text differs between the engines,
// which the domain's statements are built from.
type sqlText interface {
	// greatest is the scalar maximum of its arguments.
	greatest() string
	// jsonEach is a table j of the elements of a JSON array parameter:
	// j.value, whose ->> picks an element's member, in the order j.key.
	jsonEach() string
	// jsonTexts is a table u of the strings of a JSON array parameter:
	// u.value, at the 0-based position u.key.
	jsonTexts() string
	// jsonIDs selects the integers of a JSON array parameter.
	jsonIDs() string
	// assignmentsOfKeys reads the assignments of a campaign (the second
	// parameter) whose keys a JSON array (the first) lists: key, variant
	// and assigned_at, a search of the primary key once a key (keysJoin).
	assignmentsOfKeys() string
	// payloadHas is the condition that a webhook delivery's payload
	// (d.payload) holds the bytes of a parameter.
	payloadHas() string
	// instr is the function that finds text in text, 1-based, 0 for none.
	instr() string
	// unindexed prefixes a column whose index the planner must not use.
	unindexed() string
	// eventsByEventTS is the events table read through its (app_id,
	// event_id, ts) index.
	eventsByEventTS() string
	// forUpdate ends a SELECT whose rows the transaction goes on to
	// update, locking them until it ends.
	forUpdate() string
	// skipLocked ends a SELECT that locks the rows it picks and passes
	// over those other transactions hold rather than wait for them.
	skipLocked() string
	// covariateEvents finds, for the keys of a JSON array parameter,
	// their events of one id from a time on: the 0-based position of the
	// key in the array, and the event's ts, id and run (see covariates).
	// Its parameters: the array, the app, the event id and the time; for
	// users, then the same again (linked sessions' events). kind is 'u'
	// for users and 's' for sessions.
	covariateEvents(kind byte) string
}

// keysJoin is how an engine joins the keys of a JSON array parameter to
// the rows they name (events, links, assignments), one index seek per key,
// with the list as the outer loop. Left to themselves, the planners would
// walk every row of the app or campaign and look each up in the list
// (SQLite, knowing nothing of the list's length), or hash them all
// (PostgreSQL, which takes the list for 100 keys, when the table holds up
// to some tens of thousands of rows or its statistics lag behind it). That
// made a pass over an app's users quadratic in its size, and a group
// commit's covariates, round-robin answers and metric variants cost the
// app's or campaign's size.
type keysJoin struct {
	// texts is the table u of the strings of the array: u.value, at the
	// 0-based position u.key (sqlText.jsonTexts).
	texts string
	// each joins u to the rows of the table %[1]s that match the
	// condition %[2]s, in which u.value is the list's key, as the alias
	// %[4]s whose columns %[3]s the query reads (see join).
	each string
	// byUser is the table, aliased e, that finds a user's events,
	// bySession the one that finds the events of a visitor known only by
	// a sessionId, session the condition on it that takes the events of
	// the session %[2]s of the app %[1]s, and run the column of further
	// events in a row of either (see sqlite_eventruns.go).
	byUser, bySession, session, run string
}

// join joins u to the rows of table (which names its alias) that match
// cond for each key of the list; cols are the columns the query reads of
// them, as alias.column.
func (k keysJoin) join(table, alias, cols, cond string) string {
	return fmt.Sprintf(k.each, table, cond, cols, alias)
}

// keysEvents selects cols from the rows of table, aliased e, that match
// cond for each key of the list.
func (k keysJoin) keysEvents(cols, table, cond string) string {
	return `SELECT ` + cols + ` FROM ` + k.texts + ` ` + k.join(table, `e`, eventCols, cond)
}

// eventCols are the columns of an event that the queries by key read.
const eventCols = `e.event_id, e.ts, e.id`

// assignmentsOfKeys builds sqlText.assignmentsOfKeys.
func (k keysJoin) assignmentsOfKeys() string {
	return `SELECT u.value, a.variant_id, a.assigned_at FROM ` + k.texts + ` ` +
		k.join(`assignments AS a`, `a`, `a.variant_id, a.assigned_at`, `a.campaign_id = ? AND a.user_key = u.value`)
}

// covariates builds the covariate queries (sqlText.covariateEvents), for
// users ('u') and for sessions ('s').
func (k keysJoin) covariates() map[byte]string {
	return map[byte]string{
		// A user's events are theirs by userId, and those their linked
		// sessions logged without one (see links.go): each event once,
		// since the second part takes only events without a userId.
		'u': k.keysEvents(`u.key, e.ts, e.id, `+k.run, k.byUser, `e.app_id = ? AND e.user_id = u.value AND e.event_id = ? AND e.ts >= ?`) +
			` UNION ALL SELECT u.key, e.ts, e.id, ` + k.run + ` FROM ` + k.texts + ` ` +
			k.join(`session_links AS l`, `l`, `l.app_id, l.session_id`, `l.app_id = ? AND l.user_id = u.value`) + ` ` +
			k.join(k.bySession, `e`, eventCols, fmt.Sprintf(k.session, `l.app_id`, `l.session_id`)+` AND e.event_id = ? AND e.ts >= ?`),
		's': k.keysEvents(`u.key, e.ts, e.id, `+k.run, k.bySession, fmt.Sprintf(k.session, `?`, `u.value`)+` AND e.event_id = ? AND e.ts >= ?`),
	}
}

// audienceEvents is the query of an audience pass's batch of users: their
// events of nEvents ids, from a time on when bounded, and matching the
// engine's own condition more (with its arguments from audienceTail).
//
// The batch's user ids and the event ids travel as two JSON arrays, and
// each row names its user and its event id by their positions in them,
// folded into one integer: the driver then hands back two integers per
// event instead of two strings, and the strings were most of the cost of
// a pass. The plan is one index seek per user (TestAudienceEventQueryPlan).
func (k keysJoin) audienceEvents(nEvents int, bounded bool, more string) string {
	var sel strings.Builder
	sel.WriteString(`u.key * ? + CASE e.event_id`)
	for i := range nEvents {
		sel.WriteString(` WHEN ? THEN ` + strconv.Itoa(i))
	}
	sel.WriteString(` END, e.ts, e.id, ` + k.run)
	cond := `e.app_id = ? AND e.user_id = u.value AND e.event_id IN (` + placeholders(nEvents) + `)`
	if bounded {
		cond += ` AND e.ts >= ?`
	}
	return k.keysEvents(sel.String(), k.byUser, cond+more)
}

// candidateIDs returns the ids of cands.
func candidateIDs(cands []dueCandidate) []int64 {
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	return ids
}
