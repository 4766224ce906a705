package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// Scrub has the database clear what erasures of end users left behind in
// its files, every Interval: the SQLite WAL's older frames, PostgreSQL's
// dead row versions (see store.DB.ScrubErasures). It is the leader's job so
// that an erasure's request never waits for it.
type Scrub struct {
	DB       ScrubDB
	Interval time.Duration
	Log      *slog.Logger
}

// ScrubDB is what Scrub needs of the database (a *store.DB).
type ScrubDB interface {
	ScrubErasures(ctx context.Context) (int64, error)
}

// Run scrubs at start and then every Interval until ctx ends.
func (s *Scrub) Run(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		start := time.Now()
		n, err := s.DB.ScrubErasures(ctx)
		if err != nil && ctx.Err() == nil {
			s.Log.Error("erasure scrub", "err", err)
		} else if n > 0 {
			s.Log.Info("scrubbed what erasures left in the database files", "erasures", n, "took_ms", time.Since(start).Milliseconds())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
