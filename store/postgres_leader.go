package store

import (
	"context"
	"os"
	"sync"

	"github.com/jackc/pgx/v5"

	"service/store/postgres"
)

// Leader election on PostgreSQL: the leader is the process whose session
// holds a session-level advisory lock. PostgreSQL releases such a lock the
// moment the session ends, and a process that dies (kill -9 included)
// ends its sessions at once, as the kernel closes its sockets: so the next
// process to ask takes over without waiting for a lease to run out. The
// others ask again every leaderRetry.
//
// The session is a connection of its own, outside the pools: a pooled
// connection goes back to the pool between statements, and the lock would
// go with it. Behind PgBouncer it must be a direct or session-mode
// connection for the same reason.

// pgLease names the session that holds the lock, for the check that fenced
// transactions make (checkLease).
type pgLease struct{ pid uint32 }

// pgLeader is the process's side of the election.
type pgLeader struct {
	mu     sync.Mutex
	closed bool
	// idle is the session of a process that waits to lead, kept between
	// two attempts.
	idle *pgx.Conn
	// held is the leadership this process holds, if any.
	held *Leadership
}

// pgElection is the election on PostgreSQL, for AwaitLeadership.
func (db *DB) pgElection() election {
	return election{
		try:     db.tryLead,
		log:     db.pgEngine().log,
		waiting: func() []any { return []any{"pid", os.Getpid()} },
		failing: "postgres: cannot ask for the leadership of the scheduled work; retrying",
		where:   []any{"db", db.pgEngine().where},
	}
}

// tryLead asks for the lock once: a Leadership when it was granted; nil
// and nil when another process holds it.
func (db *DB) tryLead(ctx context.Context) (*Leadership, error) {
	pl := &db.pgEngine().leader
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return nil, errClosed
	}
	c := pl.idle
	if c == nil {
		var err error
		if c, err = postgres.LockSession(ctx, db.pgEngine().cfg); err != nil {
			return nil, err
		}
		pl.idle = c
	}
	ok, err := postgres.TryAdvisoryLock(ctx, c, postgres.LeaderLockKey)
	if err != nil {
		pl.idle = nil
		postgres.CloseSession(c)
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	pl.idle = nil
	lctx, cancel := context.WithCancel(context.WithValue(ctx, leaseKey{}, &pgLease{pid: c.PgConn().PID()}))
	l := &Leadership{ctx: lctx, cancel: cancel}
	stop, done := make(chan struct{}), make(chan struct{})
	go db.watchLeadership(c, cancel, stop, done)
	l.release = func() {
		close(stop)
		<-done
		// Closing the session gives the lock back, whether or not the
		// session still lived.
		postgres.CloseSession(c)
		db.leading.Store(false)
		pl.mu.Lock()
		if pl.held == l {
			pl.held = nil
		}
		pl.mu.Unlock()
	}
	pl.held = l
	db.leading.Store(true)
	return l, nil
}

// watchLeadership checks the leader's session until stop closes. A check
// that fails or takes too long means the lock may be gone: the
// leadership's context ends at once, so the work under it stops, while the
// session is only closed by Release, after that work returned.
func (db *DB) watchLeadership(c *pgx.Conn, lost context.CancelFunc, stop <-chan struct{}, done chan<- struct{}) {
	db.watchSession(c, "postgres: the leader's session is lost; the scheduled work stops", func() {
		db.leading.Store(false)
		lost()
	}, stop, done)
}

// watchSession watches a session that holds a lock (postgres.Watch), and
// logs msg when it is lost.
func (db *DB) watchSession(c *pgx.Conn, msg string, lost func(), stop <-chan struct{}, done chan<- struct{}) {
	postgres.Watch(c, leaderCheck, leaderCheckTimeout, func(err error) {
		if e := db.pgEngine(); e.log != nil {
			e.log.Warn(msg, "db", e.where, "err", err)
		}
		lost()
	}, stop, done)
}

// closeLeader releases the leadership this process holds and ends the
// waiting session, for Close.
func (db *DB) closeLeader() {
	pl := &db.pgEngine().leader
	pl.mu.Lock()
	pl.closed = true
	held, idle := pl.held, pl.idle
	pl.idle = nil
	pl.mu.Unlock()
	if held != nil {
		held.Release()
	}
	if idle != nil {
		postgres.CloseSession(idle)
	}
}

// checkLease fails a transaction begun under a leadership whose session no
// longer holds the lock. It runs inside the transaction, so a leader that
// lost its session (and may not know it yet) cannot write once another
// process can lead: PostgreSQL has already released the lock, and pg_locks
// no longer lists it under this session's pid.
func (tx *Tx) checkLease(l *pgLease) error {
	var held bool
	err := tx.queryRow(`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = 0 AND objid = CAST(CAST(? AS BIGINT) AS OID) AND objsubid = 1 AND pid = CAST(? AS INTEGER) AND granted)`,
		int64(postgres.LeaderLockKey), int64(l.pid)).Scan(&held)
	if err != nil {
		return err
	}
	if !held {
		return ErrNotLeader
	}
	return nil
}
