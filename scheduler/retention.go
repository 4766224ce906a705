package scheduler

import (
	"context"
	"log/slog"
	"time"

	"service/store"
)

// Retention deletes, every Interval, events older than their app's
// eventRetentionDays (Keep for apps that set none), form submissions older
// than their app's formRetentionDays (none for apps that set none), and
// audit log entries older than KeepAudit.
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
		r.pass(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// pass deletes what has outlived its retention at the database's clock,
// logging what went; an error of one kind does not hold up the others.
func (r *Retention) pass(ctx context.Context) {
	r.report(ctx, "event retention", func() (int64, error) { return r.DB.DeleteExpiredEvents(ctx, r.DB.Now(), r.Keep) })
	r.report(ctx, "form submission retention", func() (int64, error) { return r.DB.DeleteExpiredFormSubmissions(ctx, r.DB.Now()) })
	if r.KeepAudit > 0 {
		r.report(ctx, "audit retention", func() (int64, error) { return r.DB.DeleteAuditBefore(ctx, r.DB.Now().Add(-r.KeepAudit)) })
	}
}

func (r *Retention) report(ctx context.Context, what string, del func() (int64, error)) {
	n, err := del()
	if err != nil && ctx.Err() == nil {
		r.Log.Error(what, "err", err)
	} else if n > 0 {
		r.Log.Info(what, "deleted", n)
	}
}
