package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"service/store/postgres"
)

// Presence on PostgreSQL: a process that claims webhook deliveries holds a
// session-level advisory lock of its own, on a session outside its pools,
// for as long as that session lives. The lock's key is random, new for
// every session, and names the process's claims (claimed_by). PostgreSQL
// releases the lock the moment the session ends, whether the process died
// (kill -9 included: the kernel closes its sockets) or its connection did,
// so a claim whose key no session holds can never be recorded by its
// holder: the other processes take it back at once (reapClaims) instead of
// waiting out its lease.
//
// A process that loses its presence session (it checks it every
// leaderCheck) ends the context of the claims made under it, so their
// sends are cut short before, or as soon as, another process may take them
// back; its next claim opens a new session under a new key. Behind
// PgBouncer the session must be direct or session-mode, as the leader's.

// reapEvery bounds how often one process looks for dead processes' claims.
const reapEvery = 500 * time.Millisecond

// pgPresence is the process's presence session, opened on first use.
type pgPresence struct {
	mu     sync.Mutex
	closed bool
	conn   *pgx.Conn
	key    int64
	// live ends when the session is lost or closed; the claims made under
	// key carry it.
	live   context.Context
	lost   context.CancelFunc
	stop   chan struct{}
	done   chan struct{}
	reaped time.Time
}

// presence returns the key that names this process's claims and the
// context that ends when they can no longer be recorded. On SQLite there
// is no presence (sqliteEngine.presence).
func (db *DB) presence(ctx context.Context) (int64, context.Context, error) {
	p := &db.pgEngine().present
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, nil, errClosed
	}
	if p.conn != nil && p.live.Err() == nil {
		return p.key, p.live, nil
	}
	if p.conn != nil {
		// The watcher found the session lost and ended live; it is
		// closed here, once, before a new one replaces it.
		<-p.done
		postgres.CloseSession(p.conn)
		p.conn = nil
	}
	c, err := postgres.LockSession(ctx, db.pgEngine().cfg)
	if err != nil {
		return 0, nil, err
	}
	for {
		var b [4]byte
		_, _ = rand.Read(b[:])
		key := postgres.PresenceKeyClass<<32 | int64(binary.BigEndian.Uint32(b[:]))
		ok, err := postgres.TryAdvisoryLock(ctx, c, key)
		if err != nil {
			postgres.CloseSession(c)
			return 0, nil, err
		}
		if ok {
			p.key = key
			break
		}
	}
	p.conn = c
	p.live, p.lost = context.WithCancel(context.Background())
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	// Once a check fails, the claims' context ends: from then on another
	// process may take them back.
	go db.watchSession(c, "postgres: the presence session is lost; webhook sends under its claims stop", p.lost, p.stop, p.done)
	return p.key, p.live, nil
}

// closePresence ends the presence session, for Close. The dispatcher has
// released its claims by then.
func (db *DB) closePresence() {
	p := &db.pgEngine().present
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.conn == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.lost()
	postgres.CloseSession(p.conn)
	p.conn = nil
}

// reapClaims takes back the unexpired claims of processes whose presence
// session has ended, so they are claimable now. It runs at most every
// reapEvery per process.
//
// Its pace is kept by the wall clock, whatever now says.
//
// pg_locks is read after the statement's snapshot is taken, and a process
// takes its lock before it claims anything, so a claim this statement sees
// was made under a key that was held then: if pg_locks no longer lists it,
// its session has ended.
func (db *DB) reapClaims(ctx context.Context, now time.Time, self int64) error {
	p := &db.pgEngine().present
	p.mu.Lock()
	due := time.Since(p.reaped) >= reapEvery
	if due {
		p.reaped = time.Now()
	}
	p.mu.Unlock()
	if !due {
		return nil
	}
	_, err := db.read.ExecContext(ctx, `UPDATE webhook_deliveries SET claimed_until = NULL, claimed_by = NULL
		WHERE claimed_until > ? AND claimed_by IS NOT NULL AND claimed_by <> ?
			AND claimed_by NOT IN (SELECT (CAST(l.classid AS BIGINT) << 32) | CAST(l.objid AS BIGINT) FROM pg_locks l
				WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
					AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))`, ms(now), self)
	return err
}
