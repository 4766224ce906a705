package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"service/internal/pgtest"
	"service/internal/testclock"
)

// The helpers every test file of this package shares, as benbjohnson/wtf
// keeps them: open a real database file, give it an app and a clock, check
// an error code. Helpers of one area stay in that area's test file.

// tempDBPath is a new database of the store under test: a file in the
// test's temporary directory, or in the PostgreSQL run
// (SERVICE_TEST_STORE=postgres) a new database on the test server.
func tempDBPath(tb testing.TB) string {
	if pgtest.Selected() && !isSQLiteOnly(tb) {
		return pgtest.NewDatabase(tb)
	}
	return tempSQLitePath(tb)
}

// tempSQLitePath is a SQLite file in the test's temporary directory, for
// the tests of the SQLite store's own machinery.
func tempSQLitePath(tb testing.TB) string {
	return filepath.Join(tb.TempDir(), "store.db")
}

// mustOpenDB opens a migrated database in a fresh file and closes it when
// the test ends.
func mustOpenDB(tb testing.TB) *DB {
	tb.Helper()
	path := tempDBPath(tb)
	if !IsPostgresURL(path) {
		path = pgtest.MigratedSQLite(tb, path, migrateNew)
	}
	return mustOpenDBAt(tb, path)
}

// migrateNew creates a database at path with the schema.
func migrateNew(path string) error {
	db, err := Open(context.Background(), path)
	if err != nil {
		return err
	}
	return db.Close()
}

// mustOpenDBAt opens the database at path, for tests that open one file
// twice or reopen it.
func mustOpenDBAt(tb testing.TB, path string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// mustOpenApp opens a database with one app and a clock standing at t0,
// which becomes the database's clock.
func mustOpenApp(tb testing.TB, t0 time.Time) (*DB, int64, *testclock.Clock) {
	tb.Helper()
	db := mustOpenDB(tb)
	clock := testclock.New(t0)
	db.Now = clock.Now
	app, err := db.CreateApp(context.Background(), "test", "enterprise", 0)
	if err != nil {
		tb.Fatal(err)
	}
	return db, app.ID, clock
}

// wantCode fails unless err is a store error with code.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("err=nil, want code %s", code)
	}
	if got := ErrorCode(err); got != code {
		tb.Fatalf("code=%s (%v), want %s", got, err, code)
	}
}

// countRows runs a COUNT query.
func countRows(tb testing.TB, db *DB, q string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := db.read.QueryRow(q, args...).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func ptr[T any](v T) *T { return &v }

// applyMoves applies the journaled metric moves, as every reader of
// values and sums does first.
func applyMoves(tb testing.TB, db *DB) {
	tb.Helper()
	if err := db.ApplyMetricMoves(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// joinFmt joins values with spaces, strings included.
func joinFmt(v ...any) string { return strings.TrimSuffix(fmt.Sprintln(v...), "\n") }

// mustOpenDBPath is mustOpenDB that also returns the file's path, for tests
// that read the file's bytes.
func mustOpenDBPath(tb testing.TB) (*DB, string) {
	tb.Helper()
	path := tempDBPath(tb)
	return mustOpenDBAt(tb, path), path
}

// sqliteOnlyTests are the tests of the SQLite store's own machinery (the
// checkpointer, the event index, the write lock), by name: they open a
// SQLite file in the PostgreSQL run too.
var sqliteOnlyTests sync.Map

// sqliteOnly marks the test, and its subtests, as one of the SQLite
// store's machinery.
func sqliteOnly(tb testing.TB) { sqliteOnlyTests.Store(tb.Name(), true) }

func isSQLiteOnly(tb testing.TB) bool {
	for name := tb.Name(); ; {
		if _, ok := sqliteOnlyTests.Load(name); ok {
			return true
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return false
		}
		name = name[:i]
	}
}

// mustMigrateDownTo migrates db down to schema version v, past every
// migration numbered above it, however many later ones there are.
func mustMigrateDownTo(tb testing.TB, db *DB, v uint) {
	tb.Helper()
	all, err := db.MigrationsUpTo(1 << 30)
	if err != nil {
		tb.Fatal(err)
	}
	kept, err := db.MigrationsUpTo(v)
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Migrate(context.Background(), kept-all); err != nil {
		tb.Fatal(err)
	}
}
