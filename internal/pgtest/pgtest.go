// Package pgtest gives tests databases of their own on the PostgreSQL
// server the test run started (scripts/with-postgres.sh), so that one
// suite runs against both stores.
package pgtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"service/migrations"
)

// ServerEnv names the server's admin URL; StoreEnv set to "postgres" makes
// the tests that open "a database" open one on PostgreSQL.
const (
	ServerEnv = "SERVICE_TEST_POSTGRES_URL"
	StoreEnv  = "SERVICE_TEST_STORE"
)

// Selected reports whether this test run is the PostgreSQL run.
func Selected() bool { return os.Getenv(StoreEnv) == "postgres" }

// DB returns where a test's database goes: in the PostgreSQL run a new
// database, else the SQLite file path given.
func DB(tb testing.TB, sqlitePath string) string {
	tb.Helper()
	if Selected() {
		return NewDatabase(tb)
	}
	return sqlitePath
}

// MigratedDB is DB for a database with the schema, built by migrate: in
// the PostgreSQL run a copy of the template database, else at sqlitePath,
// when nothing is there yet, a copy of the SQLite file migrate built once
// in this process. Migrating is most of the cost of opening a new file
// (0.6 s of 0.65 under -race), and most tests open one.
func MigratedDB(tb testing.TB, sqlitePath string, migrate func(path string) error) string {
	tb.Helper()
	if Selected() {
		return NewDatabase(tb)
	}
	return MigratedSQLite(tb, sqlitePath, migrate)
}

// MigratedSQLite puts at sqlitePath, when nothing is there yet, a copy of
// the SQLite file migrate built once in this process, and returns the path.
func MigratedSQLite(tb testing.TB, sqlitePath string, migrate func(path string) error) string {
	tb.Helper()
	if _, err := os.Stat(sqlitePath); !errors.Is(err, fs.ErrNotExist) {
		return sqlitePath
	}
	sqliteTmpl.once.Do(func() { sqliteTmpl.files, sqliteTmpl.err = buildSQLite(migrate) })
	if sqliteTmpl.err != nil {
		tb.Fatalf("sqlite template: %v", sqliteTmpl.err)
	}
	for suffix, b := range sqliteTmpl.files {
		if err := os.WriteFile(sqlitePath+suffix, b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return sqlitePath
}

// sqliteTmpl holds the migrated SQLite files, by suffix ("" or "-wal"):
// in memory, so nothing is left behind when the test binary ends.
var sqliteTmpl struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

func buildSQLite(migrate func(path string) error) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "sqlite-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := dir + "/template.db"
	if err := migrate(path); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	// Closing checkpoints the WAL into the file, but a copy of both is a
	// database either way.
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			return nil, err
		}
		files[suffix] = b
	}
	return files, nil
}

// EmptyDB is DB for a database without the schema: in the PostgreSQL run a
// new, empty database, else the SQLite file path given.
func EmptyDB(tb testing.TB, sqlitePath string) string {
	tb.Helper()
	if !Selected() {
		return sqlitePath
	}
	admin := os.Getenv(ServerEnv)
	if admin == "" {
		tb.Fatalf("%s=postgres needs %s", StoreEnv, ServerEnv)
	}
	name := fmt.Sprintf("e_%d_%d", os.Getpid(), seq.Add(1))
	if err := exec(admin, `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("postgres: %v", err)
	}
	tb.Cleanup(func() {
		if err := exec(admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("postgres: %v", err)
		}
	})
	return withDatabase(admin, name)
}

var (
	seq      atomic.Int64
	tmplOnce sync.Once
	tmplName string
	tmplErr  error
	// copyStrategy ends the CREATE DATABASE of a copy (see template).
	copyStrategy string
	// creating serializes the copies of the template: PostgreSQL refuses
	// to copy a database another session is connected to, and a copy in
	// progress counts as one.
	creating sync.Mutex
)

// NewDatabase creates a database holding the current schema, copied from
// a template the migrations built once, and returns its URL; the database
// is dropped when the test ends. The test fails at once when no server is
// configured: a PostgreSQL run without its server proves nothing.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv(ServerEnv)
	if admin == "" {
		tb.Fatalf("%s=postgres needs %s (run the tests through scripts/with-postgres.sh or make test-postgres)", StoreEnv, ServerEnv)
	}
	tmplOnce.Do(func() { tmplName, tmplErr = template(admin) })
	if tmplErr != nil {
		tb.Fatalf("postgres: template database: %v", tmplErr)
	}
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), seq.Add(1))
	creating.Lock()
	err := exec(admin, `CREATE DATABASE `+name+` TEMPLATE `+tmplName+copyStrategy)
	creating.Unlock()
	if err != nil {
		tb.Fatalf("postgres: %v", err)
	}
	tb.Cleanup(func() {
		if err := exec(admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("postgres: %v", err)
		}
	})
	return withDatabase(admin, name)
}

// template returns the name of a database the PostgreSQL migrations built,
// named by their content so that every test process of a run (and later
// runs on the same server) shares it; an advisory lock makes one process
// build it while the others wait.
func template(admin string) (string, error) {
	h := sha256.New()
	names, err := fs.Glob(migrations.Postgres, "*.sql")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := fs.ReadFile(migrations.Postgres, n)
		if err != nil {
			return "", err
		}
		h.Write([]byte(n))
		h.Write(b)
	}
	name := "tmpl_" + hex.EncodeToString(h.Sum(nil))[:16]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer c.Close(context.Background())
	// From PostgreSQL 15 on, CREATE DATABASE writes the template's every
	// page to the WAL unless told to copy its files: 0.31 s a database
	// against 0.09 on the test server, for some hundreds of databases.
	var version int
	if err := c.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		return "", err
	}
	if version >= 150000 {
		copyStrategy = ` STRATEGY FILE_COPY`
	}
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock(727274)`); err != nil {
		return "", err
	}
	var exists bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil || exists {
		return name, err
	}
	building := name + "_building"
	for _, q := range []string{`DROP DATABASE IF EXISTS ` + building + ` WITH (FORCE)`, `CREATE DATABASE ` + building} {
		if _, err := c.Exec(ctx, q); err != nil {
			return "", err
		}
	}
	if err := migrateUp(withDatabase(admin, building)); err != nil {
		return "", err
	}
	_, err = c.Exec(ctx, `ALTER DATABASE `+building+` RENAME TO `+name)
	return name, err
}

func migrateUp(dbURL string) error {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	conn := stdlib.OpenDB(*cfg)
	src, err := iofs.New(migrations.Postgres, ".")
	if err != nil {
		conn.Close()
		return err
	}
	drv, err := migratepgx.WithInstance(conn, &migratepgx.Config{})
	if err != nil {
		conn.Close()
		return err
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		conn.Close()
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return err
	}
	return nil
}

func withDatabase(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil {
		panic(err) // the admin URL was parsed by pgx before this
	}
	u.Path = "/" + name
	return u.String()
}

func exec(admin, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}
