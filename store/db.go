// Package store owns the database, a SQLite file or PostgreSQL: its
// handles, migrations, every SQL statement and transaction, and the domain
// types the API speaks in. Files named sqlite_* hold the SQLite store's own
// machinery and postgres_* the PostgreSQL store's; the rest is the domain,
// in SQL both run (see dialect).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	// registers the cgo-free "sqlite" driver

	"github.com/golang-migrate/migrate/v4"

	"service/keyring"
	"service/netpolicy"
	"service/store/postgres"
	"service/store/sqlite"
)

// DB is the service's database, in one SQLite file or in PostgreSQL: one
// writer connection, and a pool of readers beside it. On SQLite one writer
// is all the file admits, and queueing in Go is cheaper than spinning on
// SQLITE_BUSY; on PostgreSQL the writer's group commit keeps one process's
// writes in one order, as on SQLite, while readers run in parallel.
type DB struct {
	// timeout bounds a request's database work (Options.Timeout).
	timeout time.Duration
	// refreshing holds the cache entries being read again in the
	// background (inBackground).
	refreshing sync.Map
	write      *sql.DB
	read       *sql.DB
	path       string

	// Now is the clock every transaction reads; tests replace it.
	Now func() time.Time

	// gen counts committed changes to what the caches hold (see
	// Tx.changed), and changes seen from other processes (the SQLite
	// watcher, the PostgreSQL listener). Cached views, keys and origin
	// lists tagged with an older generation are stale.
	gen     genCounter
	watch   *watcher
	foreign foreignCommits

	// bufs are the write transactions' buffers between two of them.
	bufs atomic.Pointer[txBufs]

	keys    keyCache
	origins sync.Map // app id -> cachedOrigins
	// authTTL is how long a cached key or origin list is trusted without a
	// read (keyCacheTTL; tests lengthen it).
	authTTL time.Duration
	cache   *campaignCache
	// Prepared statements of the hot paths, per pool, and the multi-row
	// statements on the writer's connection.
	wstmts, rstmts *stmtCache
	rows           rowStmts
	// assigned maps (campaign, user) to the variant; known marks users
	// already recorded. Both spare the hot paths a query per request.
	assigned  *userCache
	known     *userCache
	converted *userCache // (campaign, user) that converted: no second try
	// links holds the outcome of linking a (session, user) pair, which
	// never changes: a variant request naming both links them once per
	// process (see links.go).
	links *userCache
	// userEpoch moves at every erasure this process commits or learns of
	// (see erasure.go), which empties the four user caches above.
	userEpoch atomic.Uint64
	// erasuresSeen is the database's count of erasures as last read.
	erasuresSeen atomic.Int64
	// erasuresDue: another process committed, and may have erased.
	erasuresDue atomic.Bool
	// runningReads counts the campaign reads of stillRunning, for tests.
	runningReads atomic.Int64
	// journalInserts counts the journal rows flushJournal wrote by a
	// statement of their own, for tests.
	journalInserts atomic.Int64
	// covariateReads counts the covariate queries, and linkReads the
	// reads of links for the linked sessions' unindexed events, for tests.
	covariateReads, linkReads atomic.Int64
	audiences                 *audienceCache
	batch                     *batcher
	ix                        eventIndexer
	ckpt                      *sqlite.Checkpoints
	closed                    atomic.Bool
	// lockWait bounds begin's wait for the write lock (writeLockWait;
	// shorter in tests), and lockWaits counts its retries.
	lockWait  time.Duration
	lockWaits atomic.Int64

	// leading is whether this process leads the scheduled work (see
	// leader.go).
	leading atomic.Bool
	// lead is the election on SQLite (sqlite_leader.go).
	lead fileLeader

	// eng is what differs between SQLite and PostgreSQL (see engine).
	eng engine
	// eraser is the engine's share of an erasure (erasure.go).
	eraser eraser

	// Notify, when set, is called after a commit that queued webhook
	// deliveries, so the dispatcher wakes without polling.
	Notify func()

	// WebhookPolicy refuses webhook URLs whose host is a literal IP it
	// blocks. Set it before the database is shared.
	WebhookPolicy netpolicy.Policy
	// secrets seals webhook secrets at rest; nil stores them as plaintext.
	secrets *keyring.Ring
	// Observe, when set (before the database is shared), receives the
	// store's measurements for metrics.
	Observe *Observer
}

