package store

import (
	"context"
	"path/filepath"
	"testing"
)

// mustOpenDB opens a migrated database in a fresh file of the test's
// temporary directory and closes it when the test ends.
func mustOpenDB(tb testing.TB) *DB {
	tb.Helper()
	return mustOpenDBAt(tb, filepath.Join(tb.TempDir(), "store.db"))
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
