// Package store owns the SQLite database: its handles, migrations, every SQL
// statement and transaction, and the domain types the API speaks in.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"modernc.org/sqlite" // registers the cgo-free "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"service/keyring"
	"service/migrations"
	"service/netpolicy"
)

// DB is the service's database: one writer connection, because SQLite
// admits one writer at a time and queueing in Go is cheaper than spinning
// on SQLITE_BUSY, and a pool of readers, which WAL lets run beside it.
type DB struct {
	write *sql.DB
	read  *sql.DB
	path  string

	// Now is the clock every transaction reads; tests replace it.
	Now func() time.Time

	// gen counts committed changes to campaigns, content and audiences, and
	// commits seen from other processes (watch). Cached views tagged with an
	// older generation are stale.
	gen     atomic.Uint64
	watch   *watcher
	foreign foreignCommits

	// bufs are the write transactions' buffers between two of them.
	bufs atomic.Pointer[txBufs]

	keys    keyCache
	origins sync.Map // app id -> cachedOrigins
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
	// runningReads counts the campaign reads of stillRunning, for tests.
	runningReads atomic.Int64
	audiences    *audienceCache
	batch        *batcher
	ix           eventIndexer
	ckpt         *checkpoints
	closed       atomic.Bool
	// lockWait bounds begin's wait for the write lock (writeLockWait;
	// shorter in tests), and lockWaits counts its retries.
	lockWait  time.Duration
	lockWaits atomic.Int64

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

var dsnPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// DSN returns the connection string for path. The pragmas sit in the DSN so
// that every pooled connection gets them, not only the one that ran a PRAGMA.
func DSN(path string) string { return dsn(path) }

// Page cache sizes, in KiB (SQLite reads a negative cache_size as KiB).
// The writer's cache holds the b-tree pages the hot inserts walk (the right
// edges of the event indexes, the inner pages of users, assignments and
// event_users); the leaves it misses come from the OS page cache for a read
// system call. It is kept small for two measured reasons. Its pages are
// resident memory: after a million users and events, serve's RSS was
// 91 MiB with a 16 MiB writer cache and 65 MiB with this one. And a commit
// whose inserts split a page scans the cache's whole hash table (SQLite's
// balance moves a page through the lock-byte page number, so the end of the
// transaction truncates the cache past it), a cost that grows with the
// cache: at 16 MiB that scan was 2.6% of an event's CPU, at 4 MiB a quarter
// of it, and `make load` and `make soak` are as fast. The readers serve
// lookups that memory usually answers first. mmap stays off: mapped pages
// count in the process's resident memory, and reads through the OS page
// cache cost little next to a commit.
const (
	writerCacheKiB = 4 << 10
	readerCacheKiB = 4 << 10
)

// walLimit bounds the WAL file: when a reset finds it larger it is cut
// back to this size, and a checkpoint that leaves more than this many bytes
// in it is followed by one that waits for readers (see checkpointer).
const walLimit = 64 << 20

func dsn(path string, extra ...string) string {
	v := url.Values{}
	// The driver runs busy_timeout pragmas first in no set order, so an
	// extra one replaces this default instead of following it.
	if !slices.ContainsFunc(extra, func(p string) bool { return strings.HasPrefix(p, "busy_timeout") }) {
		v.Add("_pragma", "busy_timeout(10000)")
	}
	v.Add("_pragma", "journal_mode(wal)")
	// NORMAL in WAL mode survives a process crash (kill -9) without loss;
	// only an OS crash or power cut can drop the last transactions.
	v.Add("_pragma", "synchronous(normal)")
	v.Add("_pragma", "foreign_keys(1)")
	// Checkpoints are the checkpointer goroutine's job (see checkpointer):
	// an automatic one runs inside the commit that crosses the threshold,
	// and every request of that batch waits for its copying and fsyncs.
	v.Add("_pragma", "wal_autocheckpoint(0)")
	v.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walLimit))
	for _, p := range extra {
		v.Add("_pragma", p)
	}
	// BEGIN IMMEDIATE: a deferred transaction that reads and then writes fails
	// with SQLITE_BUSY at once, whatever busy_timeout says.
	v.Add("_txlock", "immediate")
	// The path is a URI's path: SQLite decodes %XX in it, and the driver
	// cuts it at the first '?', so those characters (and '#') are escaped
	// to name exactly the file given.
	return "file:" + dsnPath.Replace(path) + "?" + v.Encode()
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

	walLimit int64 // tests shrink it
}