// Options are Open's settings beyond the path.
type Options struct {
	// CheckpointCommand, when set, returns the command that runs the
	// checkpointer for the database at path in a process of its own
	// (RunCheckpointer with path and walLimit, until its standard input
	// ends); see checkpoints. Unset, checkpoints run in a goroutine.
	CheckpointCommand func(path string, walLimit int64) *exec.Cmd
	// Log receives what happens to the checkpointer process.
	Log *slog.Logger
	// Timeout bounds the database work of one request (and of one group
	// commit); 0 means DefaultTimeout. On PostgreSQL it is also the
	// sessions' statement_timeout and lock_timeout.
	Timeout time.Duration

	walLimit int64 // tests shrink it
}

// Open opens (creating if needed) the database at path and migrates it to
// the latest schema.
//
// path is a file path (SQLite) or a postgres:// or postgresql:// URL.
func Open(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, true, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*DB, error) {
	return open(ctx, path, true, opts)
}

// OpenNoMigrate opens the database as it is, for the migrate command.
func OpenNoMigrate(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, false, Options{})
}

// MigrationsUpTo counts the shipped migrations numbered v or less: the
// steps "down" can take from version v. Numbers may have gaps, so it is
// not v itself.
func (db *DB) MigrationsUpTo(v uint) (int, error) {
	names, err := fs.Glob(db.migrationsFS(), "*.up.sql")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		num, err := strconv.ParseUint(strings.SplitN(name, "_", 2)[0], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("migration %s: %w", name, err)
		}
		if uint(num) <= v {
			n++
		}
	}
	return n, nil
}

func open(ctx context.Context, target string, up bool, opts Options) (*DB, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if IsPostgresURL(target) {
		return openPostgres(ctx, target, up, opts)
	}
	return openSQLite(ctx, target, up, opts)
}

// Timeout is how long a request's database work may take (Options.Timeout).
func (db *DB) Timeout() time.Duration { return db.timeout }

// migrationsFS is the store's own migrations.
func (db *DB) migrationsFS() fs.FS { return db.eng.migrations() }

// initCaches makes the caches of the hot paths, empty.
func (db *DB) initCaches() {
	db.authTTL = keyCacheTTL
	db.cache = newCampaignCache()
	// Sized so that a million users cost a bounded few MiB: a miss costs
	// one indexed statement in the next write batch.
	db.assigned = newUserCache(1<<10, &db.userEpoch)
	db.known = newUserCache(1<<9, &db.userEpoch)
	db.converted = newUserCache(1<<9, &db.userEpoch)
	db.links = newUserCache(1<<9, &db.userEpoch)
	db.audiences = newAudienceCache()
}

// migrator returns golang-migrate on the store's own migrations.
func (db *DB) migrator() (*migrate.Migrate, error) { return db.eng.migrator() }

// begin starts a write transaction.
func (db *DB) begin(ctx context.Context) (*Tx, error) { return db.eng.begin(ctx) }

// newTx wraps a transaction begun on sc.
func (db *DB) newTx(ctx context.Context, sc *sql.Conn, tx *sql.Tx) *Tx {
	bufs := db.bufs.Swap(nil)
	if bufs == nil {
		bufs = new(txBufs)
	}
	return &Tx{raw: tx, sc: sc, conn: conn{ctx, db.wstmts, tx}, db: db, now: db.Now().UTC(), txBufs: bufs, epoch: db.userEpoch.Load()}
}

// Migrate applies migrations: steps 0 means all the way up, a negative
// number steps down that many.
func (db *DB) Migrate(ctx context.Context, steps int) error {
	m, err := db.migrator()
	if err != nil {
		return err
	}
	defer m.Close()
	if steps == 0 {
		err = m.Up()
	} else {
		err = m.Steps(steps)
	}
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate: %w", err)
	}
	// The migrations are SQL files; what SQL cannot say well runs here,
	// once the schema has what it needs.
	if v, _, err := m.Version(); err == nil && v >= campaignKeysVersion {
		if err := db.backfillCampaignKeys(ctx); err != nil {
			return fmt.Errorf("migrate: campaign keys: %w", err)
		}
	}
	return nil
}

// campaignKeysVersion is the migration that adds campaign keys.
const campaignKeysVersion = 17

// Version reports the schema version and whether a migration failed midway.
func (db *DB) Version() (uint, bool, error) {
	m, err := db.migrator()
	if err != nil {
		return 0, false, err
	}
	defer m.Close()
	v, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	return v, dirty, err
}

// Close stops the write batcher, then checkpoints and closes the database.
func (db *DB) Close() error {
	if !db.closed.CompareAndSwap(false, true) {
		return nil
	}
	db.eng.close()
	return db.close()
}

func (db *DB) close() error {
	db.rows.close(db.write)
	db.wstmts.close()
	db.rstmts.close()
	return errors.Join(db.read.Close(), db.write.Close())
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return db.read.PingContext(ctx)
}

