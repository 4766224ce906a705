package handlers

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"service/store"
)

// The rate limit on PostgreSQL, where several processes (replicas) serve
// one database: each window is counted for all of them in the database
// (store.ClaimRate), so an app's limit holds for the sum of its requests,
// wherever they land.
//
// Up to exactUpTo requests a minute, each request claims itself from the
// shared count in one atomic statement: the count is exact, and so is
// X-RateLimit-Remaining, whichever process answers. At that rate a round
// trip per request costs little.
//
// Above it, a process claims a lease of 1/leaseShare of the limit (the
// store never grants more than is left) and serves requests from it in
// memory, so the hot paths make one round trip per lease, not per request.
// One claim at a time per window and process: requests that arrive while
// it is in flight wait for it and are served from it. The limit is never
// exceeded. What leasing costs is the requests that processes hold unused
// when the window fills: at most one lease each, so at most 1% of the
// limit per process (3% at 3 processes). A lease left unused for idleTicks
// seconds goes back to the shared count, where other processes may claim
// it, but for idleKeep requests, and so does every lease on close, whole;
// when its minute ends a lease has nothing to give back.
//
// Remaining, for a leased window, is the limit less what every process had
// claimed at this process's last claim, plus what this process still
// holds: exact on one process; with several, it counts the requests that
// others hold unused as used, and misses those they claimed since.
//
// When the database does not answer within sharedTimeout, the request is
// not refused for it: the process counts on its own, in memory as on
// SQLite, logs it once, counts it in the RateLimitFallback measurement,
// and asks the database again after sharedRetry: one request's claim
// asks, off that request's path, while the local count judges it and the
// others, so that no request waits on a database that failed a moment
// ago. While that lasts, N processes allow up to N times the limit.
//
// A leased window claims its next minute's lease at its first request in
// the last aheadSeconds of a minute, off that request's path (prefetch),
// so that the first requests of a minute do not wait for a claim either:
// a database that has just stopped answering would hold them up for
// sharedTimeout. The request does it, not the sweeper: the sweeper's
// first pass over a window seen in the last second of its minute may come
// after the minute ended. Nor does the request that wakes a window whose
// lease went back unused wait (idleKeep). Only the claims of a window of
// an exact limit, a window's first lease, and a lease used up within its
// minute, are made on a request's path.
//
// Old windows are deleted by time: once a minute, each process deletes the
// windows older than the minute before the newest it has served, which
// leaves room for clocks a little apart.

const (
	// exactUpTo is the largest limit counted exactly, request by request.
	exactUpTo = 1000
	// leaseShare: a lease is 1/leaseShare of the limit.
	leaseShare = 100
	// sweepEvery is the period of the background work: leases to give
	// back, windows to forget, old windows to trim. It is the tick the
	// idle and full windows are timed in.
	sweepEvery = time.Second
	// idleTicks is how many sweeps a lease may go unused before it goes
	// back.
	idleTicks = 2
	// idleKeep is what a lease that goes back unused keeps: the request
	// that wakes its window is answered from it, not from a claim on its
	// path, which a database that has just stopped answering would hold
	// up for sharedTimeout.
	idleKeep = 1
	// sharedTimeout bounds a claim; a claim that takes longer failed.
	sharedTimeout = time.Second
	// sharedRetry is how long the process counts on its own after the
	// database failed to answer, before it asks it again.
	sharedRetry = time.Second
	// aheadSeconds: the first request in the last aheadSeconds of a
	// minute claims the window's next minute's lease ahead (prefetch),
	// time enough for the claim to come back before the minute ends.
	aheadSeconds = 2
	// closeTimeout bounds what close gives back.
	closeTimeout = 2 * time.Second
)

