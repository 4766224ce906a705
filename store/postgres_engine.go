package store

import (
	"context"
	"database/sql"
	"io/fs"
	"slices"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5"

	"service/migrations"
	"service/store/postgres"
)

// The PostgreSQL store's engine (see engine). Unlike SQLite's one writer
// at a time, the writers of several processes run at once on one
// database: rows they both write are locked, and taken in one order, so
// that none deadlocks; claims pass over rows another process holds.

var _ engine = (*postgresEngine)(nil)

// pgEngine returns the PostgreSQL engine, nil on SQLite: for the
// PostgreSQL store's own files and for tests.
func (db *DB) pgEngine() *postgresEngine {
	e, _ := db.eng.(*postgresEngine)
	return e
}

func (*postgresEngine) migrations() fs.FS { return migrations.Postgres }

func (e *postgresEngine) migrator() (*migrate.Migrate, error) { return postgres.Migrator(e.cfg) }

func (e *postgresEngine) close() {
	db := e.db
	if e.listen != nil {
		e.listen.close()
	}
	db.closeLeader()
	db.closePresence()
	if db.batch != nil {
		db.batch.close()
	}
}

func (e *postgresEngine) begin(ctx context.Context) (*Tx, error) { return e.db.beginPG(ctx) }

// commit first tells the other processes on the database, with the
// commit, that their caches are stale (postgres_listen.go). The counters
// (flushCounts) go last, with the COMMIT in their round trip. Events need
// no index of their own: the events table's serve lookups by user.
func (*postgresEngine) commit(tx *Tx, _ int) error {
	if tx.changed {
		if err := tx.notifyChanged(); err != nil {
			return err
		}
	}
	if tx.countsOwed {
		if err := tx.commitCountsPG(); err != nil {
			return err
		}
	}
	return tx.commitConn()
}

// queryRowFirst: with pgx's own scanning, on the transaction's connection.
func (*postgresEngine) queryRowFirst(tx *Tx, q string, args []any, dest ...any) error {
	return tx.sc.Raw(func(dc any) error { return postgres.RawQueryRow(tx.ctx, dc, q, args, dest...) })
}

// queryPG runs q on the transaction's connection with pgx's own scanning,
// handing each row to each: a statement that may be a group commit's
// first, whose round trip then carries the transaction's BEGIN.
func (tx *Tx) queryPG(q string, args []any, each func(pgx.CollectableRow) error) error {
	return tx.sc.Raw(func(dc any) error { return postgres.RawQuery(tx.ctx, dc, q, args, each) })
}

func (*postgresEngine) lostToConcurrent(err error) bool { return postgres.LostToConcurrent(err) }

// insertUsers sorts the sightings first, so that two processes' group
// commits lock the same users' rows in one order (see sortAssignments),
// and sends them as one array per column (postgres_rows.go).
func (*postgresEngine) insertUsers(tx *Tx) error {
	tx.sortUsers()
	return tx.flushUsersPG()
}

// insertAssignments: in key order, for the locks (sortAssignments), in
// one statement, where RETURNING costs little next to a round trip.
func (*postgresEngine) insertAssignments(tx *Tx) error {
	tx.sortAssignments()
	return tx.insertAssignmentsPG()
}

// orderConversions: the assignments' rows are locked in one order
// whatever the batch holds.
func (*postgresEngine) orderConversions(tx *Tx, i int) { tx.sortConversions(i) }

// convertUsers: one statement for all of them (postgres_counts.go), since
// each costs a round trip.
func (*postgresEngine) convertUsers(tx *Tx) error { return tx.convertUsersPG() }

func (*postgresEngine) insertEvents(tx *Tx) error { return tx.insertEventsPG() }

// insertLink is one round trip: the link's insert is a data-modifying
// WITH, and the campaigns to copy follow the row that says it went in.
func (*postgresEngine) insertLink(tx *Tx, appID int64, sessionID, userID string) (bool, []int64, error) {
	ids, err := scanIDs(tx.query(pgLinkInsert, appID, sessionID, userID, ms(tx.now), storedKey('s', sessionID), appID, storedKey('u', userID)))
	if err != nil || len(ids) == 0 {
		return false, nil, err
	}
	return true, ids[1:], nil
}

// moveMetricValues sends the moves as arrays, as the other rows of a
// group commit go (postgres_rows.go).
func (*postgresEngine) moveMetricValues(tx *Tx, conversion bool, list []*metricMove, moved func(metricValueRef, float64)) error {
	return tx.moveMetricValuesPG(conversion, list, moved)
}

