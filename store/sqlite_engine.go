package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/golang-migrate/migrate/v4"

	"service/migrations"
	"service/store/sqlite"
)

// sqliteEngine is the engine of a SQLite file (see engine). One writer at
// a time holds the whole file: no row is ever locked by a transaction of
// another process, so nothing here orders rows for locks, locks rows, or
// passes over locked ones.
type sqliteEngine struct{ db *DB }

var _ engine = sqliteEngine{}

func (sqliteEngine) migrations() fs.FS { return migrations.FS }

func (e sqliteEngine) migrator() (*migrate.Migrate, error) { return sqlite.Migrator(e.db.path) }

func (e sqliteEngine) close() {
	db := e.db
	if db.watch != nil {
		db.watch.close()
	}
	db.closeFileLeader()
	if db.batch != nil {
		db.batch.close()
	}
	if db.ix.stop != nil {
		close(db.ix.stop)
		<-db.ix.done
	}
	if db.ckpt != nil {
		db.ckpt.Close()
	}
}

func (e sqliteEngine) begin(ctx context.Context) (*Tx, error) { return e.db.beginSQLite(ctx) }

// commit indexes events by user with the commit (sqlite_eventindex.go).
// Other processes on the file see a change through PRAGMA data_version
// (sqlite_watch.go): nothing to tell them.
func (sqliteEngine) commit(tx *Tx, written int) error { return tx.commitIndexed(written) }

func (sqliteEngine) queryRowFirst(tx *Tx, q string, args []any, dest ...any) error {
	return tx.queryRow(q, args...).Scan(dest...)
}

// lostToConcurrent: no write transaction of another process runs at once.
func (sqliteEngine) lostToConcurrent(error) bool { return false }

// insertUsers: multi-row statements on the driver connection
// (sqlite_rows.go); in the process, in any order.
func (sqliteEngine) insertUsers(tx *Tx) error { return tx.flushUsersSQLite() }

func (sqliteEngine) insertAssignments(tx *Tx) error { return tx.insertAssignmentsSQLite() }

func (sqliteEngine) orderConversions(*Tx, int) {}

// convertUsers: a statement per conversion, which in the process costs
// no round trip.
func (sqliteEngine) convertUsers(tx *Tx) error { return tx.convertEach(0) }

func (sqliteEngine) insertEvents(tx *Tx) error { return tx.insertEventsSQLite() }

// insertLink: two statements, which in the process cost no round trip.
func (sqliteEngine) insertLink(tx *Tx, appID int64, sessionID, userID string) (bool, []int64, error) {
	return tx.insertLinkEach(appID, sessionID, userID)
}

// moveMetricValues binds the moves as multi-row VALUES: in process,
// parsing a JSON text into rows cost more than the rows' writes.
func (sqliteEngine) moveMetricValues(tx *Tx, conversion bool, list []*metricMove, moved func(metricValueRef, float64)) error {
	return tx.moveMetricValuesSQLite(conversion, list, moved)
}

// lockMetricMoves: the writer is the only one.
func (sqliteEngine) lockMetricMoves(*Tx) error { return nil }

// flushCounts: a statement per variant, which in the process costs no
// round trip.
func (sqliteEngine) flushCounts(tx *Tx, ids []int64) error { return tx.flushCountsEach(ids) }

// userEvents: a user's events are the user's rows of event_users up to
// upto, and the events above it (see sqlite_eventindex.go). The outer scan
// goes by those ids alone: NOT INDEXED keeps the planner from walking
// every event of the app to check each against the list.
func (sqliteEngine) userEvents(where []string, args []any, appID int64, userID, eventID string) (string, []string, []any) {
	// A row of a run names its events in run (see sqlite_eventruns.go).
	sub := `SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
			WHERE e.app_id = ? AND e.user_id = ?`
	subArgs := []any{appID, userID}
	if eventID != "" {
		sub, subArgs = sub+` AND e.event_id = ?`, append(subArgs, eventID)
	}
	where = append(where, "user_id = ?", `id IN (`+sub+` AND e.id <= (SELECT upto FROM event_users_upto)
			UNION ALL SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND user_id = ?)`)
	args = append(append(append(args, userID), subArgs...), appID, userID)
	return "events NOT INDEXED", where, args
}

