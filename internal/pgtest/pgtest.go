// Package pgtest gives tests databases of their own on the PostgreSQL
// server the test run started (scripts/with-postgres.sh), so that one
// suite runs against both stores.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerEnv names the server's admin URL; StoreEnv set to "postgres" makes
// the tests that open "a database" open one on PostgreSQL.
const (
	ServerEnv = "SERVICE_TEST_POSTGRES_URL"
	StoreEnv  = "SERVICE_TEST_STORE"
)

// Selected reports whether this test run is the PostgreSQL run.
func Selected() bool { return os.Getenv(StoreEnv) == "postgres" }

var seq atomic.Int64

// NewDatabase creates an empty database and returns its URL; the database
// is dropped when the test ends. The test fails at once when no server
// is configured: a PostgreSQL run without its server proves nothing.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv(ServerEnv)
	if admin == "" {
		tb.Fatalf("%s=postgres needs %s (run the tests through scripts/with-postgres.sh or make test-postgres)", StoreEnv, ServerEnv)
	}
	name := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, seq.Add(1))
	exec(tb, admin, `CREATE DATABASE `+name)
	tb.Cleanup(func() { exec(tb, admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

func exec(tb testing.TB, admin, stmt string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("postgres: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, stmt); err != nil {
		tb.Fatalf("postgres: %s: %v", stmt, err)
	}
}

// DB returns where a test's database goes: in the PostgreSQL run a new
// database, else the SQLite file path given.
func DB(tb testing.TB, sqlitePath string) string {
	tb.Helper()
	if Selected() {
		return NewDatabase(tb)
	}
	return sqlitePath
}
