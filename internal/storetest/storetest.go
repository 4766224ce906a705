// Package storetest gives the tests of the packages above the store a
// database of their own with the schema: on the store the test run
// selected (see pgtest), and on SQLite a copy of one migrated file.
package storetest

import (
	"context"
	"testing"

	"service/internal/pgtest"
	"service/store"
)

// DB returns where a test's migrated database goes: a new PostgreSQL
// database in the PostgreSQL run, else sqlitePath, which holds a copy of
// a migrated SQLite file (when nothing was there yet).
func DB(tb testing.TB, sqlitePath string) string {
	tb.Helper()
	return pgtest.MigratedDB(tb, sqlitePath, Migrate)
}

// Migrate creates a database at path with the schema, as serve would.
func Migrate(path string) error {
	db, err := store.Open(context.Background(), path)
	if err != nil {
		return err
	}
	return db.Close()
}
