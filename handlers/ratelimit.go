package handlers

import (
	"sync"
	"time"
)

// limiter is a fixed one-minute window per app and traffic class. A fixed
// window is what X-RateLimit-Reset can describe exactly: the seconds until
// the window frees.
type limiter struct {
	buckets sync.Map // limitKey -> *bucket
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
