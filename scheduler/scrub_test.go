package scheduler

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"service/internal/storetest"
	"service/internal/testlog"
	"service/store"
)

// TestScrubAfterErasure: the leader's scrub job settles an erasure made
// before it ran, and one made while it runs, each once.
func TestScrubAfterErasure(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.DB(t, filepath.Join(t.TempDir(), "scrub.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app, err := db.CreateApp(ctx, "scrub", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	erase := func(user string) {
		t.Helper()
		if _, err := db.LogEvent(ctx, app.ID, &store.EventInput{EventID: "view", UserID: user}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.EraseUser(ctx, app.ID, user); err != nil {
			t.Fatal(err)
		}
	}
	erase("before")
	var logs testlog.Buffer
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- (&Scrub{DB: db, Interval: 10 * time.Millisecond, Log: slog.New(slog.NewJSONHandler(&logs, nil))}).Run(runCtx)
	}()
	waitLogs := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for strings.Count(logs.String(), `"erasures":1`) < n {
			if time.Now().After(deadline) {
				t.Fatalf("scrub logs: %s", logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitLogs(1)
	erase("during")
	waitLogs(2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, err := db.ScrubErasures(ctx); err != nil || n != 0 {
		t.Fatalf("ScrubErasures after the job: %d, %v; want nothing left", n, err)
	}
}
