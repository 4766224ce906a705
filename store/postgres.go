package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
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

// The PostgreSQL store's own machinery: parsing the URL, opening the
// writer and the reader pool on pgx, the migrator on the PostgreSQL
// migrations, and what PostgreSQL's errors mean. The rest of the
// PostgreSQL-only parts sit in the postgres_*.go files.

// IsPostgresURL reports whether target names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgresURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// connectTimeout bounds how long opening waits for a server that does not
// answer, unless the URL's connect_timeout asks for less.
const connectTimeout = 10 * time.Second

// postgresEngine is the PostgreSQL store's engine (postgres_engine.go),
// and what it holds beyond the pools.
type postgresEngine struct {
	db  *DB
	cfg *pgx.ConnConfig
	// where names the server for messages: host and port, never the
	// password.
	where   string
	log     *slog.Logger
	listen  *listener
	leader  pgLeader
	present pgPresence
	// self is this process's token in its change notifications.
	self string
}

func openPostgres(ctx context.Context, target string, up bool, opts Options) (*DB, error) {
	// pgxpool's parser takes the pool_* parameters as well as libpq's;
	// pgx's own would send them to the server as settings.
	pcfg, err := pgxpool.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cc := pcfg.ConnConfig
	if cc.ConnectTimeout <= 0 || cc.ConnectTimeout > connectTimeout {
		cc.ConnectTimeout = connectTimeout
	}
	pg := &postgresEngine{cfg: cc, where: fmt.Sprintf("%s:%d", cc.Host, cc.Port), log: opts.Log, self: rand.Text()}
	wc, rc := sessionTimeouts(cc, opts.Timeout)
	w := sql.OpenDB(rebindConnector{stdlib.GetConnector(*wc)})
	// One writer connection, as on SQLite: the group commit gathers the
	// hot writes into one transaction, and every write of this process
	// keeps one order.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r := sql.OpenDB(rebindConnector{stdlib.GetConnector(*rc)})
	n := int(pcfg.MaxConns)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	pctx, cancel := context.WithTimeout(ctx, connectTimeout)
	err = w.PingContext(pctx)
	cancel()
	if err != nil {
		w.Close()
		r.Close()
		return nil, connectError(pg.where, cc, err)
	}
	db := &DB{write: w, read: r, path: target, Now: time.Now, lockWait: writeLockWait, timeout: opts.Timeout, eng: pg}
	pg.db = db
	db.eraser = pgEraser{db}
	// pgx keeps each connection's statements prepared by itself.
	db.wstmts, db.rstmts = newStmtCache(w, false), newStmtCache(r, false)
	db.wstmts.off, db.rstmts.off = true, true
	db.wstmts.eng, db.rstmts.eng = db.eng, db.eng
	if up {
		if err := db.Migrate(ctx, 0); err != nil {
			db.close()
			return nil, err
		}
	}
	db.initCaches()
	db.batch = newBatcher(db)
	db.startListener()
	return db, nil
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
	if pe.Code == pgInvalidCatalogName {
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

// pgMigrator runs golang-migrate on a connection of its own, without the
// placeholder rewriting: migrations are plain SQL. golang-migrate's
// PostgreSQL driver holds an advisory lock while it migrates, so replicas
// that start together apply each migration once.
func (db *DB) pgMigrator() (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.Postgres, ".")
	if err != nil {
		return nil, err
	}
	conn := stdlib.OpenDB(*db.pgEngine().cfg)
	conn.SetMaxOpenConns(1)
	drv, err := migratepgx.WithInstance(conn, &migratepgx.Config{})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return migrate.NewWithInstance("iofs", src, "pgx5", drv)
}

// beginPG starts a write transaction on the writer connection.
func (db *DB) beginPG(ctx context.Context) (*Tx, error) {
	sc, err := db.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := sc.BeginTx(ctx, nil)
	if err != nil {
		sc.Close()
		return nil, err
	}
	t := db.newTx(ctx, sc, tx)
	if l := leaseOf(ctx); l != nil {
		if err := t.checkLease(l); err != nil {
			t.end()
			return nil, err
		}
	}
	return t, nil
}

// compactSecrets rewrites the webhooks table after its secrets were sealed
// anew: an UPDATE leaves the old row versions, plaintext secrets included,
// in the table's file until VACUUM reuses their space, and VACUUM FULL
// writes a new file without them. Best effort, as SQLite's checkpoint: a
// busy table only delays it to the next start.
//
// VACUUM FULL keeps the old versions that a transaction still running may
// see, and what counts is the oldest snapshot of any session of the
// database (another replica's reader, a notification being delivered) and
// its own: its snapshot's horizon is the oldest transaction running
// anywhere on the server, other databases included. A transaction that was
// running when the sealing committed would carry the plaintext into the
// new file. So it first waits, for at most compactWait, until every
// transaction begun before this moment has ended and no other session of
// the database holds a snapshot from before it.
func (db *DB) compactSecrets(ctx context.Context) {
	db.awaitOlderSnapshots(ctx, compactWait)
	if ctx.Err() != nil {
		return
	}
	if _, err := db.write.ExecContext(ctx, `VACUUM (FULL) webhooks`); err != nil && db.pgEngine().log != nil {
		db.pgEngine().log.Warn("postgres: could not rewrite the webhooks table after sealing its secrets; old row versions keep the previous values until VACUUM reuses their space", "err", err)
	}
}

// compactWait bounds compactSecrets' wait for older snapshots to end.
const compactWait = 5 * time.Second

// awaitOlderSnapshots waits, for at most wait, until every transaction
// begun before this moment has ended and no other session of the database
// holds a snapshot from before it, and reports whether that happened: the
// row versions this process replaced or deleted before the call are then
// dead to every transaction, and VACUUM may remove them.
func (db *DB) awaitOlderSnapshots(ctx context.Context, wait time.Duration) bool {
	var horizon string
	if err := db.write.QueryRowContext(ctx, `SELECT CAST(pg_snapshot_xmax(pg_current_snapshot()) AS TEXT)`).Scan(&horizon); err != nil {
		return false
	}
	for deadline := time.Now().Add(wait); ; {
		var settled bool
		err := db.write.QueryRowContext(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot()) >= CAST(CAST(? AS TEXT) AS xid8)
			AND NOT EXISTS (SELECT 1 FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
					AND age(backend_xmin) > age(CAST(CAST(CAST(? AS TEXT) AS xid8) AS xid)))`, horizon, horizon).Scan(&settled)
		if err != nil {
			return false
		}
		if settled {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// PostgreSQL's error codes the store tells apart.
const (
	pgUniqueViolation          = "23505"
	pgCharacterNotInRepertoire = "22021"
	pgDeadlockDetected         = "40P01"
	pgSerializationFailure     = "40001"
	pgInvalidCatalogName       = "3D000" // the database named does not exist
)

func isPGCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// Redacted returns target fit for a log line: a PostgreSQL URL without its
// password, a file path as it is.
func Redacted(target string) string {
	if !IsPostgresURL(target) {
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

// pgUnavailable reports PostgreSQL's errors that say "not now" rather
// than "no": a connection that could not be made or was lost (class 08),
// a server shutting down or starting (57P01–57P03), too many connections
// (53300), and a statement or lock wait that outlasted statement_timeout
// or lock_timeout (57014, 55P03).
func pgUnavailable(err error) bool {
	var ce *pgconn.ConnectError
	// SafeToRetry: pgx sent nothing, as on a connection already closed.
	if errors.As(err, &ce) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "57P01", "57P02", "57P03", "53300", "57014", "55P03":
		return true
	}
	return len(pe.Code) == 5 && pe.Code[:2] == "08"
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