// lostToConcurrent reports whether err is a write transaction's loss to a
// concurrent transaction of another process (engine.lostToConcurrent).
func (db *DB) lostToConcurrent(err error) bool { return db.eng.lostToConcurrent(err) }

// Tx is a write transaction with the moment it started, so every row it
// writes carries one consistent time.
type Tx struct {
	raw  *sql.Tx   // only for the engine code that needs the driver itself; queries go through conn
	sc   *sql.Conn // the connection the transaction holds
	conn           // exec, query and queryRow, prepared, with the caller's context
	db   *DB
	now  time.Time
	// epoch is the user caches' epoch when the transaction began: what it
	// learns of users goes into them under it.
	epoch uint64
	// changed: what the caches hold changed (campaigns, content,
	// audiences, apps and their settings, keys) or another admin setting
	// did (webhooks). The commit bumps the generation, which starts this
	// process's caches over, and on PostgreSQL notifies every other
	// process on the database to do the same (postgres_listen.go).
	changed  bool
	enqueued bool // webhook deliveries were queued: wake the dispatcher
	// countsOwed: the counters' deltas wait in cols to be written with
	// the COMMIT (PostgreSQL's commit).
	countsOwed bool
	after      []func()

	// counts are variant counter increments gathered over a group-commit
	// batch and written once per variant just before the commit.
	counts map[int64]*counterDelta
	// running caches campaign status checks within the transaction: no
	// operation of a batch moves a campaign, so one read serves them all.
	running map[int64]bool
	// queued counts the first assignments queued so far (assignLater).
	queued int

	// txBufs holds the rows written at commit, one multi-row statement per
	// table (see rows.go), and the events staged for the indexer.
	*txBufs

	// purged are the apps this transaction deleted. drain and indexAll
	// make it a transaction of the indexer's own (see sqlite_eventindex.go).
	purged []int64
	// erased are the users whose events this transaction erased (see
	// sqlite_erasure.go).
	erased []userRef
	// expired are the retention passes of this transaction (see
	// sqlite_eventindex.go).
	expired         []expiry
	drain, indexAll bool
	foreignSeen     int64
}

// commit commits and then publishes what the transaction changed. Cache
// invalidation happens after the commit so a reader can never cache a
// snapshot older than the generation it is tagged with.
func (tx *Tx) commit() error {
	if err := tx.flushUsers(); err != nil {
		return err
	}
	// Impressions of first assignments are counted as they are written,
	// and conversions after them. The order is the locks' (see rows.go).
	if err := tx.flushAssignments(); err != nil {
		return err
	}
	if err := tx.flushConversions(); err != nil {
		return err
	}
	if err := tx.flushMetrics(); err != nil {
		return err
	}
	events, impressions := tx.written()
	nEvents := len(tx.events)
	if err := tx.flushEvents(); err != nil {
		return err
	}
	if err := tx.flushJournal(); err != nil {
		return err
	}
	if err := tx.flushCounts(); err != nil {
		return err
	}
	if err := tx.db.eng.commit(tx, nEvents); err != nil {
		return err
	}
	tx.db.observeWritten(events, impressions)
	if tx.changed {
		tx.db.gen.Add(1)
	}
	for _, f := range tx.after {
		f()
	}
	if tx.enqueued && tx.db.Notify != nil {
		tx.db.Notify()
	}
	return nil
}

// withTx runs fn in one write transaction: it all happens or none of it does.
func (db *DB) withTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.end()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.commit()
}

// end rolls back what did not commit and hands the transaction's buffers
// to the next one.
func (tx *Tx) end() {
	_ = tx.raw.Rollback()
	tx.sc.Close()
	tx.txBufs.reset()
	tx.db.bufs.Store(tx.txBufs)
	tx.txBufs = nil
}

// ms converts a time to the stored integer milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// fromMS converts stored milliseconds back to UTC time.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func nullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ms(*t)
}

// insertID runs an INSERT of one row and returns the id it was given.
// RETURNING serves both stores: PostgreSQL has no last insert id.
func (tx *Tx) insertID(q string, args ...any) (int64, error) {
	var id int64
	err := tx.queryRow(q+` RETURNING id`, args...).Scan(&id)
	return id, err
}

// OpenSQL opens a plain database/sql handle on the database at target, a
// SQLite file or a postgres:// URL, for SQL written as the store writes it
// (? placeholders on both): for maintenance and tests that must put the
// database in a state no store method reaches.
func OpenSQL(target string) (*sql.DB, error) {
	if IsPostgresURL(target) {
		return postgres.OpenSQL(target)
	}
	return sql.Open("sqlite", DSN(target))
}
