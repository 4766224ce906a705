package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"service/migrations"
)

// IsURL reports whether target names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func IsURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// ConnectTimeout bounds how long opening waits for a server that does not
// answer, unless the URL's connect_timeout asks for less.
const ConnectTimeout = 10 * time.Second

// Pools are the store's connections to one database.
type Pools struct {
	// Write is the one writer connection, as on SQLite: the group commit
	// gathers the hot writes into one transaction, and every write of
	// this process keeps one order. Read is the readers' pool.
	Write, Read *sql.DB
	// Config is the connections' settings, for the sessions of their own
	// (leadership, presence, the listener) and the migrator.
	Config *pgx.ConnConfig
	// Where names the server for messages: host and port, never the
	// password.
	Where string
}

// Open opens the pools on the database at target, whose sessions bound
// their lock waits (and the writer its statements) by timeout; inputError
// maps a statement refused for its input (see Connector).
func Open(ctx context.Context, target string, timeout time.Duration, inputError func(error) error) (*Pools, error) {
	// pgxpool's parser takes the pool_* parameters as well as libpq's;
	// pgx's own would send them to the server as settings.
	pcfg, err := pgxpool.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cc := pcfg.ConnConfig
	if cc.ConnectTimeout <= 0 || cc.ConnectTimeout > ConnectTimeout {
		cc.ConnectTimeout = ConnectTimeout
	}
	where := fmt.Sprintf("%s:%d", cc.Host, cc.Port)
	wc, rc := sessionTimeouts(cc, timeout)
	w := sql.OpenDB(Connector(stdlib.GetConnector(*wc), inputError))
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r := sql.OpenDB(Connector(stdlib.GetConnector(*rc), inputError))
	n := int(pcfg.MaxConns)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	pctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	err = w.PingContext(pctx)
	cancel()
	if err != nil {
		w.Close()
		r.Close()
		return nil, connectError(where, cc, err)
	}
	return &Pools{Write: w, Read: r, Config: cc, Where: where}, nil
}

// OpenSQL opens a plain database/sql handle on the database at target,
// with ? placeholders rewritten.
func OpenSQL(target string) (*sql.DB, error) {
	cfg, err := pgxpool.ParseConfig(target)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(Connector(stdlib.GetConnector(*cfg.ConnConfig), nil)), nil
}

// connectError says why the first connection failed, leading with the
// server's own answer when there is one. pgx reports every attempt, and
// under sslmode=prefer (the default) the first is TLS, which a local
// server without TLS refuses: "tls error: server refused TLS connection"
// came first, and the real cause (a database that does not exist, a
// password refused) second. A database that does not exist is the first
// run's usual mistake, so its message says how to create it.
func connectError(where string, cc *pgx.ConnConfig, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return fmt.Errorf("postgres at %s: %w", where, err)
	}
	msg := fmt.Sprintf("postgres at %s: %s (SQLSTATE %s)", where, pe.Message, pe.Code)
	if pe.Code == InvalidCatalogName {
		msg += fmt.Sprintf("; create it with createdb (createdb -h %s -p %d -U %s %s), then run this again",
			cc.Host, cc.Port, cc.User, cc.Database)
	}
	return &openError{msg: msg, err: err}
}

// openError is a failure to open the database, with a message of its own
// over the driver's error, which it keeps for errors.As.
type openError struct {
	msg string
	err error
}

func (e *openError) Error() string { return e.msg }
func (e *openError) Unwrap() error { return e.err }

// Migrator runs golang-migrate on a connection of its own, without the
// placeholder rewriting: migrations are plain SQL. golang-migrate's
// PostgreSQL driver holds an advisory lock while it migrates, so replicas
// that start together apply each migration once.
func Migrator(cfg *pgx.ConnConfig) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.Postgres, ".")
	if err != nil {
		return nil, err
	}
	conn := stdlib.OpenDB(*cfg)
	conn.SetMaxOpenConns(1)
	drv, err := migratepgx.WithInstance(conn, &migratepgx.Config{})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return migrate.NewWithInstance("iofs", src, "pgx5", drv)
}

// Redacted returns target fit for a log line: a PostgreSQL URL without its
// password, a file path as it is.
func Redacted(target string) string {
	if !IsURL(target) {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		return "postgres://…"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// sessionTimeouts returns the writer's and the readers' connection
// settings with the server's own bounds, unless the URL sets them: no
// session waits on a lock longer than timeout (lock_timeout), and no
// statement of the writer runs longer (statement_timeout), so a stuck
// write never holds its row locks, or the one writer, past a request's
// time. Readers get no statement_timeout: an export streams its rows for
// as long as the client reads them, and a request's reads are bounded by
// its own deadline, which cancels them.
func sessionTimeouts(cc *pgx.ConnConfig, timeout time.Duration) (w, r *pgx.ConnConfig) {
	ms := strconv.FormatInt(timeout.Milliseconds(), 10)
	w, r = cc.Copy(), cc.Copy()
	for _, c := range []*pgx.ConnConfig{w, r} {
		if _, ok := c.RuntimeParams["lock_timeout"]; !ok {
			c.RuntimeParams["lock_timeout"] = ms
		}
	}
	if _, ok := w.RuntimeParams["statement_timeout"]; !ok {
		w.RuntimeParams["statement_timeout"] = ms
	}
	return w, r
}
