package store

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Scheduled work (the campaign scheduler, the audience recount, event
// retention) runs on one process of those that share a database: the
// leader. The processes elect one with a lock that the system releases
// when its holder dies: a lock file on SQLite (sqlite_leader.go), an
// advisory lock on PostgreSQL (postgres_leader.go). Each scheduled change
// is also a conditional update, so a second mover would find it done.

const (
	// leaderRetry is how often a process that does not lead asks again.
	leaderRetry = 500 * time.Millisecond
	// leaderCheck is how often the leader makes sure its lock still holds,
	// and leaderCheckTimeout how long one check may take before the lock
	// counts as lost.
	leaderCheck        = time.Second
	leaderCheckTimeout = 2 * time.Second
)

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
	e := db.eng.election()
	failing, told := false, false
	for {
		l, err := e.try(ctx)
		if l != nil {
			return l, nil
		}
		// Once, so that the processes' logs say which one waits.
		if err == nil && !told && e.log != nil {
			told = true
			e.log.Info("another process leads the scheduled work; waiting to lead", e.waiting()...)
		}
		if errors.Is(err, errClosed) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// One line when the lock cannot be asked for, not one every retry.
		if err != nil && !failing && e.log != nil {
			e.log.Warn(e.failing, append(e.where, "err", err)...)
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(leaderRetry):
		}
	}
}

// election is what each store's leader election gives AwaitLeadership:
// one attempt at the lock (a Leadership when granted, nil and nil when
// another process holds it), and what its log lines say.
type election struct {
	try     func(context.Context) (*Leadership, error)
	log     *slog.Logger
	waiting func() []any // the attributes of the line "waiting to lead"
	failing string       // the line when the lock cannot be asked for
	where   []any        // and its attributes
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
