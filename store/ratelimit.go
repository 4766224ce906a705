package store

import (
	"context"
	"database/sql"
	"errors"
)

// Rate limits are counted per app, per traffic class and per wall-clock
// minute. On SQLite each process counts in its own memory (the handlers'
// limiter), as one process serves one file. On PostgreSQL several
// processes serve one database, so the count of every window lives in
// rate_limit_windows, where each process claims requests from it: one at
// a time for the small limits, whose count is then exact, in batches for
// the large ones (see handlers/ratelimit_shared.go).
//
// A window's used column is what it has handed out. A claim adds what it
// asks for while the window is not full, so a last claim may take used
// past the limit: what it asked beyond the limit was not granted, and
// claimed = min(used, limit) is what the processes hold. A claimant
// learns its grant from used alone, without reading the row first:
// got = min(want, limit - (used - want)).

// ErrRateLimitsLocal answers the shared count's methods on SQLite, where
// each process counts its own requests.
var ErrRateLimitsLocal = errors.New("store: rate limits are counted by each process on SQLite")

// RateWindow is one shared count: an app's traffic class in one minute,
// numbered from the Unix epoch (Unix seconds / 60).
type RateWindow struct {
	App    int64
	Class  int
	Minute int64
}

// SharedRateLimits reports whether the database counts rate limits for
// every process that uses it: true on PostgreSQL, false on SQLite.
func (db *DB) SharedRateLimits() bool { return db.eng.sharedRateLimits() }

// ClaimRate claims up to want requests of window w for this process,
// against limit, in one atomic statement. It returns how many it got, 0
// when the window is full, and how many the window has handed out to every
// process after this claim (at most limit). A want of 1 makes the count
// exact: each request claims itself.
func (db *DB) ClaimRate(ctx context.Context, w RateWindow, want, limit int) (got, claimed int, err error) {
	if !db.eng.sharedRateLimits() {
		return 0, 0, ErrRateLimitsLocal
	}
	if limit <= 0 {
		return 0, 0, nil
	}
	want = max(want, 1)
	used, err := db.eng.claimRate(ctx, w, want, limit)
	if errors.Is(err, sql.ErrNoRows) {
		// The window is full: it has handed out limit or more.
		return 0, limit, nil
	}
	if err != nil {
		return 0, 0, err
	}
	got = min(want, limit-int(used)+want)
	return got, min(int(used), limit), nil
}

// ReturnRate gives back n requests of window w that this process claimed
// and did not use, so that other processes may claim them. limit is the
// limit they were claimed against.
func (db *DB) ReturnRate(ctx context.Context, w RateWindow, n, limit int) error {
	if !db.eng.sharedRateLimits() {
		return ErrRateLimitsLocal
	}
	if n <= 0 {
		return nil
	}
	return db.eng.returnRate(ctx, w, n, limit)
}

// TrimRateWindows deletes the windows of the minutes before minute, and
// returns how many it deleted.
func (db *DB) TrimRateWindows(ctx context.Context, minute int64) (int64, error) {
	return db.eng.trimRateWindows(ctx, minute)
}
