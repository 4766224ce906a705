package store

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
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

// leaderLockKey is the advisory lock that is the leadership, in the
// database's own lock space (advisory locks are per database). It fits in
// 32 bits, so pg_locks shows it as objid with classid 0.
const leaderLockKey = 0x5ce0_1ead

const (
	// leaderRetry is how often a process that does not lead asks again.
	leaderRetry = 500 * time.Millisecond
	// leaderCheck is how often the leader makes sure its session is alive,
	// and leaderCheckTimeout how long one check may take before the
	// session counts as lost.
	leaderCheck        = time.Second
	leaderCheckTimeout = 2 * time.Second
)

// leaderKeepalives are the server's TCP keepalive settings for the leader's
// session, unless the URL sets them: a leader whose machine vanished
// without closing its connections holds the lock until the server gives up
// on its session, after about idle + interval × count seconds (8 s) of
// silence rather than the system's default of two hours.
var leaderKeepalives = map[string]string{
	"tcp_keepalives_idle":     "5",
	"tcp_keepalives_interval": "1",
	"tcp_keepalives_count":    "3",
}

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
		cfg := db.pgEngine().cfg.Copy()
		for k, v := range leaderKeepalives {
			if _, set := cfg.RuntimeParams[k]; !set {
				cfg.RuntimeParams[k] = v
			}
		}
		var err error
		if c, err = pgx.ConnectConfig(ctx, cfg); err != nil {
			return nil, err
		}
		pl.idle = c
	}
	var ok bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(leaderLockKey)).Scan(&ok); err != nil {
		pl.idle = nil
		closeSession(c)
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
		closeSession(c)
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

// watchSession pings a session that holds a lock every leaderCheck until
// stop closes, and calls lost, once, when a ping fails or takes longer
// than leaderCheckTimeout: from then on PostgreSQL may have released the
// lock, and another process may act on that. It closes done on return.
func (db *DB) watchSession(c *pgx.Conn, msg string, lost func(), stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(leaderCheck)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), leaderCheckTimeout)
		err := c.Ping(ctx)
		cancel()
		if err != nil {
			if db.pgEngine().log != nil {
				db.pgEngine().log.Warn(msg, "db", db.pgEngine().where, "err", err)
			}
			lost()
			return
		}
	}
}

// closeSession ends a session, giving up soon on a server that does not
// answer: the socket closes either way.
func closeSession(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Close(ctx)
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
		closeSession(idle)
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
		int64(leaderLockKey), int64(l.pid)).Scan(&held)
	if err != nil {
		return err
	}
	if !held {
		return ErrNotLeader
	}
	return nil
}
