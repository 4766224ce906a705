package cmd

import (
	"context"
	"log/slog"

	"service/scheduler"
	"service/store"
)

// workers returns the background jobs serve runs beside the HTTP server.
func workers(c Config, db *store.DB, log *slog.Logger) []func(context.Context) error {
	return []func(context.Context) error{
		(&scheduler.Campaigns{DB: db, Interval: c.SchedulerInterval, Log: log}).Run,
	}
}
