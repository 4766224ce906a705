package scheduler

import (
	"context"
	"log/slog"
	"os"
	"sync"

	"service/store"
)

// Leader runs the scheduled jobs on one process of those that share a
// database: it waits to lead, runs Work while it leads, and when the
// leadership is lost stops the work, gives the leadership back and waits
// to lead again. Each job starts afresh on every election, so the campaign
// scheduler of a process that takes over runs at once.
type Leader struct {
	DB   *store.DB
	Work []func(context.Context) error
	Log  *slog.Logger
}

// Run leads whenever it can until ctx ends; it then stops the work and
// releases the leadership before it returns nil.
func (l *Leader) Run(ctx context.Context) error {
	for {
		lead, err := l.DB.AwaitLeadership(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		// Which process leads, so that the logs of several say it:
		// the pid on one machine, the host across machines.
		host, _ := os.Hostname()
		l.Log.Info("leading the scheduled work", "pid", os.Getpid(), "host", host)
		var wg sync.WaitGroup
		for _, w := range l.Work {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := w(lead.Context()); err != nil {
					l.Log.Error("scheduled work", "err", err)
				}
			}()
		}
		// The jobs return once the leadership's context ends: ctx ended,
		// or the session that holds the lock was lost. Only then is the
		// lock given back, so no other process runs a job while this one
		// still does.
		wg.Wait()
		lead.Release()
		if ctx.Err() != nil {
			l.Log.Info("released the leadership of the scheduled work")
			return nil
		}
		l.Log.Warn("lost the leadership of the scheduled work; waiting to lead again")
	}
}
