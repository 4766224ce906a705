package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"modernc.org/sqlite" // registers the cgo-free "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"service/migrations"
)

// The SQLite store's own machinery: the DSN and its pragmas, opening the
// writer and reader pools on one file, the write lock's wait, and the
// migrator. The rest of the SQLite-only parts sit in the sqlite_*.go files.

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

func openSQLite(ctx context.Context, path string, up bool, opts Options) (*DB, error) {
	// The writer never waits in SQLite's busy handler, which sleeps in a
	// system call and keeps the scheduler thread meanwhile: begin waits
	// for the write lock in Go instead (see begin).
	//
	// secure_delete: what the writer deletes or replaces is zeroed in the
	// file, always, not only in an erasure or a re-sealing of secrets.
	// Pages keep stale copies of rows where they were rebuilt or freed
	// (a split, a merge, a retention pass), and only a writer that always
	// zeroes leaves no copy for a later erasure to miss. The price is that
	// freed pages are written (as zeros) rather than just listed free.
	w, err := sql.Open("sqlite", dsn(path, fmt.Sprintf("cache_size(%d)", -writerCacheKiB), "temp_store(memory)", "busy_timeout(0)", "secure_delete(on)"))
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

	db := &DB{write: w, read: r, path: path, Now: time.Now, lockWait: writeLockWait, timeout: opts.Timeout}
	db.eng = sqliteEngine{db}
	db.eraser = sqliteEraser{db}
	db.lead.log = opts.Log
	db.wstmts, db.rstmts = newStmtCache(w, true), newStmtCache(r, false)
	db.wstmts.eng, db.rstmts.eng = db.eng, db.eng
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
	db.initCaches()
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

// sqliteMigrator runs on a connection of its own, closed with it: the writer's
// busy_timeout is 0 (see begin), and a migration that met another writer
// would fail halfway and leave the schema marked dirty, where this
// connection waits busy_timeout for the lock like any other.
func (db *DB) sqliteMigrator() (*migrate.Migrate, error) {
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

// writeLockWait is how long begin waits for another connection's write
// lock (another process writing, a checkpoint restarting the WAL): what
// busy_timeout gives every other connection.
const writeLockWait = 10 * time.Second

// beginSQLite starts a write transaction (BEGIN IMMEDIATE through the DSN). When
// another connection holds the write lock, SQLite's busy handler would
// sleep in nanosleep, and a Go thread in a system call keeps its scheduler
// slot until the runtime's monitor notices (up to 10 ms under load): with
// GOMAXPROCS=1 the whole server would stop with the writer. So the
// writer's busy_timeout is 0 and the wait happens here, on a Go timer that
// leaves the scheduler to the other requests, retrying within 100 us to
// 2 ms of the lock's release.
func (db *DB) beginSQLite(ctx context.Context) (*Tx, error) {
	var deadline time.Time
	wait := 100 * time.Microsecond
	for {
		// The transaction runs on a connection of its own (the pool's one)
		// so that the multi-row statements can reach the driver (sqlite_rawrows.go).
		sc, err := db.write.Conn(ctx)
		if err != nil {
			return nil, err
		}
		tx, err := sc.BeginTx(ctx, nil)
		if err == nil {
			return db.newTx(ctx, sc, tx), nil
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
