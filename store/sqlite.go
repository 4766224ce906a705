package store

import (
	"context"
	"time"

	"service/store/sqlite"
)

// The SQLite store's own machinery on the store's side: opening, and the
// write lock's wait. The DSN and its pragmas, the pools, the migrator,
// backups and what SQLite's errors mean are package sqlite's; the rest of
// the SQLite-only parts sit in the sqlite_*.go files.

// DSN returns the connection string for path. The pragmas sit in the DSN so
// that every pooled connection gets them, not only the one that ran a PRAGMA.
func DSN(path string) string { return sqlite.DSN(path) }

func openSQLite(ctx context.Context, path string, up bool, opts Options) (*DB, error) {
	w, r, err := sqlite.Pools(path)
	if err != nil {
		return nil, err
	}
	db := &DB{write: w, read: r, path: path, Now: time.Now, lockWait: writeLockWait, timeout: opts.Timeout}
	db.eng = sqliteEngine{db}
	db.eraser = sqliteEraser{db}
	db.lead.log = opts.Log
	db.wstmts, db.rstmts = newStmtCache(w, true), newStmtCache(r, false)
	db.wstmts.eng, db.rstmts.eng = db.eng, db.eng
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
		db.rows.prepare(ctx, w, multiRows...)
	}
	db.batch = newBatcher(db)
	if db.ckpt, err = sqlite.StartCheckpoints(path, opts.walLimit, opts.CheckpointCommand, opts.Log); err != nil {
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
func isBusy(err error) bool { return sqlite.IsBusy(err) }

// Backups of a SQLite file (store/sqlite/backup.go).

// Watermark is what a SQLite file holds, for telling which of two copies
// is newer (sqlite.ReadWatermark).
type Watermark = sqlite.Watermark

var (
	// ErrInUse is the error of a restore onto a file another process has
	// open.
	ErrInUse = sqlite.ErrInUse
	// ErrNewer is the error of a restore onto a file newer than the copy.
	ErrNewer = sqlite.ErrNewer
)

// Backup writes a consistent copy of the database at src to dst (sqlite.Backup).
func Backup(ctx context.Context, src, dst string) error { return sqlite.Backup(ctx, src, dst) }

// CheckIntegrity runs SQLite's integrity check on the file at path.
func CheckIntegrity(ctx context.Context, path string) error { return sqlite.CheckIntegrity(ctx, path) }

// InUse reports whether another process has the file at path open.
func InUse(ctx context.Context, path string) (bool, error) { return sqlite.InUse(ctx, path) }

// ReadWatermark reads the watermark of the file at path.
func ReadWatermark(ctx context.Context, path string) (Watermark, error) {
	return sqlite.ReadWatermark(ctx, path)
}

// Restore replaces the database at dst with the copy at src (sqlite.Restore).
func Restore(ctx context.Context, src, dst string, force bool) error {
	return sqlite.Restore(ctx, src, dst, force)
}

// RunCheckpointer is the checkpointer process's body (sqlite.RunCheckpointer).
func RunCheckpointer(path string, walLimitBytes int64, stop <-chan struct{}) error {
	return sqlite.RunCheckpointer(path, walLimitBytes, stop)
}
