package store

import (
	"context"
	"os"
	"testing"
	"time"

	"service/internal/testwait"
)

// awaitLeader runs AwaitLeadership in the background and delivers what it
// returns.
func awaitLeader(ctx context.Context, db *DB) <-chan *Leadership {
	ch := make(chan *Leadership, 1)
	go func() {
		l, err := db.AwaitLeadership(ctx)
		if err != nil {
			l = nil
		}
		ch <- l
	}()
	return ch
}

// TestLeadership: two handles on one database, as two processes are. One
// leads, the other does not while it does, and closing the leader hands
// over within 3 s: on SQLite through the lock file, on PostgreSQL through
// the advisory lock.
func TestLeadership(t *testing.T) {
	path := tempDBPath(t)
	a, b := mustOpenDBAt(t, path), mustOpenDBAt(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	la, err := a.AwaitLeadership(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Leading() {
		t.Fatal("a holds the leadership but does not report it")
	}
	got := awaitLeader(ctx, b)
	// Several of b's attempts go by while a leads: none may succeed.
	select {
	case <-got:
		t.Fatal("b leads while a does")
	case <-time.After(4 * leaderRetry):
	}
	if b.Leading() {
		t.Fatal("b reports leading while a does")
	}
	closed := time.Now()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("a.Close took %v", time.Since(closed).Round(time.Millisecond))
	select {
	case <-la.Context().Done():
	default:
		t.Fatal("a's leadership context outlived a.Close")
	}
	if a.Leading() {
		t.Fatal("a reports leading after Close")
	}
	select {
	case lb := <-got:
		if lb == nil {
			t.Fatal("b's AwaitLeadership failed")
		}
		took := time.Since(closed)
		if took > 3*time.Second {
			t.Fatalf("b took over %v after a closed, want within 3s", took)
		}
		t.Logf("b took over %v after a began to close", took.Round(time.Millisecond))
		defer lb.Release()
	case <-time.After(30 * time.Second):
		t.Fatal("b never took over")
	}
	if !b.Leading() {
		t.Fatal("b leads but does not report it")
	}
}

// TestLeadershipLostSession: when the leader's session ends under it (the
// server ended it, the network failed), its scheduled writes fail from
// that moment, before it noticed, so the process that takes over is the
// only one to complete a campaign: once, with one campaign.completed.
func TestLeadershipLostSession(t *testing.T) {
	e := newCampaignTestEnv(t)
	if e.db.pgEngine() == nil {
		// A SQLite file has no session to lose, but its lock file can go
		// (removed by hand, or by a tool that cleans up beside the
		// database), after which a new process would lock a new one: the
		// leader stops its work within a check, and another takes over.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		la, err := e.db.AwaitLeadership(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(e.db.path + leaderFileSuffix); err != nil {
			t.Fatal(err)
		}
		select {
		case <-la.Context().Done():
		case <-time.After(30 * time.Second):
			t.Fatal("the leader never noticed its lock file was removed")
		}
		if e.db.Leading() {
			t.Fatal("a reports leading after its lock file was removed")
		}
		la.Release()
		b := mustOpenDBAt(t, e.db.path)
		select {
		case lb := <-awaitLeader(ctx, b):
			if lb == nil {
				t.Fatal("b's AwaitLeadership failed")
			}
			lb.Release()
		case <-time.After(30 * time.Second):
			t.Fatal("b never took over")
		}
		return
	}
	b := mustOpenDBAt(t, e.db.path)
	b.Now = e.clock.Now
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ending := e.create(nil, campaignTestAt(time.Hour), "active")
	la, err := e.db.AwaitLeadership(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := awaitLeader(ctx, b)

	// The server ends the leader's session; the leader has not looked yet.
	var ended bool
	pid := int64(leaseOf(la.Context()).pid)
	if err := b.read.QueryRowContext(ctx, `SELECT pg_terminate_backend(CAST(? AS INTEGER))`, pid).Scan(&ended); err != nil || !ended {
		t.Fatalf("pg_terminate_backend=%v, %v", ended, err)
	}
	// The backend ends a moment after it was told to; from then on another
	// process could take the lock.
	testwait.Until(t, 30*time.Second, "the leader's backend to end", func() bool {
		return countRows(t, b, `SELECT COUNT(*) FROM pg_stat_activity WHERE pid = CAST(? AS INTEGER)`, pid) == 0
	})
	e.clock.Add(2 * time.Hour)
	res, err := e.db.RunSchedule(la.Context())
	if err == nil || len(res.Completed) != 0 {
		t.Fatalf("RunSchedule under a lost leadership = %+v, %v; want an error and nothing moved", res, err)
	}
	if got := e.status(ending); got != CampaignActive {
		t.Fatalf("status=%s after a deposed leader's pass, want active", got)
	}
	select {
	case <-la.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the leader never noticed its session was gone")
	}
	if e.db.Leading() {
		t.Fatal("a reports leading after losing its session")
	}
	la.Release()

	var lb *Leadership
	select {
	case lb = <-got:
		if lb == nil {
			t.Fatal("b's AwaitLeadership failed")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("b never took over")
	}
	defer lb.Release()
	res, err = b.RunSchedule(lb.Context())
	if err != nil || len(res.Completed) != 1 || res.Completed[0] != ending {
		t.Fatalf("the new leader's pass = %+v, %v; want %d completed", res, err, ending)
	}
	if n := e.count(EventCampaignCompleted, ending); n != 1 {
		t.Fatalf("%d campaign.completed, want 1", n)
	}

	// a asks again and waits: b leads.
	select {
	case <-awaitLeader(ctx, e.db):
		t.Fatal("a leads again while b does")
	case <-time.After(4 * leaderRetry):
	}
}
