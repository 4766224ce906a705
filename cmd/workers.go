package cmd

import (
	"context"
	"log/slog"

	"service/store"
)

// workers returns the background jobs serve runs beside the HTTP server.
func workers(c Config, db *store.DB, log *slog.Logger) []func(context.Context) error {
	return nil
}