// compileUserEvents: a row's ts is its run's last (see
// sqlite_eventruns.go): a run with an event in the window is read whole,
// and the rules apply the window to each event themselves; the bound only
// spares reading older rows.
func (sqliteEngine) compileUserEvents(e *compiledAudience, where string) {
	e.userEvents = `SELECT event_id, ts, id, run FROM event_users` + where
	// NOT INDEXED keeps the tail's plan a scan of the rowids above upto,
	// never a walk of every event with the referenced ids.
	e.userEventsRead = e.userEvents + ` AND id <= (SELECT upto FROM event_users_upto)
		UNION ALL SELECT event_id, ts, id, NULL FROM events NOT INDEXED` + where + ` AND id > (SELECT upto FROM event_users_upto)`
	e.readTail = true
}

// sqliteEventKeys: on the writer event_users holds every indexed event,
// a session's under its app's id negated (sessionRef); the indexer's
// memory adds the rest. A row's ts is its run's last, so a row from the
// time on may hold earlier events, which the caller drops.
var sqliteEventKeys = keysJoin{
	texts: `json_each(?) AS u`,
	// CROSS JOIN keeps the list the outer loop.
	each:      `CROSS JOIN %[1]s ON %[2]s`,
	byUser:    `event_users AS e`,
	bySession: `event_users AS e`,
	session:   `e.app_id = -%[1]s AND e.user_id = %[2]s`,
	run:       `e.run`,
}

var sqliteCovariates = sqliteEventKeys.covariates()

// audienceEvents reads event_users only up to an id: the events above it
// come from audienceTail.
func (sqliteEngine) audienceEvents(nEvents int, bounded bool) string {
	return sqliteEventKeys.audienceEvents(nEvents, bounded, ` AND e.id <= ?`)
}

// audienceTail: the events not yet in event_users (a second or two of
// them) are read once for the whole pass.
func (sqliteEngine) audienceTail(ctx context.Context, rtx *sql.Tx, appID int64, eventIDs []string, bounded bool, since int64) (map[string][]scanEvent, []any, error) {
	var upto int64
	if err := rtx.QueryRowContext(ctx, `SELECT upto FROM event_users_upto`).Scan(&upto); err != nil {
		return nil, nil, err
	}
	tail, err := loadEventTail(ctx, rtx, appID, upto, eventIDs, bounded, since)
	if err != nil {
		return nil, nil, err
	}
	return tail, []any{upto}, nil
}

// loadEventTail reads the app's events above upto with one of eventIDs,
// by user: what a reader's snapshot has that event_users does not.
func loadEventTail(ctx context.Context, tx *sql.Tx, appID, upto int64, eventIDs []string, bounded bool, since int64) (map[string][]scanEvent, error) {
	tail := map[string][]scanEvent{}
	if len(eventIDs) == 0 {
		return tail, nil
	}
	// NOT INDEXED: a scan of the rowids above upto, never of every event
	// with these ids.
	q := `SELECT user_id, event_id, ts FROM events NOT INDEXED WHERE id > ? AND app_id = ? AND user_id IS NOT NULL`
	args := []any{upto, appID}
	if bounded {
		q += ` AND ts >= ?`
		args = append(args, since)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var user, event string
		var ts int64
		if err := rows.Scan(&user, &event, &ts); err != nil {
			return nil, err
		}
		if j := slices.Index(eventIDs, event); j >= 0 {
			tail[user] = append(tail[user], scanEvent{j, ts})
		}
	}
	return tail, rows.Err()
}

// unindexedEvents: the events the indexer holds in memory, not yet in
// event_users.
func (e sqliteEngine) unindexedEvents(dst []tailEvent, k userRef) []tailEvent {
	e.db.ix.tail(k, func(ev tailEvent) { dst = append(dst, ev) })
	return dst
}

// unindexedLinked reads the users' links in one query, and only while the
// indexer holds events of sessions: a new user's first assignment (CUPED)
// asks for every user of a group commit.
func (e sqliteEngine) unindexedLinked(tx *Tx, appID int64, users string, fn func(int, tailEvent)) error {
	if !e.db.ix.holdsSessions() {
		return nil
	}
	e.db.linkReads.Add(1)
	rows, err := tx.query(`SELECT u.key, l.session_id FROM json_each(?) AS u CROSS JOIN session_links AS l
		WHERE l.app_id = ? AND l.user_id = u.value`, users, appID)
	if err != nil {
		return err
	}
	return eachRow(rows, func() error {
		var k int
		var s string
		if err := rows.Scan(&k, &s); err != nil {
			return err
		}
		e.db.ix.tail(sessionRef(appID, s), func(ev tailEvent) { fn(k, ev) })
		return nil
	})
}

// expireEvents: out of their runs in event_users (sqlite_eventruns.go).
func (sqliteEngine) expireEvents(tx *Tx, appID, cutoff int64, batch []expiring, done map[runGroup]tailEvent) error {
	return tx.expireFromRuns(appID, cutoff, batch, done)
}

