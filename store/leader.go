package store

import (
	"context"
	"errors"
	"sync"
)

// Scheduled work (the campaign scheduler, the audience recount, event
// retention) runs on one process of those that share a database: the
// leader. The processes elect one with a lock that the system releases
// when its holder dies: a lock file on SQLite (sqlite_leader.go), an
// advisory lock on PostgreSQL (postgres_leader.go). Each scheduled change
// is also a conditional update, so a second mover would find it done.

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
// with ctx's error once ctx ends.
func (db *DB) AwaitLeadership(ctx context.Context) (*Leadership, error) {
	if db.pg != nil {
		return db.awaitLeadershipPG(ctx)
	}
	return db.awaitLeadershipFile(ctx)
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
