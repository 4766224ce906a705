package store

import (
	"context"
	"errors"
	"sync"
)

// Scheduled work (the campaign scheduler, the audience recount, event
// retention) runs on one process of those that share a database: the
// leader. On SQLite every process leads, as before there were leaders: the
// file has one writer at a time, and each scheduled change is a
// conditional update that a second mover finds done. On PostgreSQL the
// processes elect one (see postgres_leader.go).

// ErrNotLeader is the error of a write made under a leadership that has
// ended: the process that made it no longer leads, so the write is not
// made.
var ErrNotLeader = errors.New("store: this process no longer leads the scheduled work")

// Leadership is this process's hold on the scheduled work, from
// AwaitLeadership until Release.
type Leadership struct {
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
	// release ends the hold once the work under it stopped: it gives the
	// lock back so that another process may take it.
	release func()
}

// Context ends when the leadership is lost (its session is gone), or when
// the context given to AwaitLeadership ends. Scheduled work runs under it:
// a write transaction begun with it checks, in the transaction, that the
// leadership still holds, so a leader that lost its session cannot write
// after another process took over, even before it noticed.
func (l *Leadership) Context() context.Context { return l.ctx }

// Release ends the leadership. Call it once the work under Context has
// stopped: until then the lock stays held, so no other process starts the
// same work meanwhile.
func (l *Leadership) Release() {
	l.once.Do(func() {
		l.cancel()
		if l.release != nil {
			l.release()
		}
	})
}

// AwaitLeadership returns once this process leads the scheduled work, or
// with ctx's error once ctx ends. On SQLite it returns at once: every
// process leads.
func (db *DB) AwaitLeadership(ctx context.Context) (*Leadership, error) {
	if db.pg != nil {
		return db.awaitLeadershipPG(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	db.leading.Store(true)
	return &Leadership{ctx: lctx, cancel: cancel, release: func() { db.leading.Store(false) }}, nil
}

// Leading reports whether this process leads the scheduled work now.
func (db *DB) Leading() bool { return db.leading.Load() }

// leaseKey is the context key of the leadership a transaction is begun
// under.
type leaseKey struct{}

// leaseOf returns the PostgreSQL leadership ctx was derived from, or nil.
func leaseOf(ctx context.Context) *pgLease {
	l, _ := ctx.Value(leaseKey{}).(*pgLease)
	return l
}
