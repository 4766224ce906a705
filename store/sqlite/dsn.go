// Package sqlite is the store's SQLite engine below the domain: the DSN
// and its pragmas, the writer and reader pools on one file, the migrator,
// the lock file of the leadership, backups, and what SQLite's errors mean.
// Package store calls it through its engine (store/sqlite_engine.go);
// nothing here knows the domain.
package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	migratesqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	modernc "modernc.org/sqlite" // registers the cgo-free "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"service/migrations"
)

var dsnPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// DSN returns the connection string for path, with extra pragmas. The pragmas sit in the DSN so
// that every pooled connection gets them, not only the one that ran a PRAGMA.
func DSN(path string, extra ...string) string { return dsn(path, extra...) }

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

// WALLimit bounds the WAL file: when a reset finds it larger it is cut
// back to this size, and a checkpoint that leaves more than this many bytes
// in it is followed by one that waits for readers (see checkpointer).
const WALLimit = 64 << 20

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
	v.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", WALLimit))
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

// Pools opens the writer (one connection) and the readers' pool on the
// file at path.
func Pools(path string) (w, r *sql.DB, err error) {
	// The writer never waits in SQLite's busy handler, which sleeps in a
	// system call and keeps the scheduler thread meanwhile: begin waits
	// for the write lock in Go instead (see store.DB.begin).
	//
	// secure_delete: what the writer deletes or replaces is zeroed in the
	// file, always, not only in an erasure or a re-sealing of secrets.
	// Pages keep stale copies of rows where they were rebuilt or freed
	// (a split, a merge, a retention pass), and only a writer that always
	// zeroes leaves no copy for a later erasure to miss. The price is that
	// freed pages are written (as zeros) rather than just listed free.
	w, err = sql.Open("sqlite", dsn(path, fmt.Sprintf("cache_size(%d)", -writerCacheKiB), "temp_store(memory)", "busy_timeout(0)", "secure_delete(on)"))
	if err != nil {
		return nil, nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err = sql.Open("sqlite", dsn(path, fmt.Sprintf("cache_size(%d)", -readerCacheKiB)))
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)

	return w, r, nil
}

// Migrator runs golang-migrate on the file at path, on a connection of its own, closed with it: the writer's
// busy_timeout is 0 (see begin), and a migration that met another writer
// would fail halfway and leave the schema marked dirty, where this
// connection waits busy_timeout for the lock like any other.
func Migrator(path string) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, err
	}
	conn, err := sql.Open("sqlite", dsn(path))
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

// IsBusy reports whether err is SQLite's "database is locked".
func IsBusy(err error) bool {
	var se *modernc.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
