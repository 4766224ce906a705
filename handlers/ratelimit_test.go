package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/pgtest"
	"service/internal/storetest"
	"service/internal/testlog"
	"service/internal/testwait"
	"service/store"
)

// Several *Server on one database stand for replicas: each has a limiter
// of its own, as each process does. On PostgreSQL they count an app's
// requests together; on SQLite each counts its own, as two processes on
// one file do.

// replica is another server on e's database, judging requests by now.
func (e *testEnv) replica(now func() time.Time) *testEnv {
	e.t.Helper()
	s := newServer(e.DB)
	s.Now = now
	e.t.Cleanup(s.Close)
	r := *e
	r.Srv = s
	return &r
}

// replicas is e's server and n-1 more, all judging requests by now.
func (e *testEnv) replicas(n int, now func() time.Time) []*testEnv {
	e.Srv.Now = now
	rs := []*testEnv{e}
	for len(rs) < n {
		rs = append(rs, e.replica(now))
	}
	return rs
}

// rateOf reads X-RateLimit-Limit and -Remaining.
func rateOf(t testing.TB, rec *httptest.ResponseRecorder) (limit, remaining int) {
	t.Helper()
	limit, err1 := strconv.Atoi(rec.Header().Get("X-RateLimit-Limit"))
	remaining, err2 := strconv.Atoi(rec.Header().Get("X-RateLimit-Remaining"))
	if err1 != nil || err2 != nil {
		t.Fatalf("rate-limit headers missing or not numbers: %v", rec.Header())
	}
	return limit, remaining
}

// serve sends a GET through s without recording it, for the goroutines of
// the load tests.
func serve(s *Server, path, key string) int {
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code
}

// minuteAt10s is a clock 10 s into a minute: no test window rolls over.
func minuteAt10s() func() time.Time {
	now := time.Date(2030, 1, 2, 3, 4, 10, 0, time.UTC)
	return func() time.Time { return now }
}