// purgeApp: emptied first, the index makes each event's delete trigger a
// lookup that finds nothing. The app's sessions are under its id negated.
func (sqliteEngine) purgeApp(tx *Tx, appID int64) error {
	_, err := tx.exec(`DELETE FROM event_users WHERE app_id IN (?, -?)`, appID, appID)
	return err
}

// presence: there is none on SQLite: 0 and a context that never ends, and
// claims lapse with their lease.
func (sqliteEngine) presence(context.Context) (int64, context.Context, error) {
	return 0, context.Background(), nil
}

// reapClaims: there is no presence to tell a gone process by; its claims
// lapse with their lease.
func (sqliteEngine) reapClaims(context.Context, time.Time, int64) error { return nil }

// runClaim goes through the group commit: the claim shares a commit with
// the attempts being recorded instead of waiting for them.
func (e sqliteEngine) runClaim(ctx context.Context, claim func(*Tx) error) error {
	return e.db.batch.do(ctx, claim)
}

// capClaims: all of them. One writer at a time, and each process caps its
// own sends.
func (sqliteEngine) capClaims(_ *Tx, cands []dueCandidate, _ *ClaimOptions, _, _ int64) ([]int64, error) {
	return candidateIDs(cands), nil
}

func (e sqliteEngine) election() election { return e.db.fileElection() }

// Rate limits: each process counts its own, in memory (handlers): a count
// shared in the file would put a write on its one writer for every
// request.
func (sqliteEngine) sharedRateLimits() bool { return false }
func (sqliteEngine) claimRate(context.Context, RateWindow, int, int) (int64, error) {
	return 0, ErrRateLimitsLocal
}
func (sqliteEngine) returnRate(context.Context, RateWindow, int, int) error {
	return ErrRateLimitsLocal
}
func (sqliteEngine) trimRateWindows(context.Context, int64) (int64, error) {
	return 0, ErrRateLimitsLocal
}

// scrubReplaced: the replaced values' pages also live on in the WAL until
// a checkpoint; TRUNCATE copies the zeroed pages into the main file and
// empties the WAL. Best effort: a busy reader only delays it.
func (e sqliteEngine) scrubReplaced(ctx context.Context) {
	if e.db.ckpt != nil {
		_ = e.db.ckpt.Truncate(ctx)
	}
}

// fileSizes: the database file and its write-ahead log (0 when there is
// none, e.g. right after a checkpoint that truncated it).
func (e sqliteEngine) fileSizes() (main, wal int64, err error) {
	st, err := os.Stat(e.db.path)
	if err != nil {
		return 0, 0, err
	}
	main = st.Size()
	switch st, err := os.Stat(e.db.path + "-wal"); {
	case err == nil:
		wal = st.Size()
	case !errors.Is(err, os.ErrNotExist):
		return main, 0, err
	}
	return main, wal, nil
}

// Statistics: SQLite's queries name the indexes they use, so none are
// missing and none is analyzed.
func (sqliteEngine) tablesWithoutStatistics(context.Context, int64) ([]string, error) {
	return nil, nil
}
func (sqliteEngine) analyzeTable(context.Context, string) error { return nil }

// SQL fragments.

func (sqliteEngine) greatest() string  { return `MAX` }
func (sqliteEngine) jsonEach() string  { return `json_each(?) AS j` }
func (sqliteEngine) jsonTexts() string { return sqliteEventKeys.texts }
func (sqliteEngine) jsonIDs() string   { return `SELECT value FROM json_each(?)` }
func (sqliteEngine) instr() string     { return `instr` }

func (sqliteEngine) assignmentsOfKeys() string { return sqliteAssignmentsOfKeys }

var sqliteAssignmentsOfKeys = sqliteEventKeys.assignmentsOfKeys()

// payloadHas: the bytes of a parameter in a delivery's payload.
func (sqliteEngine) payloadHas() string { return `instr(d.payload, ?) > 0` }

// unindexed: SQLite's planner, knowing nothing of an id list's length,
// would take the due index for it; a unary + steers it off.
func (sqliteEngine) unindexed() string { return `+` }

// eventsByEventTS: the planner would take the (app_id, ts) index for the
// window and then sort; this index covers the count and groups as it
// reads.
func (sqliteEngine) eventsByEventTS() string { return `events INDEXED BY events_app_event_ts` }

// forUpdate and skipLocked: one writer at a time holds the whole database:
// no row is locked, none is passed over.
func (sqliteEngine) forUpdate() string  { return `` }
func (sqliteEngine) skipLocked() string { return `` }

func (sqliteEngine) covariateEvents(kind byte) string { return sqliteCovariates[kind] }
