// Package scheduler runs the service's periodic jobs: the campaign
// scheduler, which starts and completes campaigns by date, the audience
// scheduler, which keeps audience counts fresh, and event retention. Each
// is a ticker loop with Run(ctx) that stops when ctx ends. Leader runs
// them on one process of those that share a database.
package scheduler

import (
	"context"
	"log/slog"
	"time"
)

// Audiences recounts every active audience each Interval.
type Audiences struct {
	DB       AudiencesDB
	Interval time.Duration
	Log      *slog.Logger
}

// AudiencesDB is what Audiences needs of the database (a *store.DB).
type AudiencesDB interface {
	RecountAudiences(ctx context.Context) error
}

// maxAudienceBackoff bounds how many ticks a failing recount skips.
const maxAudienceBackoff = 16

// Run recounts on every tick until ctx ends, and then returns nil. A failed
// pass is logged and the loop goes on; while passes keep failing it skips
// a growing number of ticks (1, 2, 4, ... up to 16), so a broken database
// is not hammered with full scans.
func (s *Audiences) Run(ctx context.Context) error {
	interval := s.Interval
	if interval <= 0 {
		interval = 5 * time.Minute
	}
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	failures, skip := 0, 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if skip > 0 {
			skip--
			continue
		}
		start := time.Now()
		err := s.DB.RecountAudiences(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			failures++
			skip = min(1<<(failures-1), maxAudienceBackoff)
			log.Error("audience recount failed", "err", err, "failures", failures, "skipTicks", skip)
			continue
		}
		failures = 0
		log.Debug("audiences recounted", "duration_ms", float64(time.Since(start).Microseconds())/1000)
	}
}