// lockMetricMoves: a transaction-level advisory lock, so two processes'
// passes never apply the same values' moves in two orders.
func (*postgresEngine) lockMetricMoves(tx *Tx) error {
	_, err := tx.exec(`SELECT pg_advisory_xact_lock(?)`, int64(postgres.MetricMovesLockKey))
	return err
}

// flushCounts: one statement for every variant (postgres_counts.go), since
// each costs a round trip, sent with the COMMIT (commit).
func (*postgresEngine) flushCounts(tx *Tx, ids []int64) error {
	tx.owePGCounts(ids)
	return nil
}

// userEvents: a user's events are found through the events table's own
// index; there is no event_users to keep.
func (*postgresEngine) userEvents(where []string, args []any, _ int64, userID, _ string) (string, []string, []any) {
	return "events", append(where, "user_id = ?"), append(args, userID)
}

// compileUserEvents: through the events table's index by user.
func (*postgresEngine) compileUserEvents(e *compiledAudience, where string) {
	e.userEvents = `SELECT event_id, ts, id, NULL FROM events` + where
	e.userEventsRead = e.userEvents
}

// postgresEventKeys: OFFSET 0 keeps the planner from flattening the
// subquery into a join it may then hash: it runs once per key, as an
// index seek.
var postgresEventKeys = keysJoin{
	texts:     `(SELECT value, ordinality - 1 AS key FROM jsonb_array_elements_text(CAST(? AS JSONB)) WITH ORDINALITY) AS u`,
	each:      `CROSS JOIN LATERAL (SELECT %[3]s FROM %[1]s WHERE %[2]s OFFSET 0) AS %[4]s`,
	byUser:    `events AS e`,
	bySession: `events AS e`,
	session:   `e.app_id = %[1]s AND e.session_id = %[2]s AND e.user_id IS NULL`,
	run:       `NULL`,
}

var postgresCovariates = postgresEventKeys.covariates()

func (*postgresEngine) audienceEvents(nEvents int, bounded bool) string {
	return postgresEventKeys.audienceEvents(nEvents, bounded, ``)
}

// audienceTail: every committed event is in the events table's index.
func (*postgresEngine) audienceTail(context.Context, *sql.Tx, int64, []string, bool, int64) (map[string][]scanEvent, []any, error) {
	return map[string][]scanEvent{}, nil, nil
}

// unindexedEvents: none; every committed event is in the events table's
// indexes by user and by session.
func (*postgresEngine) unindexedEvents(dst []tailEvent, _ userRef) []tailEvent { return dst }

func (*postgresEngine) unindexedLinked(*Tx, int64, string, func(int, tailEvent)) error { return nil }

func (*postgresEngine) expireEvents(*Tx, int64, int64, []expiring, map[runGroup]tailEvent) error {
	return nil
}

func (*postgresEngine) purgeApp(*Tx, int64) error { return nil }

func (e *postgresEngine) presence(ctx context.Context) (int64, context.Context, error) {
	return e.db.presence(ctx)
}

func (e *postgresEngine) reapClaims(ctx context.Context, now time.Time, self int64) error {
	return e.db.reapClaims(ctx, now, self)
}

// runClaim: a transaction of its own: it may wait for another process's
// lock on a webhook (capClaims), which must not hold up the API writes of
// a group commit.
func (e *postgresEngine) runClaim(_ context.Context, claim func(*Tx) error) error {
	return e.db.batch.alone(claim)
}

// capClaims: the per-webhook cap counts the claims every process holds.
// The webhooks' rows are locked (in id order, so two claims cannot
// deadlock) until the claim commits, so processes claiming for one webhook
// take turns, and each counts the unexpired claims of the others, which
// their sends cannot outnumber.
func (*postgresEngine) capClaims(tx *Tx, cands []dueCandidate, o *ClaimOptions, t, holder int64) ([]int64, error) {
	hookSet := map[int64]bool{}
	var hooks []int64
	for _, c := range cands {
		if !hookSet[c.hook] {
			hookSet[c.hook] = true
			hooks = append(hooks, c.hook)
		}
	}
	slices.Sort(hooks)
	if _, err := tx.exec(`SELECT id FROM webhooks WHERE id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST(? AS JSONB))) ORDER BY id FOR UPDATE`, jsonIDs(hooks)); err != nil {
		return nil, err
	}
	rows, err := tx.query(`SELECT webhook_id, COUNT(*) FROM webhook_deliveries
		WHERE webhook_id IN (SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST(? AS JSONB))) AND claimed_until > ? AND claimed_by <> ?
		GROUP BY webhook_id`, jsonIDs(hooks), t, holder)
	if err != nil {
		return nil, err
	}
	held := make(map[int64]int, len(hooks))
	for rows.Next() {
		var hook int64
		var n int
		if err := rows.Scan(&hook, &n); err != nil {
			rows.Close()
			return nil, err
		}
		held[hook] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(cands))
	for _, c := range cands {
		if o.InFlight[c.hook]+held[c.hook] < o.capOf(c.hook) {
			held[c.hook]++
			ids = append(ids, c.id)
		}
	}
	return ids, nil
}

