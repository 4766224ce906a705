package scheduler

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/storetest"
	"service/store"
)

// TestRetentionDeletesOldEvents runs the worker with a tiny interval over
// events logged at controlled times: the old ones go, the rest stay, and
// events that age past the cutoff later go on a later tick.
func TestRetentionDeletesOldEvents(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.DB(t, filepath.Join(t.TempDir(), "retention.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// The worker reads the clock on its own goroutine.
	var clock atomic.Int64
	set := func(at time.Time) { clock.Store(at.UnixMilli()) }
	db.Now = func() time.Time { return time.UnixMilli(clock.Load()).UTC() }
	app, err := db.CreateApp(ctx, "retention", "free", 0)
	if err != nil {
		t.Fatal(err)
	}

	const keep = 90 * 24 * time.Hour
	now := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	logAt := func(at time.Time, eventID string) {
		t.Helper()
		set(at)
		if _, err := db.LogEvent(ctx, app.ID, &store.EventInput{EventID: eventID, UserID: "u1"}); err != nil {
			t.Fatal(err)
		}
	}
	logAt(now.Add(-keep-24*time.Hour), "old")
	logAt(now.Add(-keep-time.Millisecond), "old")
	logAt(now.Add(-keep), "edge")             // exactly at the cutoff: kept
	logAt(now.Add(-keep+time.Hour), "ageing") // goes once the clock moves on
	logAt(now.Add(-time.Minute), "recent")
	set(now)

	events := func() map[string]int {
		t.Helper()
		list, err := db.FindEvents(ctx, app.ID, store.EventFilter{Limit: store.MaxEventsLimit})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, e := range list {
			out[e.EventID]++
		}
		return out
	}
	waitFor := func(what string, done func(map[string]int) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := events()
			if done(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: events=%v", what, got)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	r := &Retention{DB: db, Keep: keep, Interval: 10 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go func() { done <- r.Run(runCtx) }()

	waitFor("old events deleted", func(m map[string]int) bool { return m["old"] == 0 })
	if got := events(); got["edge"] != 1 || got["ageing"] != 1 || got["recent"] != 1 || len(got) != 3 {
		t.Fatalf("after the first pass events=%v, want edge, ageing and recent", got)
	}

	set(now.Add(2 * time.Hour))
	waitFor("aged events deleted", func(m map[string]int) bool { return m["ageing"] == 0 && m["edge"] == 0 })
	if got := events(); got["recent"] != 1 || len(got) != 1 {
		t.Fatalf("events=%v, want only the recent one", got)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v, want nil on cancel", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not stop after cancel")
	}
}

// TestRetentionTrimsAuditLog runs the worker over audit entries written at
// controlled times: those older than KeepAudit go, the rest stay, and
// events are untouched by it.
func TestRetentionTrimsAuditLog(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.DB(t, filepath.Join(t.TempDir(), "audit-retention.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var clock atomic.Int64
	set := func(at time.Time) { clock.Store(at.UnixMilli()) }
	db.Now = func() time.Time { return time.UnixMilli(clock.Load()).UTC() }

	const keepAudit = 365 * 24 * time.Hour
	now := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	set(now.Add(-keepAudit - time.Hour))
	old, err := db.CreateApp(ctx, "old", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	set(now.Add(-time.Hour))
	if _, err := db.CreateApp(ctx, "recent", "free", 0); err != nil {
		t.Fatal(err)
	}
	set(now)

	entries := func() []*store.AuditEntry {
		t.Helper()
		list, err := db.FindAuditLog(ctx, store.AuditFilter{Instance: true})
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	if n := len(entries()); n != 2 {
		t.Fatalf("%d entries before the pass, want 2", n)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	r := &Retention{DB: db, Keep: time.Hour, KeepAudit: keepAudit, Interval: 10 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go func() { done <- r.Run(runCtx) }()
	deadline := time.Now().Add(30 * time.Second)
	for len(entries()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("entries=%d, want the old one trimmed", len(entries()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if e := entries()[0]; e.Object.Name != "recent" {
		t.Fatalf("kept %q, want the recent entry", e.Object.Name)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The app itself stays: retention trims the log, not what it describes.
	if _, err := db.FindAppByID(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
}
