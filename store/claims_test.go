package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"service/internal/testclock"
)

// Several processes on one database, each its own *DB: webhook claims,
// the per-webhook cap and the failure counts between them. On PostgreSQL
// the processes share the cap and take back a dead one's claims at once;
// on SQLite each caps its own sends and claims lapse with their lease.

// processes opens n handles on one new database, sharing one clock, with
// an app created through the first.
func processes(t *testing.T, n int) ([]*DB, int64, *testclock.Clock) {
	t.Helper()
	path := tempDBPath(t)
	clock := testclock.New(time.Now().Truncate(time.Second))
	dbs := make([]*DB, n)
	for i := range dbs {
		dbs[i] = mustOpenDBAt(t, path)
		dbs[i].Now = clock.Now
	}
	app, err := dbs[0].CreateApp(context.Background(), "test", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	return dbs, app.ID, clock
}

func claimAt(t *testing.T, db *DB, now time.Time, perHook int) []*ClaimedDelivery {
	t.Helper()
	if db.pgEngine() != nil {
		// The test decides when a process looks for dead claims.
		db.pgEngine().present.mu.Lock()
		db.pgEngine().present.reaped = time.Time{}
		db.pgEngine().present.mu.Unlock()
	}
	c, err := db.ClaimDueDeliveries(context.Background(), now, ClaimOptions{Limit: 10, PerWebhook: perHook, Lease: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClaimsOfADeadProcess(t *testing.T) {
	ctx := context.Background()
	dbs, app, clock := processes(t, 2)
	a, b := dbs[0], dbs[1]
	w, err := a.CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:1/hook"), Events: &[]string{"*"}, TimeoutSeconds: ptr(5)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.SendTestDelivery(ctx, app, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	held := claimAt(t, a, clock.Now(), 1)
	if len(held) != 1 || held[0].ID != d.ID {
		t.Fatalf("claimed %+v", held)
	}
	if pg := a.pgEngine() != nil; (held[0].Holder != 0) != pg {
		t.Fatalf("holder %d on postgres=%v", held[0].Holder, pg)
	}
	// A live process's claim is never taken, however often others look.
	for range 3 {
		if c := claimAt(t, b, clock.Now(), 1); len(c) != 0 {
			t.Fatalf("a live claim was taken: %+v", c)
		}
	}
	// The holder dies without releasing its claim.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	again := claimAt(t, b, clock.Now(), 1)
	// PostgreSQL releases the lock once the dead session's backend has
	// ended, a moment after its socket closed: the others look again at
	// least every second, within the 3 s promised.
	for deadline := time.Now().Add(3 * time.Second); b.pgEngine() != nil && len(again) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		again = claimAt(t, b, clock.Now(), 1)
	}
	if b.pgEngine() == nil {
		// SQLite: the claim lapses with its lease (timeout 5 s + 10 s).
		if len(again) != 0 {
			t.Fatalf("claimed before the lease ended: %+v", again)
		}
		clock.Add(15 * time.Second)
		again = claimAt(t, b, clock.Now(), 1)
	}
	if len(again) != 1 || again[0].ID != d.ID || again[0].Attempt != 1 {
		t.Fatalf("the dead process's delivery was not claimed again, same id, same attempt: %+v", again)
	}
	if err := b.RecordAttempt(ctx, again[0], AttemptResult{At: clock.Now(), Status: 200}, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := b.FindDeliveryByID(ctx, app, w.ID, d.ID)
	if err != nil || got.Status != DeliverySucceeded || got.AttemptCount != 1 {
		t.Fatalf("delivery=%+v, %v", got, err)
	}
}

func TestClaimCapAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dbs, app, clock := processes(t, 2)
	a, b := dbs[0], dbs[1]
	w, err := a.CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:1/hook"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := a.SendTestDelivery(ctx, app, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	first := claimAt(t, a, clock.Now(), 2)
	if len(first) != 2 {
		t.Fatalf("first process claimed %d, want its cap 2", len(first))
	}
	second := claimAt(t, b, clock.Now(), 2)
	if b.pgEngine() != nil {
		// The cap counts every process's claims: none left for b.
		if len(second) != 0 {
			t.Fatalf("second process claimed %d over the shared cap", len(second))
		}
		if err := a.RecordAttempt(ctx, first[0], AttemptResult{At: clock.Now(), Status: 200}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if second = claimAt(t, b, clock.Now(), 2); len(second) != 1 {
			t.Fatalf("after one send ended, second process claimed %d, want 1", len(second))
		}
	} else if len(second) != 2 {
		// SQLite: each process caps its own sends.
		t.Fatalf("second process claimed %d, want its own cap 2", len(second))
	}
	for _, c := range first {
		for _, o := range second {
			if c.ID == o.ID {
				t.Fatalf("delivery %d claimed by both", c.ID)
			}
		}
	}
}

// Concurrent claims by several processes never hand one delivery to two,
// and, on PostgreSQL, never more than the cap at once.
func TestClaimsConcurrentProcesses(t *testing.T) {
	ctx := context.Background()
	dbs, app, clock := processes(t, 3)
	w, err := dbs[0].CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:1/hook"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 12 {
		if _, err := dbs[0].SendTestDelivery(ctx, app, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for _, db := range dbs {
		wg.Go(func() {
			c, err := db.ClaimDueDeliveries(ctx, clock.Now(), ClaimOptions{Limit: 10, PerWebhook: 3, Lease: 10 * time.Second})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			for _, d := range c {
				seen[d.ID]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	total := 0
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %d claimed %d times", id, n)
		}
		total += n
	}
	// On SQLite each process caps its own: a process whose candidates
	// another claimed first gets fewer this time, never more.
	if want := 3; dbs[0].pgEngine() != nil && total != want {
		t.Fatalf("claimed %d at once, want the shared cap %d", total, want)
	} else if dbs[0].pgEngine() == nil && (total < 3 || total > 9) {
		t.Fatalf("claimed %d at once, want 3 to 9 (3 per process)", total)
	}
}

func TestRecordAttemptsAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dbs, app, clock := processes(t, 2)
	w, err := dbs[0].CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:1/hook"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	for range WebhookFailureThreshold {
		if _, err := dbs[0].SendTestDelivery(ctx, app, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Each process holds half, as the shared cap allows.
	opts := ClaimOptions{Limit: WebhookFailureThreshold / 2, PerWebhook: WebhookFailureThreshold, Lease: 10 * time.Second}
	claims := make([][]*ClaimedDelivery, 2)
	for i, db := range dbs {
		if claims[i], err = db.ClaimDueDeliveries(ctx, clock.Now(), opts); err != nil || len(claims[i]) != WebhookFailureThreshold/2 {
			t.Fatalf("process %d claimed %d, %v", i, len(claims[i]), err)
		}
	}
	// Both record their failures at the same time, one at a time each: every
	// failure counts, and the webhook fails once the run reaches the
	// threshold, whichever process records the last one.
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Go(func() {
			for _, c := range claims[i] {
				if err := db.RecordAttempt(ctx, c, AttemptResult{At: clock.Now(), Status: 500}, time.Minute); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := dbs[1].FindWebhookByID(ctx, app, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalFailures != WebhookFailureThreshold || got.ConsecutiveFailures != WebhookFailureThreshold || got.Status != WebhookFailed {
		t.Fatalf("webhook after %d failures on two processes: status %s, consecutive %d, total %d",
			WebhookFailureThreshold, got.Status, got.ConsecutiveFailures, got.TotalFailures)
	}
}

// A run of failures that reaches the threshold fails the webhook even when
// a success recorded in the same call ends it.
func TestRecordAttemptsRunWithinOneCall(t *testing.T) {
	ctx := context.Background()
	dbs, app, clock := processes(t, 1)
	db := dbs[0]
	w, err := db.CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:1/hook"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	n := WebhookFailureThreshold + 2
	for range n {
		if _, err := db.SendTestDelivery(ctx, app, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	c, err := db.ClaimDueDeliveries(ctx, clock.Now(), ClaimOptions{Limit: n, PerWebhook: n, Lease: 10 * time.Second})
	if err != nil || len(c) != n {
		t.Fatalf("claimed %d, %v", len(c), err)
	}
	// success, threshold failures, success
	var list []AttemptOutcome
	for i, d := range c {
		st := 500
		if i == 0 || i == n-1 {
			st = 200
		}
		list = append(list, AttemptOutcome{d, AttemptResult{At: clock.Now(), Status: st}})
	}
	if err := db.RecordAttempts(ctx, list, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindWebhookByID(ctx, app, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != WebhookFailed || got.ConsecutiveFailures != 0 || got.TotalFailures != int64(WebhookFailureThreshold) || got.TotalSuccesses != 2 {
		t.Fatalf("webhook=%+v", got)
	}
}

// A process that loses its presence session (the server ended it, the
// network failed) ends its claims' context, so their sends stop, and the
// others take the claims back; its next claim is made under a new key.
func TestClaimsWhenPresenceIsLost(t *testing.T) {
	ctx := context.Background()
	dbs, app, clock := processes(t, 2)
	a, b := dbs[0], dbs[1]
	w, err := a.CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:1/hook"), Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := a.SendTestDelivery(ctx, app, w.ID); err != nil {
			t.Fatal(err)
		}
	}
	held := claimAt(t, a, clock.Now(), 1)
	if len(held) != 1 {
		t.Fatalf("claimed %d", len(held))
	}
	if a.pgEngine() == nil {
		// SQLite: nothing but the lease ends a claim.
		if held[0].Live.Done() != nil {
			t.Fatal("a SQLite claim's context can end")
		}
		return
	}
	a.pgEngine().present.mu.Lock()
	pid := a.pgEngine().present.conn.PgConn().PID()
	a.pgEngine().present.mu.Unlock()
	if _, err := b.read.ExecContext(ctx, `SELECT pg_terminate_backend(?)`, int64(pid)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held[0].Live.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the claim's context outlived its presence session by 5 s")
	}
	taken := claimAt(t, b, clock.Now(), 1)
	if len(taken) != 1 || taken[0].ID != held[0].ID {
		t.Fatalf("the lost process's claim was not taken back: %+v", taken)
	}
	// The old claim's attempt is kept, but it changes nothing of the
	// delivery, which the new claim settles.
	if err := a.RecordAttempt(ctx, held[0], AttemptResult{At: clock.Now(), Status: 200}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := a.FindDeliveryByID(ctx, app, w.ID, held[0].ID); err != nil || got.Status != DeliveryPending {
		t.Fatalf("the old claim settled the delivery: %+v, %v", got, err)
	}
	if err := b.RecordAttempt(ctx, taken[0], AttemptResult{At: clock.Now(), Status: 200}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := a.FindDeliveryByID(ctx, app, w.ID, held[0].ID); err != nil || got.Status != DeliverySucceeded {
		t.Fatalf("the new claim did not settle the delivery: %+v, %v", got, err)
	}
	// a claims again under a new presence.
	next := claimAt(t, a, clock.Now(), 2)
	if len(next) != 1 || next[0].Holder == held[0].Holder || next[0].Live.Err() != nil {
		t.Fatalf("claim after the loss: %+v", next)
	}
}