// sharedLimiter is the limiter of a process on PostgreSQL.
type sharedLimiter struct {
	db *store.DB
	// srv gives the log and the observer, read when used: both may be set
	// after New.
	srv *Server
	// local counts while the database does not answer.
	local   *limiter
	windows sync.Map // limitKey -> *sharedWindow

	// retryAt is 0 while the database answers; after a failure, the Unix
	// nanosecond from which one request asks it again.
	retryAt atomic.Int64
	// tick counts the sweeps: the clock of idle and full windows, which
	// the requests read without reading the time.
	tick atomic.Int64
	// seen is the newest minute a request was judged in, and trimmed the
	// one whose predecessors were last trimmed (the sweeper's own).
	seen    atomic.Int64
	trimmed int64
	// claims counts the claims sent to the database: the round trips of
	// the requests.
	claims atomic.Int64
	// flights are the claims made off the requests' paths, which close
	// waits for, so that what they bring goes back too.
	flights sync.WaitGroup
	// every is the sweeper's period, sweepEvery (tests lengthen it to
	// sweep by hand).
	every time.Duration

	// The sweeper runs while there are windows, and stops for good on
	// close.
	mu      sync.Mutex
	running bool
	closed  bool
	stop    chan struct{}
	done    chan struct{}
}

// sharedWindow is what this process knows and holds of one app's class's
// current window.
type sharedWindow struct {
	mu sync.Mutex
	// gone: the sweeper forgot this window; look it up again.
	gone   bool
	minute int64
	// ends is when the minute ends, by this process's clock.
	ends time.Time
	// limit is the limit of the last claim.
	limit int
	// tokens are requests this process claimed and has not used yet.
	tokens int
	// claimed is what the window had handed out to every process at this
	// process's last claim, less what it gave back since.
	claimed int
	// fetch is closed when the claim in flight ends; nil when none is.
	fetch chan struct{}
	// full: the last claim found the window full, at tick fullTick.
	full     bool
	fullTick int64
	// last is the tick of the last request.
	last int64
	// next is the lease of the next minute, claimed ahead (prefetch);
	// prefetching is that minute while its claim is in flight, else 0.
	next        nextLease
	prefetching int64
}

// nextLease is a lease claimed before its minute began.
type nextLease struct {
	minute                 int64
	tokens, claimed, limit int
}

func newSharedLimiter(db *store.DB, srv *Server, local *limiter) *sharedLimiter {
	return &sharedLimiter{db: db, srv: srv, local: local, every: sweepEvery}
}

// take counts one request against the shared window; it answers as
// limiter.take.
func (l *sharedLimiter) take(app int64, class, limit int, now time.Time) (remaining, reset int, ok bool) {
	if limit <= 0 {
		return l.local.count(app, class, limit, now)
	}
	sec := now.Unix()
	minute := sec / 60
	reset = int(60 - sec%60)
	k := limitKey{app, class}
	for {
		local, retrying := l.unshared()
		if local {
			l.srv.observeRateLimitFallback()
			return l.local.count(app, class, limit, now)
		}
		w := l.window(k)
		w.mu.Lock()
		if w.gone {
			w.mu.Unlock()
			continue
		}
		if minute > w.minute {
			w.begin(minute, now)
			l.saw(minute)
		}
		tick := l.tick.Load()
		w.last = tick
		if limit <= exactUpTo {
			return l.exact(w, k, now, limit, tick, retrying)
		}
		// A request of a minute that this process has left already is
		// judged in the current one: its tokens are the ones held.
		m := w.minute
		if w.tokens > 0 {
			w.tokens--
			remaining = max(0, limit-w.claimed+w.tokens)
			ahead := reset <= aheadSeconds && minute == m && w.next.minute <= m && w.prefetching == 0
			if ahead {
				w.prefetching = m + 1
			}
			w.mu.Unlock()
			if ahead {
				l.offPath(func() { l.claimAhead(w, k, m+1, limit) })
			}
			return remaining, reset, true
		}
		if w.full && w.limit == limit && tick == w.fullTick {
			w.mu.Unlock()
			return 0, reset, false
		}
		if w.prefetching == m && w.fetch == nil {
			// The lease of this minute, claimed before it began, is still
			// on its way: the database is slow or out, and the request is
			// not held up for it.
			w.mu.Unlock()
			l.srv.observeRateLimitFallback()
			return l.local.count(app, class, limit, now)
		}
		ch := w.fetch
		if ch == nil {
			ch = make(chan struct{})
			w.fetch = ch
			if retrying {
				// The database failed to answer a moment ago, and may
				// still hang: ask it again off the request's path, which
				// the process's own count serves meanwhile, so that no
				// request waits on a database that is out.
				w.mu.Unlock()
				l.offPath(func() { l.claimLease(w, k, m, limit, tick, ch) })
				l.srv.observeRateLimitFallback()
				return l.local.count(app, class, limit, now)
			}
			w.mu.Unlock()
			l.claimLease(w, k, m, limit, tick, ch)
			continue
		}
		w.mu.Unlock()
		if retrying {
			l.srv.observeRateLimitFallback()
			return l.local.count(app, class, limit, now)
		}
		// One claim at a time: wait for it, then take from it.
		<-ch
	}
}