// TestRateLimitAcrossServers: a free app's requests (limit 60) sent round
// robin through three servers. On PostgreSQL the limit counts them all,
// exactly: 60 are allowed, X-RateLimit-Remaining counts 59 to 0 across
// the servers, and the 61st is refused on each. On SQLite each server
// allows 60 of its own.
func TestRateLimitAcrossServers(t *testing.T) {
	e := newEnv(t)
	app, admin, _, _ := e.newApp("free app", "free", 0)
	rs := e.replicas(3, minuteAt10s())
	list := pathf("/v1/apps/%d/content", app.ID)
	shared := e.DB.SharedRateLimits()
	if shared != pgtest.Selected() {
		t.Fatalf("shared rate limits=%v on this store", shared)
	}
	allowed := 60
	if !shared {
		allowed = 3 * 60
	}
	for i := range allowed {
		rec := rs[i%3].do("GET", list, admin, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d (server %d): status=%d; body=%s", i+1, i%3, rec.Code, rec.Body)
		}
		want := 59 - i
		if !shared {
			want = 59 - i/3
		}
		if limit, remaining := rateOf(t, rec); limit != 60 || remaining != want {
			t.Fatalf("request %d (server %d): limit=%d remaining=%d, want 60, %d", i+1, i%3, limit, remaining, want)
		}
	}
	for i, r := range rs {
		rec := r.do("GET", list, admin, nil)
		foundationWantError(t, rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
		if limit, remaining := rateOf(t, rec); limit != 60 || remaining != 0 {
			t.Fatalf("server %d over the limit: limit=%d remaining=%d, want 60, 0", i, limit, remaining)
		}
		if got := rec.Header().Get("Retry-After"); got != "50" {
			t.Fatalf("server %d: Retry-After=%q, want 50", i, got)
		}
	}
}

// TestRateLimitAcrossServersLeased: SDK requests of a free app (limit
// 6000, leased in batches of 60) hammered concurrently through three
// servers, each worker until its first 429. On PostgreSQL the servers
// together never allow more than the limit, and allow at least 97% of it
// (a lease held unused is at most 1% of it per server); a lease costs one
// round trip, so the claims stay about one per 60 requests. On SQLite,
// where each server counts its own (TestRateLimitAcrossServers), one
// server hammered so allows exactly 6000.
func TestRateLimitAcrossServersLeased(t *testing.T) {
	e := newEnv(t)
	app, _, _, client := e.newApp("free app", "free", 0)
	servers := 1
	if e.DB.SharedRateLimits() {
		servers = 3
	}
	rs := e.replicas(servers, minuteAt10s())
	name, status := "live", store.ContentPublished
	block, err := e.DB.CreateContent(context.Background(), app.ID, store.ContentInput{Name: &name, Status: &status})
	if err != nil {
		t.Fatal(err)
	}
	external := pathf("/v1/apps-external/%d/content/%d", app.ID, block.ID)
	const limit, perServer = 6000, 4
	var ok, other atomic.Int64
	var wg sync.WaitGroup
	for g := range servers * perServer {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := rs[g%servers].Srv
			for {
				switch serve(s, external, client) {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusTooManyRequests:
					return
				default:
					other.Add(1)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := other.Load(); n != 0 {
		t.Fatalf("%d answers neither 200 nor 429", n)
	}
	got := int(ok.Load())
	if !e.DB.SharedRateLimits() {
		if got != limit {
			t.Fatalf("SQLite: allowed %d, want %d", got, limit)
		}
		return
	}
	var claims int64
	for _, r := range rs {
		claims += r.Srv.limiter.shared.claims.Load()
	}
	t.Logf("allowed %d of %d through 3 servers, in %d claims (%.4f round trips a request)", got, limit, claims, float64(claims)/float64(got))
	if got > limit || got < limit*97/100 {
		t.Fatalf("allowed %d, want %d to %d", got, limit*97/100, limit)
	}
	// 100 leases fill the window; a claim that finds it full, one per
	// server or so, and leases cut short by the last requests, add a few.
	if claims > 130 {
		t.Fatalf("%d claims for %d requests: a round trip per lease is about 100", claims, got)
	}
}

// TestRateLimitGiveBack: a lease one server does not use goes back to the
// shared count, on Close at once and after idling on its own, so that
// another server may use it; Remaining on a server counts what the others
// hold unused as used. On SQLite each server has its own 6000: the
// second server's Remaining ignores the first's request.
func TestRateLimitGiveBack(t *testing.T) {
	e := newEnv(t)
	app, _, _, client := e.newApp("free app", "free", 0)
	now := minuteAt10s()
	a, b := e.replica(now), e.replica(now)
	name, status := "live", store.ContentPublished
	block, err := e.DB.CreateContent(context.Background(), app.ID, store.ContentInput{Name: &name, Status: &status})
	if err != nil {
		t.Fatal(err)
	}
	external := pathf("/v1/apps-external/%d/content/%d", app.ID, block.ID)
	const limit = 6000
	shared := e.DB.SharedRateLimits()
	if shared {
		// The test sweeps by hand: a lease goes back when the test says
		// the server idled, not when a loaded machine made it so.
		a.Srv.limiter.shared.every, b.Srv.limiter.shared.every = time.Hour, time.Hour
	}

	// a claims a lease of 60 and uses one.
	if _, remaining := rateOf(t, a.get200(external, client)); remaining != limit-1 {
		t.Fatalf("a's first request: remaining=%d, want %d", remaining, limit-1)
	}
	// b claims its own: Remaining counts a's 59 unused requests as used.
	want := limit - 120 + 59
	if !shared {
		want = limit - 1
	}
	if _, remaining := rateOf(t, b.get200(external, client)); remaining != want {
		t.Fatalf("b's first request: remaining=%d, want %d", remaining, want)
	}
	if !shared {
		return
	}
	// b uses everything it can: all but a's lease.
	drain := func(s *Server) int {
		n := 0
		for serve(s, external, client) == http.StatusOK {
			n++
		}
		return n
	}
	if got, want := drain(b.Srv), limit-60-1; got != want {
		t.Fatalf("b allowed %d more, want %d", got, want)
	}
	// Once a idled for idleTicks sweeps, its 59 go back but for the one it
	// keeps, and b may use them (b asks the database again after a sweep of
	// its own).
	as, bs := a.Srv.limiter.shared, b.Srv.limiter.shared
	as.tick.Add(idleTicks - 1)
	as.giveBack(false)
	bs.tick.Add(1)
	if got := drain(b.Srv); got != 0 {
		t.Fatalf("a gave back before it idled: b allowed %d", got)
	}
	as.tick.Add(1)
	as.giveBack(false)
	bs.tick.Add(1)
	if got, want := drain(b.Srv), 59-idleKeep; got != want {
		t.Fatalf("after a gave back: b allowed %d, want %d (a keeps %d)", got, want, idleKeep)
	}

	// On Close a server gives back at once what it holds.
	c := e.replica(func() time.Time { return now().Add(time.Minute) })
	d := e.replica(func() time.Time { return now().Add(time.Minute) })
	c.Srv.limiter.shared.every, d.Srv.limiter.shared.every = time.Hour, time.Hour
	c.get200(external, client)
	c.Srv.Close()
	if got := drain(d.Srv); got != limit-1 {
		t.Fatalf("after c closed: d allowed %d, want %d", got, limit-1)
	}

	// The sweeper gives back on its own what idles.
	later := func() time.Time { return now().Add(2 * time.Minute) }
	f, g := e.replica(later), e.replica(later)
	f.Srv.limiter.shared.every, g.Srv.limiter.shared.every = 10*time.Millisecond, time.Hour
	f.get200(external, client)
	// g takes all but f's lease, then f's too once f gave it back.
	got := 0
	testwait.Until(t, 10*time.Second, "f's idle lease to go back", func() bool {
		g.Srv.limiter.shared.tick.Add(1)
		got += drain(g.Srv)
		return got >= limit-1-idleKeep
	})
	if got != limit-1-idleKeep {
		t.Fatalf("after f idled: g allowed %d, want %d", got, limit-1-idleKeep)
	}
}

// get200 sends a GET that must be answered 200 and returns the answer.
func (e *testEnv) get200(path, key string) *httptest.ResponseRecorder {
	e.t.Helper()
	rec := e.do("GET", path, key, nil)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("GET %s: status=%d; body=%s", path, rec.Code, rec.Body)
	}
	return rec
}

// fallbackObserver counts the requests judged without the shared count.
type fallbackObserver struct{ n atomic.Int64 }

func (o *fallbackObserver) Request(string, string, int, time.Duration) {}
func (o *fallbackObserver) RateLimited(int64)                          {}
func (o *fallbackObserver) RateLimitFallback()                         { o.n.Add(1) }

// TestRateLimitWithoutSharedCount: when the database cannot count (on
// PostgreSQL its table is made to vanish), requests are not refused for
// it: the server counts them on its own, as on SQLite, says so once in its
// log and in the fallback measurement, and counts in the database again
// once it answers. On SQLite the count never needed the database: the same
// requests get the same answers, and nothing falls back.
func TestRateLimitWithoutSharedCount(t *testing.T) {
	target := pgtest.DB(t, filepath.Join(t.TempDir(), "test.db"))
	db, err := store.Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &testEnv{t: t, DB: db, Srv: newServer(db)}
	t.Cleanup(e.Srv.Close)
	var logs testlog.Buffer
	e.Srv.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	obs := &fallbackObserver{}
	e.Srv.Observe = obs
	e.Srv.Now = minuteAt10s()
	app, admin, _, _ := e.newApp("free app", "free", 0)
	list := pathf("/v1/apps/%d/content", app.ID)
	shared := db.SharedRateLimits()
	raw, err := store.OpenSQL(target)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	for i := 1; i <= 10; i++ {
		if _, remaining := rateOf(t, e.get200(list, admin)); remaining != 60-i {
			t.Fatalf("request %d: remaining=%d, want %d", i, remaining, 60-i)
		}
	}
	if shared {
		if _, err := raw.Exec(`ALTER TABLE rate_limit_windows RENAME TO rate_limit_windows_away`); err != nil {
			t.Fatal(err)
		}
	}
	// Counted on this server alone: 60 more on PostgreSQL, from its own
	// zero; the 50 left on SQLite.
	allowed := 50
	if shared {
		allowed = 60
	}
	for i := 1; i <= allowed; i++ {
		if _, remaining := rateOf(t, e.get200(list, admin)); remaining != allowed-i {
			t.Fatalf("request %d without the shared count: remaining=%d, want %d", i, remaining, allowed-i)
		}
	}
	foundationWantError(t, e.do("GET", list, admin, nil), http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if !shared {
		if n := obs.n.Load(); n != 0 {
			t.Fatalf("SQLite: %d requests fell back", n)
		}
		return
	}
	if n := obs.n.Load(); n != int64(allowed)+1 {
		t.Fatalf("fallback measured %d requests, want %d", n, allowed+1)
	}
	if n := strings.Count(logs.String(), "the shared count did not answer"); n != 1 {
		t.Fatalf("the failure logged %d times, want once:\n%s", n, logs.String())
	}

	// Back: within about a second a request's claim asks the database
	// again, off the request's path (the local count, full, refused that
	// request), and the shared count goes on from its 10 with that claim:
	// 11, then 12 for the first request allowed, 13 for the next.
	if _, err := raw.Exec(`ALTER TABLE rate_limit_windows_away RENAME TO rate_limit_windows`); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "the shared count to be asked again", func() bool {
		rec := e.do("GET", list, admin, nil)
		return rec.Code == http.StatusOK
	})
	if _, remaining := rateOf(t, e.get200(list, admin)); remaining != 47 {
		t.Fatalf("after the database answered again: remaining=%d, want 47", remaining)
	}
	if !strings.Contains(logs.String(), "the shared count answers again") {
		t.Fatalf("the recovery is not logged:\n%s", logs.String())
	}
}

// outageLimiter is a server whose rate limits a test judges against a
// database it can freeze (on PostgreSQL, through a pgProxy; nil on SQLite),
// with a leased app (limit 100,000) and an exact one (a free app's 60).
type outageLimiter struct {
	e             *testEnv
	proxy         *pgProxy
	target        string
	leased, exact int64
}

func newOutageLimiter(t *testing.T) *outageLimiter {
	t.Helper()
	target := storetest.DB(t, filepath.Join(t.TempDir(), "test.db"))
	o := &outageLimiter{}
	if pgtest.Selected() {
		o.proxy = newPGProxy(t, target)
		target = o.proxy.url
	}
	o.target = target
	db, err := store.OpenWith(context.Background(), target, store.Options{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	o.e = &testEnv{t: t, DB: db, Srv: newServer(db)}
	t.Cleanup(o.e.Srv.Close)
	leased, _, _, _ := o.e.newApp("leased", "enterprise", 100_000)
	exact, _, _, _ := o.e.newApp("exact", "free", 0)
	o.leased, o.exact = leased.ID, exact.ID
	return o
}

// outageBound is how long a request may wait on the shared count: claimWait
// and a margin, far below sharedTimeout.
const outageBound = 300 * time.Millisecond

// take judges one request of app by the clock reading now, which must be
// allowed within outageBound, and returns X-RateLimit-Remaining's figure.
func (o *outageLimiter) take(what string, app int64, limit int, now time.Time) (remaining int) {
	o.e.t.Helper()
	start := time.Now()
	remaining, _, ok := o.e.Srv.limiter.take(app, 0, limit, now)
	if took := time.Since(start); !ok || took > outageBound {
		if o.proxy != nil {
			o.proxy.thaw()
		}
		o.e.t.Fatalf("%s: allowed %v after %v, want allowed within %v", what, ok, took, outageBound)
	}
	return remaining
}

// shared returns the server's limiter over the shared count, sweeping
// only by hand; on SQLite, where there is none, it checks that the
// process's own count judges requests at now without waiting, and
// returns nil.
func (o *outageLimiter) shared(now time.Time) *sharedLimiter {
	o.e.t.Helper()
	if o.proxy == nil {
		if o.e.Srv.limiter.shared != nil {
			o.e.t.Fatal("SQLite: the rate limit is shared through the database")
		}
		o.take("SQLite, leased", o.leased, 100_000, now)
		o.take("SQLite, exact", o.exact, 60, now)
		o.take("SQLite, next minute", o.leased, 100_000, now.Add(time.Minute))
		return nil
	}
	l := o.e.Srv.limiter.shared
	l.every = time.Hour // the test sweeps by hand
	return l
}

// TestRateLimitDoesNotWaitOnAnOutDatabase: on PostgreSQL, with the
// database frozen, no request waits for the shared count where the
// process can judge it without: a request in the last seconds of a minute
// claimed its leased window's next minute's lease ahead (prefetch), off
// its path, so the first request of the minute is served from it, even
// for a window that no sweep saw before its minute ended; and once the
// count failed to answer, the claim that asks again is made off the
// request's path, for a leased window and for one of an exact limit
// alike. Both would otherwise wait sharedTimeout (1 s). On SQLite the
// count is the process's own and never asks the database.
func TestRateLimitDoesNotWaitOnAnOutDatabase(t *testing.T) {
	o := newOutageLimiter(t)
	e, proxy, take := o.e, o.proxy, o.take
	leased, exact := o.leased, o.exact
	// Clock readings: the last second of a minute, and the next two.
	m0 := time.Date(2030, 1, 2, 3, 4, 59, 0, time.UTC)
	m1, m2 := m0.Add(2*time.Second), m0.Add(62*time.Second)
	l := o.shared(m0)
	if l == nil {
		return
	}

	// Earlier in the minute a request claims no lease ahead.
	take("first request", leased, 100_000, m0.Add(-10*time.Second))
	w := l.window(limitKey{leased, 0})
	if got := l.claims.Load(); got != 1 {
		t.Fatalf("after a request 10 s before the minute ends the limiter sent %d claims, want 1, its own", got)
	}
	// In its last seconds the first request claims the next minute's lease,
	// off its path; the sweeper, held back, plays no part.
	take("a request of the minute's last second", leased, 100_000, m0)
	aheadLease(t, w)
	take("another request of the last second", leased, 100_000, m0)
	if got := l.claims.Load(); got != 2 {
		t.Fatalf("after the last second's requests the limiter sent %d claims, want 2: one ahead, once", got)
	}
	proxy.freeze()
	take("first request of the next minute, database frozen", leased, 100_000, m1)

	// The count failed a second ago: the request that asks again does not
	// wait for the answer.
	l.failed(errors.New("test: the database did not answer"))
	l.retryAt.Store(time.Now().UnixNano())
	take("leased window asking again, database frozen", leased, 100_000, m2)
	l.retryAt.Store(time.Now().UnixNano())
	take("exact window asking again, database frozen", exact, 60, m2)

	// Back: a claim asked again off the path brings the shared count back.
	proxy.thaw()
	testwait.Until(t, 10*time.Second, "the shared count to answer again", func() bool {
		if at := l.retryAt.Load(); at != 0 && time.Now().UnixNano() >= at {
			e.Srv.limiter.take(exact, 0, 60, m2)
		}
		return l.retryAt.Load() == 0
	})
}

// aheadLease waits for w's lease of the next minute, claimed ahead off a
// request's path, and returns what it holds.
func aheadLease(t *testing.T, w *sharedWindow) (tokens int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, "the next minute's lease claimed ahead", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		tokens = w.next.tokens
		return tokens > 0 && w.prefetching == 0
	})
	return tokens
}

// TestRateLimitWakesAnIdleWindowFromMemory: on PostgreSQL, a lease that
// goes back unused keeps one request, so that the request that wakes its
// window is answered from memory even when the database has just frozen
// and nothing has failed yet, and so does a lease claimed ahead for the
// next minute, for that minute's first request; a claim on its path would wait sharedTimeout
// (1 s). What went back is in the shared count for other processes; on
// close a lease goes back whole. On SQLite the count is the process's own
// and never asks the database.
func TestRateLimitWakesAnIdleWindowFromMemory(t *testing.T) {
	o := newOutageLimiter(t)
	m0 := time.Date(2030, 1, 2, 3, 4, 10, 0, time.UTC)
	l := o.shared(m0)
	if l == nil {
		return
	}
	raw, err := store.OpenSQL(o.target)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	used := func() (n int) {
		t.Helper()
		if err := raw.QueryRow(`SELECT used FROM rate_limit_windows WHERE app_id = $1 AND class = 0 AND minute = $2`,
			o.leased, m0.Unix()/60).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const lease = 100_000 / leaseShare

	o.take("first request", o.leased, 100_000, m0)
	l.tick.Add(idleTicks)
	l.giveBack(false)
	w := l.window(limitKey{o.leased, 0})
	if w.tokens != idleKeep {
		t.Fatalf("after the idle lease went back the window holds %d, want %d", w.tokens, idleKeep)
	}
	if got, want := used(), 1+idleKeep; got != want {
		t.Fatalf("after the idle lease went back the shared count holds %d, want %d (of %d claimed)", got, want, lease)
	}
	o.proxy.freeze()
	if got, want := o.take("the request that wakes the window, database frozen", o.leased, 100_000, m0), 100_000-2; got != want {
		t.Fatalf("remaining=%d, want %d", got, want)
	}
	o.proxy.thaw()
	if got := used(); got != 2 {
		t.Fatalf("the shared count holds %d, want 2: the request was served from what the window kept", got)
	}

	// A lease claimed ahead for the next minute keeps one request too, so
	// that the first request of that minute is answered from memory.
	idle, _, _, _ := o.e.newApp("idle", "enterprise", 100_000)
	// 2 s before a minute ends, by the request's clock: the request claims
	// the next minute's lease ahead.
	mA := time.Date(2030, 1, 2, 3, 10, 58, 0, time.UTC)
	o.take("a request of the last seconds of a minute", idle.ID, 100_000, mA)
	wa := l.window(limitKey{idle.ID, 0})
	if got := aheadLease(t, wa); got != lease {
		t.Fatalf("the next minute's lease claimed ahead holds %d, want %d", got, lease)
	}
	l.tick.Add(idleTicks)
	l.giveBack(false)
	if wa.tokens != idleKeep || wa.next.tokens != idleKeep {
		t.Fatalf("after the idle leases went back the window holds %d and %d ahead, want %d each", wa.tokens, wa.next.tokens, idleKeep)
	}
	o.proxy.freeze()
	o.take("the first request of the next minute, database frozen", idle.ID, 100_000, mA.Add(2*time.Second))
	o.proxy.thaw()

	// On close a lease goes back whole, what an idle one kept included.
	o.take("a request after the thaw", o.leased, 100_000, m0)
	l.tick.Add(idleTicks)
	l.giveBack(false)
	l.giveBack(true)
	if got := used(); got != 3 {
		t.Fatalf("after every lease went back the shared count holds %d, want 3", got)
	}
}
