package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"service/store"
)

// Campaigns starts and completes campaigns by their dates, and reports
// the guardrails of active campaigns that regressed (pausing those whose
// guardrailAction is pause).
type Campaigns struct {
	DB       *store.DB
	Interval time.Duration
	Log      *slog.Logger
	// Observe, when set, is told of every run: the campaigns it started
	// and completed, and whether it (the moves or the guardrail check)
	// failed.
	Observe func(started, completed int, err error)
}

// Run ticks until ctx ends. It runs once at start, so campaigns whose
// dates passed while the service was down move at once.
func (s *Campaigns) Run(ctx context.Context) error {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	failures := 0
	// blocked holds the reason last logged for each due draft that could
	// not start: a draft waits for its block to be published for as long
	// as that takes, and one line says why, not one every tick.
	blocked := map[int64]string{}
	for {
		res, err := s.DB.RunSchedule(ctx)
		s.logBlocked(blocked, res.Blocked, err == nil)
		// Guardrails are checked after the moves, so that a campaign that
		// just completed is not reported on (or paused) as well.
		regressions, gerr := s.DB.CheckGuardrails(ctx)
		err = errors.Join(err, gerr)
		for _, r := range regressions {
			s.Log.Warn("guardrail regressed", "campaign", r.CampaignID, "metric", r.MetricID, "variant", r.VariantID, "paused", r.Paused)
		}
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

// logBlocked logs each due draft that could not start once, again only if
// its reason changes. After a pass that read every due draft (complete),
// it forgets those no longer blocked, so a draft blocked again later is
// logged again; a failed pass forgets nothing, or a database that fails
// every other tick would bring the same lines back each time.
func (s *Campaigns) logBlocked(logged map[int64]string, now []store.BlockedStart, complete bool) {
	seen := make(map[int64]bool, len(now))
	for _, b := range now {
		seen[b.CampaignID] = true
		if logged[b.CampaignID] == b.Reason {
			continue
		}
		logged[b.CampaignID] = b.Reason
		s.Log.Warn("campaign will not start until this is fixed; retrying every tick",
			"appId", b.AppID, "campaignId", b.CampaignID, "reason", b.Reason)
	}
	if !complete {
		return
	}
	for id := range logged {
		if !seen[id] {
			delete(logged, id)
		}
	}
}
