package scheduler

import (
	"context"
	"log/slog"
	"time"

	"service/store"
)

// Retention deletes events older than Keep, every Interval.
type Retention struct {
	DB       *store.DB
	Keep     time.Duration
	Interval time.Duration
	Log      *slog.Logger
}

// Run deletes once at start and then every Interval until ctx ends.
func (r *Retention) Run(ctx context.Context) error {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		n, err := r.DB.DeleteEventsBefore(ctx, r.DB.Now().Add(-r.Keep))
		if err != nil && ctx.Err() == nil {
			r.Log.Error("event retention", "err", err)
		} else if n > 0 {
			r.Log.Info("event retention", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
