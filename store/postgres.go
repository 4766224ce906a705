package store

import (
	"context"
	"crypto/rand"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"service/store/postgres"
)

// The PostgreSQL store's own machinery on the store's side: opening, the
// write transaction, and rewriting the webhooks table after its secrets
// were sealed. The connections, the migrator and what PostgreSQL's errors
// mean are package postgres's; the rest of the PostgreSQL-only parts sit
// in the postgres_*.go files.

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
	p, err := postgres.Open(ctx, target, opts.Timeout, pgInputError)
	if err != nil {
		return nil, err
	}
	pg := &postgresEngine{cfg: p.Config, where: p.Where, log: opts.Log, self: rand.Text()}
	w, r := p.Write, p.Read
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
	db.awaitOlderSnapshots(ctx, compactWait, wholeServer)
	if ctx.Err() != nil {
		return
	}
	if _, err := db.write.ExecContext(ctx, `VACUUM (FULL) webhooks`); err != nil && db.pgEngine().log != nil {
		db.pgEngine().log.Warn("postgres: could not rewrite the webhooks table after sealing its secrets; old row versions keep the previous values until VACUUM reuses their space", "err", err)
	}
}

// compactWait bounds compactSecrets' wait for older snapshots to end.
const compactWait = 5 * time.Second

// snapshotScope says whose transactions awaitOlderSnapshots waits for.
type snapshotScope int

const (
	// thisDatabase: plain VACUUM holds no snapshot of its own while it
	// scans, and ignores other databases' transactions (PostgreSQL 14 and
	// later), so a long transaction of another database on the same
	// server must not hold it back.
	thisDatabase snapshotScope = iota
	// wholeServer: VACUUM FULL copies the table under a snapshot of its
	// own, whose horizon is the oldest transaction running anywhere on the
	// server, other databases included.
	wholeServer
)

// awaitOlderSnapshots waits, for at most wait, until no other session of
// the database runs a transaction or holds a snapshot from before this
// moment (and, for wholeServer, until every transaction of the server
// begun before it has ended), and reports whether that happened: the row
// versions this process replaced or deleted before the call are then dead
// to every transaction, and VACUUM may remove them.
func (db *DB) awaitOlderSnapshots(ctx context.Context, wait time.Duration, scope snapshotScope) bool {
	var horizon string
	if err := db.write.QueryRowContext(ctx, `SELECT CAST(pg_snapshot_xmax(pg_current_snapshot()) AS TEXT)`).Scan(&horizon); err != nil {
		return false
	}
	for deadline := time.Now().Add(wait); ; {
		var settled bool
		// A session's running transaction (backend_xid) holds the horizon
		// back as its snapshot (backend_xmin) does.
		err := db.write.QueryRowContext(ctx, `SELECT (NOT CAST(? AS BOOLEAN) OR pg_snapshot_xmin(pg_current_snapshot()) >= CAST(CAST(? AS TEXT) AS xid8))
			AND NOT EXISTS (SELECT 1 FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()
					AND (age(backend_xmin) > age(CAST(CAST(CAST(? AS TEXT) AS xid8) AS xid))
						OR age(backend_xid) > age(CAST(CAST(CAST(? AS TEXT) AS xid8) AS xid))))`,
			scope == wholeServer, horizon, horizon, horizon).Scan(&settled)
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

// IsPostgresURL reports whether target names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgresURL(target string) bool { return postgres.IsURL(target) }

// Redacted returns target fit for a log line: a PostgreSQL URL without its
// password, a file path as it is.
func Redacted(target string) string { return postgres.Redacted(target) }

// pgInputError is the store's error for a statement PostgreSQL refused
// for its input: a NUL character in text, which SQLite would have stored.
// The API refuses the \u0000 escape before it gets here, and this covers
// what reaches the store by another way (a dashboard form).
func pgInputError(error) error {
	return Errorf(EINVALID, "text must not contain the NUL character")
}
