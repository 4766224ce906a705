package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// Statistics has the database gather the statistics of each table that
// has none yet once it holds MinRows rows, every Interval: on PostgreSQL,
// a table that filled before autovacuum's first pass over it is otherwise
// planned blind (see store.DB.TablesWithoutStatistics). Once a table was
// analyzed, or skipped because the database role does not own it, it is
// not asked for again by this process: autovacuum takes it from there.
type Statistics struct {
	DB       StatisticsDB
	Interval time.Duration
	MinRows  int64
	Log      *slog.Logger
}

// StatisticsDB is what Statistics needs of the database (a *store.DB).
type StatisticsDB interface {
	TablesWithoutStatistics(ctx context.Context, minRows int64) ([]string, error)
	AnalyzeTable(ctx context.Context, name string) error
}

// Run checks at start and then every Interval until ctx ends.
func (s *Statistics) Run(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	asked := map[string]bool{}
	for {
		names, err := s.DB.TablesWithoutStatistics(ctx, s.MinRows)
		if err != nil && ctx.Err() == nil {
			s.Log.Error("table statistics", "err", err)
		}
		for _, name := range names {
			if asked[name] {
				continue
			}
			start := time.Now()
			if err := s.DB.AnalyzeTable(ctx, name); err != nil {
				if ctx.Err() == nil {
					s.Log.Error("table statistics", "table", name, "err", err)
				}
				continue
			}
			asked[name] = true
			s.Log.Info("asked the database to analyze a table it had no statistics for", "table", name,
				"took_ms", time.Since(start).Milliseconds())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