// Open opens (creating if needed) the database at path and migrates it to
// the latest schema.
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

func open(ctx context.Context, path string, up bool, opts Options) (*DB, error) {
	// The writer never waits in SQLite's busy handler, which sleeps in a
	// system call and keeps the scheduler thread meanwhile: begin waits
	// for the write lock in Go instead (see begin).
	w, err := sql.Open("sqlite", dsn(path, fmt.Sprintf("cache_size(%d)", -writerCacheKiB), "temp_store(memory)", "busy_timeout(0)"))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", dsn(path, fmt.Sprintf("cache_size(%d)", -readerCacheKiB)))
	if err != nil {
		w.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)

	db := &DB{write: w, read: r, path: path, Now: time.Now, lockWait: writeLockWait}
	db.wstmts, db.rstmts = newStmtCache(w, true), newStmtCache(r, false)
	// The group commit's multi-row inserts are prepared while the writer is
	// free: once it is busy, a statement prepared in the background can
	// wait long for it, and each of these is costly to parse.
	for _, m := range []multiRow{usersInsert, assignInsert, eventsInsert} {
		for _, q := range m.texts {
			db.wstmts.prepare(q)
		}
	}
	if up {
		if err := db.Migrate(ctx, 0); err != nil {
			db.close()
			return nil, err
		}
	}
	db.cache = newCampaignCache()
	// Sized so that a million users cost a bounded few MiB: a miss costs
	// one indexed statement in the next write batch.
	db.assigned = newUserCache(1 << 10)
	db.known = newUserCache(1 << 9)
	db.converted = newUserCache(1 << 9)
	db.audiences = newAudienceCache()
	if up {
		// Events a crash left out of event_users are indexed before any
		// lookup by user can miss them.
		db.ix.on = true
		if err := db.indexAll(ctx); err != nil {
			db.close()
			return nil, err
		}
	}
	db.batch = newBatcher(db)
	if db.ckpt, err = startCheckpoints(path, opts); err != nil {
		db.batch.close()
		db.close()
		return nil, err
	}
	if db.ix.on {
		db.ix.stop, db.ix.done = make(chan struct{}), make(chan struct{})
		go db.idleDrain()
	}
	db.startWatcher()
	return db, nil
}

// MigrationsUpTo counts the shipped migrations numbered v or less: the
// steps "down" can take from version v. Numbers may have gaps, so it is
// not v itself.
func MigrationsUpTo(v uint) (int, error) {
	names, err := fs.Glob(migrations.FS, "*.up.sql")
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
	if errors.Is(err, migrate.ErrNoChange) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

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

// migrator runs on a connection of its own, closed with it: the writer's
// busy_timeout is 0 (see begin), and a migration that met another writer
// would fail halfway and leave the schema marked dirty, where this
// connection waits busy_timeout for the lock like any other.
func (db *DB) migrator() (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, err
	}
	conn, err := sql.Open("sqlite", dsn(db.path))
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	drv, err := migratesqlite.WithInstance(conn, &migratesqlite.Config{})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return migrate.NewWithInstance("iofs", src, "sqlite", drv)
}

// Close stops the write batcher, then checkpoints and closes the database.
func (db *DB) Close() error {
	if !db.closed.CompareAndSwap(false, true) {
		return nil
	}
	if db.watch != nil {
		db.watch.close()
	}
	if db.batch != nil {
		db.batch.close()
	}
	if db.ix.stop != nil {
		close(db.ix.stop)
		<-db.ix.done
	}
	if db.ckpt != nil {
		db.ckpt.close()
	}
	return db.close()
}

