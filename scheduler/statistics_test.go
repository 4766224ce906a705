package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"service/internal/pgtest"
	"service/internal/storetest"
	"service/internal/testlog"
	"service/store"
)

// TestStatisticsAnalyzesFilledTables: on PostgreSQL the job has a table
// that filled without statistics analyzed, once, and logs it; on SQLite
// it asks nothing and logs nothing. Either way it stops when told.
func TestStatisticsAnalyzesFilledTables(t *testing.T) {
	ctx := context.Background()
	target := storetest.DB(t, filepath.Join(t.TempDir(), "stats.db"))
	db, err := store.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app, err := db.CreateApp(ctx, "stats", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	if pgtest.Selected() {
		raw, err := store.OpenSQL(target)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		raw.SetMaxOpenConns(1) // the flush below is the inserting session's
		for _, q := range []struct {
			sql  string
			args []any
		}{
			// A server's autovacuum must not gather them first.
			{`ALTER TABLE events SET (autovacuum_enabled = false)`, nil},
			{`INSERT INTO events (app_id, event_id, user_id, ts) SELECT ?, 'buy', 'u-' || (g % 300), 1000 + g FROM generate_series(1, 1200) g`, []any{app.ID}},
			// Reported now rather than up to 10 s later.
			{`SELECT pg_stat_force_next_flush()`, nil},
		} {
			if _, err := raw.ExecContext(ctx, q.sql, q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
	}

	var log testlog.Buffer
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	s := &Statistics{DB: db, Interval: 20 * time.Millisecond, MinRows: 1000, Log: slog.New(slog.NewTextHandler(&log, nil))}
	go func() { done <- s.Run(runCtx) }()
	stop := func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not stop")
		}
	}

	if !pgtest.Selected() {
		time.Sleep(100 * time.Millisecond) // a few passes
		stop()
		if log.String() != "" {
			t.Fatalf("SQLite: log %q, want nothing", log.String())
		}
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "table=events") {
		if time.Now().After(deadline) {
			t.Fatalf("log %q after 30s, want events analyzed", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	names, err := db.TablesWithoutStatistics(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, "events") {
		t.Errorf("events still without statistics: %q", names)
	}
	time.Sleep(100 * time.Millisecond) // more passes: nothing more to ask
	stop()
	if n := strings.Count(log.String(), "table=events"); n != 1 {
		t.Errorf("events logged %d times, want 1: %q", n, log.String())
	}
	if strings.Contains(log.String(), "level=ERROR") {
		t.Errorf("errors logged: %q", log.String())
	}
}

// fakeStatisticsDB names the same tables at every check, and fails the
// first analysis of those in failOnce.
type fakeStatisticsDB struct {
	mu       sync.Mutex
	names    []string
	failOnce map[string]bool
	analyzed map[string]int
	checks   int
	enough   chan struct{} // closed at the fourth check
}

func (f *fakeStatisticsDB) TablesWithoutStatistics(context.Context, int64) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.checks++; f.checks == 4 {
		close(f.enough)
	}
	return f.names, nil
}

func (f *fakeStatisticsDB) AnalyzeTable(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.analyzed[name]++
	if f.failOnce[name] {
		delete(f.failOnce, name)
		return errors.New("permission denied")
	}
	return nil
}

// TestStatisticsAsksOncePerTable: a table analyzed is not asked for again
// by this process, one whose analysis failed is asked again at the next
// check; against the worker's own small interface, without a database.
func TestStatisticsAsksOncePerTable(t *testing.T) {
	f := &fakeStatisticsDB{names: []string{"events", "users"}, failOnce: map[string]bool{"users": true},
		analyzed: map[string]int{}, enough: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s := &Statistics{DB: f, Interval: time.Millisecond, Log: slog.New(slog.DiscardHandler)}
	go func() { done <- s.Run(ctx) }()
	<-f.enough
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil once ctx ends", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if got, want := f.analyzed["events"], 1; got != want {
		t.Errorf("events analyzed %d times, want %d", got, want)
	}
	if got, want := f.analyzed["users"], 2; got != want {
		t.Errorf("users analyzed %d times, want %d: once failing, once more", got, want)
	}
}
