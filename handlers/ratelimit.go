package handlers

import (
	"sync"
	"time"
)

// limiter is a fixed one-minute window per app and traffic class. A fixed
// window is what X-RateLimit-Reset can describe exactly: the seconds until
// the window frees.
//
// On SQLite it counts in this process's memory: one process serves a file
// (two processes on one file each count their own requests). On
// PostgreSQL, where several processes share the database, shared counts
// the window in the database for all of them (ratelimit_shared.go), and
// this process's memory serves only while the database does not answer.
type limiter struct {
	buckets sync.Map // limitKey -> *bucket
	shared  *sharedLimiter
}

type limitKey struct {
	app   int64
	class int
}

type bucket struct {
	mu     sync.Mutex
	window int64 // unix minute
	count  int
}

func newLimiter() *limiter { return &limiter{} }

// take counts one request; it returns the requests left in this window,
// the seconds until the next one, and whether this request is allowed.
func (l *limiter) take(app int64, class, limit int, now time.Time) (remaining, reset int, ok bool) {
	if l.shared != nil {
		return l.shared.take(app, class, limit, now)
	}
	return l.count(app, class, limit, now)
}

// count is take in this process's memory.
func (l *limiter) count(app int64, class, limit int, now time.Time) (remaining, reset int, ok bool) {
	k := limitKey{app, class}
	v, found := l.buckets.Load(k)
	if !found {
		v, _ = l.buckets.LoadOrStore(k, &bucket{})
	}
	b := v.(*bucket)
	sec := now.Unix()
	window := sec / 60
	reset = int(60 - sec%60)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.window != window {
		b.window, b.count = window, 0
	}
	if b.count >= limit {
		return 0, reset, false
	}
	b.count++
	return limit - b.count, reset, true
}

// close gives back what the limiter holds of shared windows and stops its
// background work.
func (l *limiter) close() {
	if l.shared != nil {
		l.shared.close()
	}
}
