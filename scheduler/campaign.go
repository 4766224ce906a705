package scheduler

import (
	"context"
	"log/slog"
	"time"

	"service/store"
)

// Campaigns starts and completes campaigns by their dates.
type Campaigns struct {
	DB       *store.DB
	Interval time.Duration
	Log      *slog.Logger
	// Observe, when set, is told of every run: the campaigns it started
	// and completed, and whether it failed.
	Observe func(started, completed int, err error)
}

// Run ticks until ctx ends. It runs once at start, so campaigns whose
// dates passed while the service was down move at once.
func (s *Campaigns) Run(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	failures := 0
	for {
		res, err := s.DB.RunSchedule(ctx)
		if s.Observe != nil && ctx.Err() == nil {
			s.Observe(len(res.Started), len(res.Completed), err)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			failures++
			s.Log.Error("campaign scheduler", "err", err, "failures", failures)
		case err == nil:
			failures = 0
			if len(res.Started)+len(res.Completed) > 0 {
				s.Log.Info("campaign scheduler", "started", res.Started, "completed", res.Completed)
			}
		}
		// Repeated failures back off so a broken database is not hammered.
		wait := t.C
		if failures > 1 {
			wait = time.After(min(time.Duration(failures)*s.Interval, 10*s.Interval))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wait:
		}
	}
}