// claimLease claims a lease of window k's minute m for w, and closes ch,
// w's fetch, once it is answered. A failure counts locally for a while
// (failed); the loop of take tries again.
func (l *sharedLimiter) claimLease(w *sharedWindow, k limitKey, m int64, limit int, tick int64, ch chan struct{}) {
	got, claimed, err := l.claim(k, m, max(1, limit/leaseShare), limit)
	w.mu.Lock()
	w.fetch = nil
	close(ch)
	if err != nil {
		w.mu.Unlock()
		l.failed(err)
		return
	}
	l.answered()
	// A lease of a minute that ended meanwhile has nothing to give
	// back: it is dropped.
	if w.minute == m && !w.gone {
		w.tokens += got
		w.claimed, w.limit = claimed, limit
		w.full, w.fullTick = got == 0, tick
	}
	w.mu.Unlock()
}

// offPath runs claim off the request's path; close waits for it. One that
// starts after close is not waited for: what it claims stays counted until
// its minute ends, stricter, never looser.
func (l *sharedLimiter) offPath(claim func()) {
	l.mu.Lock()
	closed := l.closed
	if !closed {
		l.flights.Add(1)
	}
	l.mu.Unlock()
	if closed {
		go claim()
		return
	}
	go func() {
		defer l.flights.Done()
		claim()
	}()
}

// claimAhead claims window k's lease of minute, the one after w's, for w,
// whose prefetching its caller set to minute.
func (l *sharedLimiter) claimAhead(w *sharedWindow, k limitKey, minute int64, limit int) {
	got, claimed, err := l.claim(k, minute, max(1, limit/leaseShare), limit)
	w.mu.Lock()
	w.prefetching = 0
	switch {
	case err != nil || w.gone || got == 0:
	case w.minute == minute:
		// The minute began while the lease was on its way.
		w.tokens += got
		w.claimed, w.limit, w.full = claimed, limit, false
	case w.minute < minute:
		w.next = nextLease{minute: minute, tokens: got, claimed: claimed, limit: limit}
	}
	w.mu.Unlock()
	if err != nil {
		l.failed(err)
		return
	}
	l.answered()
}