func (db *DB) close() error {
	db.rows.close()
	db.wstmts.close()
	db.rstmts.close()
	return errors.Join(db.read.Close(), db.write.Close())
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return db.read.PingContext(ctx)
}

// Tx is a write transaction with the moment it started, so every row it
// writes carries one consistent time.
type Tx struct {
	*sql.Tx
	sc       *sql.Conn // the connection the transaction holds
	conn               // exec, query and queryRow, prepared, with the caller's context
	db       *DB
	now      time.Time
	changed  bool // campaigns, content or audiences changed: bump the generation
	enqueued bool // webhook deliveries were queued: wake the dispatcher
	after    []func()

	// counts are variant counter increments gathered over a group-commit
	// batch and written once per variant just before the commit.
	counts map[int64]*counterDelta
	// running caches campaign status checks within the transaction: no
	// operation of a batch moves a campaign, so one read serves them all.
	running map[int64]bool

	// txBufs holds the rows written at commit, one multi-row statement per
	// table (see rows.go), and the events staged for the indexer.
	*txBufs

	// purged are the apps this transaction deleted. drain and indexAll
	// make it a transaction of the indexer's own (see eventindex.go).
	purged []int64
	// expired are the retention passes of this transaction (see
	// eventindex.go).
	expired         []expiry
	drain, indexAll bool
	foreignSeen     int64
}

// writeLockWait is how long begin waits for another connection's write
// lock (another process writing, a checkpoint restarting the WAL): what
// busy_timeout gives every other connection.
const writeLockWait = 10 * time.Second

// begin starts a write transaction (BEGIN IMMEDIATE through the DSN). When
// another connection holds the write lock, SQLite's busy handler would
// sleep in nanosleep, and a Go thread in a system call keeps its scheduler
// slot until the runtime's monitor notices (up to 10 ms under load): with
// GOMAXPROCS=1 the whole server would stop with the writer. So the
// writer's busy_timeout is 0 and the wait happens here, on a Go timer that
// leaves the scheduler to the other requests, retrying within 100 us to
// 2 ms of the lock's release.
func (db *DB) begin(ctx context.Context) (*Tx, error) {
	var deadline time.Time
	wait := 100 * time.Microsecond
	for {
		// The transaction runs on a connection of its own (the pool's one)
		// so that the multi-row statements can reach the driver (rawrows.go).
		sc, err := db.write.Conn(ctx)
		if err != nil {
			return nil, err
		}
		tx, err := sc.BeginTx(ctx, nil)
		if err == nil {
			bufs := db.bufs.Swap(nil)
			if bufs == nil {
				bufs = new(txBufs)
			}
			return &Tx{Tx: tx, sc: sc, conn: conn{ctx, db.wstmts, tx}, db: db, now: db.Now().UTC(), txBufs: bufs}, nil
		}
		sc.Close()
		if !isBusy(err) {
			return nil, err
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(db.lockWait)
		} else if now.After(deadline) {
			return nil, err
		}
		db.lockWaits.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// commit commits and then publishes what the transaction changed. Cache
// invalidation happens after the commit so a reader can never cache a
// snapshot older than the generation it is tagged with.
func (tx *Tx) commit() error {
	if err := tx.flushUsers(); err != nil {
		return err
	}
	// Impressions of first assignments are counted as they are written.
	if err := tx.flushAssignments(); err != nil {
		return err
	}
	events, impressions := tx.written()
	nEvents := len(tx.events)
	if err := tx.flushEvents(); err != nil {
		return err
	}
	if err := tx.flushCounts(); err != nil {
		return err
	}
	if err := tx.commitIndexed(nEvents); err != nil {
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
	_ = tx.Rollback()
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
