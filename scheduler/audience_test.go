package scheduler

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"service/internal/storetest"
	"service/store"
)

func newAudienceSchedDB(t *testing.T) (*store.DB, int64) {
	t.Helper()
	db, err := store.Open(context.Background(), storetest.DB(t, filepath.Join(t.TempDir(), "sched.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app, err := db.CreateApp(context.Background(), "sched", "pro", 0)
	if err != nil {
		t.Fatal(err)
	}
	return db, app.ID
}

// audienceSchedWait polls until cond holds, failing after a generous
// deadline; the interval under test is 50 ms.
func audienceSchedWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAudiencesRecountsOnTick(t *testing.T) {
	ctx := context.Background()
	db, app := newAudienceSchedDB(t)
	name := "Germans"
	a, err := db.CreateAudience(ctx, app, store.AudienceInput{Name: &name,
		Definition: json.RawMessage(`{"rules":[{"field":"country","operator":"equals","value":"DE"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	archivedName, archived := "old", store.AudienceArchived
	old, err := db.CreateAudience(ctx, app, store.AudienceInput{Name: &archivedName, Status: &archived,
		Definition: json.RawMessage(`{"rules":[{"field":"country","operator":"exists"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if a.LastCalculatedAt != nil {
		t.Fatalf("lastCalculatedAt=%v before any count, want null", a.LastCalculatedAt)
	}
	for _, u := range []struct{ id, country string }{{"u1", "DE"}, {"u2", "DE"}, {"u3", "FR"}} {
		if _, err := db.IdentifyUser(ctx, app, u.id, map[string]any{"country": u.country}); err != nil {
			t.Fatal(err)
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	s := &Audiences{DB: db, Interval: 50 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go func() { done <- s.Run(runCtx) }()

	var first time.Time
	audienceSchedWait(t, "the first count", func() bool {
		got, err := db.FindAudienceByID(ctx, app, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.LastCalculatedAt == nil {
			return false
		}
		if got, want := got.CustomerCount, 2; got != want {
			t.Fatalf("customerCount=%d, want %d", got, want)
		}
		first = got.LastCalculatedAt.Time
		return true
	})
	if _, err := db.IdentifyUser(ctx, app, "u4", map[string]any{"country": "DE"}); err != nil {
		t.Fatal(err)
	}
	audienceSchedWait(t, "a later count", func() bool {
		got, err := db.FindAudienceByID(ctx, app, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastCalculatedAt.After(first) && got.CustomerCount == 3
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run=%v, want nil after cancel", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	got, err := db.FindAudienceByID(ctx, app, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastCalculatedAt != nil {
		t.Fatalf("archived audience was recounted at %v", got.LastCalculatedAt)
	}
}

func TestAudiencesGoOnAfterErrors(t *testing.T) {
	db, _ := newAudienceSchedDB(t)
	db.Close() // every pass now fails
	ctx, cancel := context.WithCancel(context.Background())
	logs := &audienceSchedLog{ch: make(chan struct{}, 16)}
	s := &Audiences{DB: db, Interval: 5 * time.Millisecond, Log: slog.New(slog.NewTextHandler(logs, nil))}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	for range 2 {
		select {
		case <-logs.ch:
		case <-time.After(30 * time.Second):
			t.Fatal("no error was logged")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run=%v, want nil", err)
	}
}

type audienceSchedLog struct{ ch chan struct{} }

func (l *audienceSchedLog) Write(p []byte) (int, error) {
	select {
	case l.ch <- struct{}{}:
	default: // the test has seen enough lines
	}
	return len(p), nil
}