// exact claims one request of a window of a small limit, which w.mu
// holds locked, and answers as take.
func (l *sharedLimiter) exact(w *sharedWindow, k limitKey, now time.Time, limit int, tick int64, retrying bool) (remaining, reset int, ok bool) {
	sec := now.Unix()
	minute := sec / 60
	reset = int(60 - sec%60)
	if minute == w.minute && w.full && w.limit == limit && tick == w.fullTick {
		// Full when last asked, less than a tick ago: nothing is given
		// back to exact windows, so only a raised limit changes that.
		w.mu.Unlock()
		return 0, reset, false
	}
	w.mu.Unlock()
	if retrying {
		// The database failed to answer a moment ago: this request's
		// claim asks it again off the request's path, while the process's
		// own count judges the request. Once the database answers, the
		// request is counted in both: stricter by one, never looser.
		l.offPath(func() {
			if got, claimed, err := l.claim(k, minute, 1, limit); err != nil {
				l.failed(err)
			} else {
				l.answered()
				l.exactClaimed(w, minute, limit, tick, got, claimed)
			}
		})
		l.srv.observeRateLimitFallback()
		return l.local.count(k.app, k.class, limit, now)
	}
	got, claimed, err := l.claim(k, minute, 1, limit)
	if err != nil {
		l.failed(err)
		l.srv.observeRateLimitFallback()
		return l.local.count(k.app, k.class, limit, now)
	}
	l.answered()
	if !l.exactClaimed(w, minute, limit, tick, got, claimed) {
		return 0, reset, false
	}
	return limit - claimed, reset, true
}

// exactClaimed notes a claim of one request of an exact window, and
// reports whether it was granted.
func (l *sharedLimiter) exactClaimed(w *sharedWindow, minute int64, limit int, tick int64, got, claimed int) bool {
	if got > 0 {
		return true
	}
	w.mu.Lock()
	if w.minute == minute {
		w.full, w.fullTick, w.limit = true, tick, limit
	}
	w.mu.Unlock()
	return false
}

// window returns this process's state of k's window, starting the sweeper
// for a new one.
func (l *sharedLimiter) window(k limitKey) *sharedWindow {
	if v, ok := l.windows.Load(k); ok {
		return v.(*sharedWindow)
	}
	v, loaded := l.windows.LoadOrStore(k, &sharedWindow{})
	if !loaded {
		l.run()
	}
	return v.(*sharedWindow)
}

// begin moves w to a new minute. What it held of the last one is dropped:
// once a minute ends there is nothing to give back. A lease claimed ahead
// for the new minute is taken up.
func (w *sharedWindow) begin(minute int64, now time.Time) {
	w.minute = minute
	w.ends = time.Now().Add(time.Unix((minute+1)*60, 0).Sub(now))
	w.tokens, w.claimed, w.full = 0, 0, false
	if n := w.next; n.minute == minute && n.tokens > 0 {
		w.tokens, w.claimed, w.limit = n.tokens, n.claimed, n.limit
	}
	w.next = nextLease{}
}

// saw records that a request was judged in minute.
func (l *sharedLimiter) saw(minute int64) {
	for {
		s := l.seen.Load()
		if minute <= s || l.seen.CompareAndSwap(s, minute) {
			return
		}
	}
}

func (l *sharedLimiter) claim(k limitKey, minute int64, want, limit int) (got, claimed int, err error) {
	l.claims.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	return l.db.ClaimRate(ctx, store.RateWindow{App: k.app, Class: k.class, Minute: minute}, want, limit)
}

// unshared reports whether this request is counted locally: the database
// failed to answer less than sharedRetry ago. Once that has passed, one
// request (this one, if it wins: retrying) asks again, and the retry moves
// on.
func (l *sharedLimiter) unshared() (local, retrying bool) {
	at := l.retryAt.Load()
	if at == 0 {
		return false, false
	}
	now := time.Now().UnixNano()
	if now < at {
		return true, false
	}
	if !l.retryAt.CompareAndSwap(at, now+int64(sharedRetry)) {
		return true, false
	}
	return false, true
}

// failed counts locally from now on for sharedRetry, and says so when the
// database answered until now.
func (l *sharedLimiter) failed(err error) {
	if l.retryAt.Swap(time.Now().Add(sharedRetry).UnixNano()) == 0 {
		l.srv.Log.Warn("rate limits: the shared count did not answer; this process counts its own requests until it does", "err", err)
	}
}

// answered counts in the database again, and says so after a failure.
func (l *sharedLimiter) answered() {
	if l.retryAt.Load() != 0 && l.retryAt.Swap(0) != 0 {
		l.srv.Log.Info("rate limits: the shared count answers again")
	}
}

