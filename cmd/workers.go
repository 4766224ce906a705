package cmd

import (
	"context"
	"log/slog"
	"time"

	"service/metrics"
	"service/netpolicy"
	"service/scheduler"
	"service/store"
	"service/webhooks"
)

// A table that fills from empty is analyzed within statisticsInterval of
// holding statisticsMinRows rows, well before autovacuum's first pass
// (a minute or more) on PostgreSQL; nothing is asked of SQLite.
const (
	statisticsInterval = 5 * time.Second
	statisticsMinRows  = 1000
)

// scrubInterval is how long after an erasure of an end user, at most, the
// leader clears what it left in the database's files (store.ScrubErasures).
const scrubInterval = 10 * time.Second

// workers returns the background jobs serve runs beside the HTTP server:
// the scheduled jobs, which run on the leader only (every process on
// SQLite, one on PostgreSQL), and the webhook dispatcher, which runs on
// every process. mx, when not nil, receives their measurements.
func workers(c Config, db *store.DB, log *slog.Logger, mx *metrics.Metrics) (leader *scheduler.Leader, everywhere []func(context.Context) error) {
	dispatcher := &webhooks.Dispatcher{DB: db, RetryBase: c.WebhookRetryBase, Log: log.With("worker", "webhooks"),
		Policy: netpolicy.Policy{BlockPrivate: c.WebhookBlockPrivate}}
	campaigns := &scheduler.Campaigns{DB: db, Interval: c.SchedulerInterval, Log: log}
	if mx != nil {
		dispatcher.Observe, campaigns.Observe = mx.Delivery, mx.Schedule
	}
	// Set here, before serve shares the database with request goroutines.
	db.Notify = dispatcher.Wake
	leader = &scheduler.Leader{DB: db, Log: log, Work: []func(context.Context) error{
		campaigns.Run,
		// Retention runs often enough that events outlive --retention by at
		// most a tenth of it (an hour at most), and never busier than 1/s;
		// apps' own retentions (whole days), form submissions and audit
		// entries go on the same passes.
		(&scheduler.Retention{DB: db, Keep: c.Retention, KeepAudit: c.AuditRetention,
			Interval: max(min(c.Retention/10, time.Hour), time.Second), Log: log}).Run,
		(&scheduler.Audiences{DB: db, Interval: c.AudienceInterval, Log: log}).Run,
		(&scheduler.Statistics{DB: db, Interval: statisticsInterval, MinRows: statisticsMinRows, Log: log}).Run,
		(&scheduler.Scrub{DB: db, Interval: scrubInterval, Log: log}).Run,
		(&scheduler.MetricMoves{DB: db, Interval: store.MetricMovesEvery, Log: log}).Run,
	}}
	return leader, []func(context.Context) error{dispatcher.Run}
}
