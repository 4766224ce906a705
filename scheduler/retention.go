package scheduler

import (
	"context"
	"log/slog"
	"time"

	"service/store"
)

// Retention deletes events older than Keep, and audit log entries older
// than KeepAudit, every Interval.
type Retention struct {
	DB   *store.DB
	Keep time.Duration
	// KeepAudit is how long audit entries are kept; 0 keeps them all.
	KeepAudit time.Duration
	Interval  time.Duration
	Log       *slog.Logger
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
		if r.KeepAudit > 0 {
			n, err := r.DB.DeleteAuditBefore(ctx, r.DB.Now().Add(-r.KeepAudit))
			if err != nil && ctx.Err() == nil {
				r.Log.Error("audit retention", "err", err)
			} else if n > 0 {
				r.Log.Info("audit retention", "deleted", n)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