// run starts the sweeper unless it runs.
func (l *sharedLimiter) run() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running || l.closed {
		return
	}
	l.running = true
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.sweep(l.stop, l.done)
}

// sweep gives back idle leases, forgets ended windows and trims old ones
// every l.every, until stop closes or no window is left.
func (l *sharedLimiter) sweep(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		l.tick.Add(1)
		l.giveBack(false)
		l.trim()
		if l.idle() {
			return
		}
	}
}

// idle stops the sweeper when no window is left; a new window starts it
// again (window stores before it calls run, which waits for l.mu).
func (l *sharedLimiter) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	empty := true
	l.windows.Range(func(_, _ any) bool {
		empty = false
		return false
	})
	if empty {
		l.running = false
	}
	return empty
}

// lease is what giveBack returns of a window.
type lease struct {
	k        limitKey
	minute   int64
	n, limit int
}

// giveBack returns the leases unused for idleTicks, or all of them, to the
// shared count, and forgets the windows whose minute ended.
func (l *sharedLimiter) giveBack(all bool) {
	var back []lease
	now, tick := time.Now(), l.tick.Load()
	l.windows.Range(func(key, v any) bool {
		w := v.(*sharedWindow)
		w.mu.Lock()
		switch {
		case now.After(w.ends) && w.next.minute == w.minute+1 && w.next.tokens > 0 && !all:
			// The next minute's lease is here: the window goes on in it.
			n := w.next
			w.minute, w.ends = n.minute, w.ends.Add(time.Minute)
			w.tokens, w.claimed, w.limit, w.full = n.tokens, n.claimed, n.limit, false
			w.next = nextLease{}
		case now.After(w.ends):
			w.tokens = 0
			if w.fetch == nil && w.prefetching == 0 {
				w.gone = true
				l.windows.Delete(key)
			}
		default:
			keep := idleKeep
			if all {
				keep = 0
			}
			if w.tokens > keep && (all || tick-w.last >= idleTicks) {
				n := w.tokens - keep
				back = append(back, lease{k: key.(limitKey), minute: w.minute, n: n, limit: w.limit})
				w.claimed -= n
				w.tokens = keep
			}
			// So does a lease claimed ahead: the first request of its
			// minute is answered from what it keeps.
			if n := w.next; n.tokens > keep && (all || tick-w.last >= idleTicks) {
				back = append(back, lease{k: key.(limitKey), minute: n.minute, n: n.tokens - keep, limit: n.limit})
				w.next.claimed -= n.tokens - keep
				w.next.tokens = keep
				if keep == 0 {
					w.next = nextLease{}
				}
			}
		}
		w.mu.Unlock()
		return true
	})
	if len(back) == 0 {
		return
	}
	timeout := sharedTimeout
	if all {
		timeout = closeTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, b := range back {
		err := l.db.ReturnRate(ctx, store.RateWindow{App: b.k.app, Class: b.k.class, Minute: b.minute}, b.n, b.limit)
		if err != nil {
			// Not given back, the requests stay counted: the window is
			// stricter until its minute ends, never looser.
			l.srv.Log.Warn("rate limits: could not give back unused requests", "app", b.k.app, "requests", b.n, "err", err)
		}
	}
}

// trim deletes the windows older than the minute before the newest one
// served, once per new minute.
func (l *sharedLimiter) trim() {
	seen := l.seen.Load()
	if seen <= l.trimmed {
		return
	}
	l.trimmed = seen
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	if _, err := l.db.TrimRateWindows(ctx, seen-1); err != nil {
		l.srv.Log.Warn("rate limits: could not delete old windows", "err", err)
	}
}

// close stops the sweeper and gives back every lease held.
func (l *sharedLimiter) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	running, stop, done := l.running, l.stop, l.done
	l.mu.Unlock()
	if running {
		close(stop)
		<-done
	}
	l.flights.Wait()
	l.giveBack(true)
}
