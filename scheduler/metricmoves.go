package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// MetricMoves applies the metric moves that commits journaled (see
// store.DB.ApplyMetricMoves) every Interval, so that the values and sums
// stay close to the events even when nothing reads them: every reader
// applies what waits first, so the interval bounds the work a pass holds
// the writer for, not what a reader sees.
type MetricMoves struct {
	DB       MetricMovesDB
	Interval time.Duration
	Log      *slog.Logger
}

// MetricMovesDB is what MetricMoves needs of the database (a *store.DB).
type MetricMovesDB interface {
	ApplyMetricMovesPaced(ctx context.Context) error
}

// Run applies at start and then every Interval until ctx ends.
func (m *MetricMoves) Run(ctx context.Context) error {
	t := time.NewTicker(m.Interval)
	defer t.Stop()
	for {
		if err := m.DB.ApplyMetricMovesPaced(ctx); err != nil && ctx.Err() == nil {
			m.Log.Error("metric values", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