func (e *postgresEngine) election() election { return e.db.pgElection() }

// Rate limits: the database counts them for every process that uses it.
// The statements run on the reader pool, one statement each in a
// transaction of its own: the writer's one connection carries the group
// commit, and a request that waits for a claim must not queue behind it.
const (
	claimRate = `INSERT INTO rate_limit_windows (app_id, class, minute, used) VALUES (?, ?, ?, ?)
		ON CONFLICT (app_id, class, minute) DO UPDATE SET used = rate_limit_windows.used + excluded.used
		WHERE rate_limit_windows.used < ?
		RETURNING used`
	// A return first drops what a last claim asked beyond the limit: none
	// of it was granted.
	returnRate = `UPDATE rate_limit_windows SET used = CASE WHEN used > ? THEN ? ELSE used END - ?
		WHERE app_id = ? AND class = ? AND minute = ?`
	trimRate = `DELETE FROM rate_limit_windows WHERE minute < ?`
)

func (*postgresEngine) sharedRateLimits() bool { return true }

// claimRate returns the window's count after the claim; sql.ErrNoRows
// when the window is full.
func (e *postgresEngine) claimRate(ctx context.Context, w RateWindow, want, limit int) (int64, error) {
	var used int64
	err := e.db.read.QueryRowContext(ctx, claimRate, w.App, w.Class, w.Minute, want, limit).Scan(&used)
	return used, err
}

func (e *postgresEngine) returnRate(ctx context.Context, w RateWindow, n, limit int) error {
	_, err := e.db.read.ExecContext(ctx, returnRate, limit, limit, n, w.App, w.Class, w.Minute)
	return err
}

func (e *postgresEngine) trimRateWindows(ctx context.Context, minute int64) (int64, error) {
	r, err := e.db.read.ExecContext(ctx, trimRate, minute)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// scrubReplaced: a replaced row stays a dead tuple until VACUUM reclaims
// it, and no setting zeroes it sooner (docs/security.md says so): the
// table is rewritten instead.
func (e *postgresEngine) scrubReplaced(ctx context.Context) { e.db.compactSecrets(ctx) }

// fileSizes reports the database's size, and no log: the server's WAL is
// shared by all its databases.
func (e *postgresEngine) fileSizes() (main, wal int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = e.db.read.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&main)
	return main, 0, err
}

func (e *postgresEngine) tablesWithoutStatistics(ctx context.Context, minRows int64) ([]string, error) {
	return postgres.TablesWithoutStatistics(ctx, e.db.read, minRows)
}

func (e *postgresEngine) analyzeTable(ctx context.Context, name string) error {
	return postgres.Analyze(ctx, e.db.read, name)
}

// SQL fragments.

func (*postgresEngine) greatest() string { return `GREATEST` }
func (*postgresEngine) jsonEach() string {
	return `jsonb_array_elements(CAST(? AS JSONB)) WITH ORDINALITY AS j(value, key)`
}
func (*postgresEngine) jsonTexts() string { return postgresEventKeys.texts }
func (*postgresEngine) jsonIDs() string {
	return `SELECT CAST(value AS BIGINT) FROM jsonb_array_elements_text(CAST(? AS JSONB))`
}

func (*postgresEngine) assignmentsOfKeys() string { return pgAssignmentsOfKeys }

var pgAssignmentsOfKeys = postgresEventKeys.assignmentsOfKeys()

func (*postgresEngine) instr() string { return `strpos` }

// payloadHas: the bytes of a parameter in a delivery's payload.
func (*postgresEngine) payloadHas() string { return `position(? IN d.payload) > 0` }

// unindexed: PostgreSQL's planner needs no steering off the due index: it
// estimates the id list's rows.
func (*postgresEngine) unindexed() string { return `` }

// eventsByEventTS: the planner picks the index itself.
func (*postgresEngine) eventsByEventTS() string { return `events` }

// forUpdate: writers of other processes run at once; skipLocked passes
// over what another process's claim or housekeeping holds at that moment,
// so that it never waits on, or deadlocks with, another process doing the
// same.
func (*postgresEngine) forUpdate() string  { return ` FOR UPDATE` }
func (*postgresEngine) skipLocked() string { return ` FOR UPDATE SKIP LOCKED` }

func (*postgresEngine) covariateEvents(kind byte) string { return postgresCovariates[kind] }
