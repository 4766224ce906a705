package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"service/internal/testwait"
)

// holdWriteLock takes the database's write lock on a connection of its
// own, as another process writing would, and returns its release.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	other, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if _, err := conn.ExecContext(context.Background(), `COMMIT`); err != nil {
			t.Error(err)
		}
		conn.Close()
		other.Close()
	}
	t.Cleanup(release)
	return release
}

// TestWriterWaitsForTheWriteLockInGo: a write that meets another
// connection's write lock waits for it on a Go timer (SQLite's busy
// handler would sleep holding the scheduler thread), and goes through
// once the lock is released.
func TestWriterWaitsForTheWriteLockInGo(t *testing.T) {
	sqliteOnly(t)
	db, app, _ := mustOpenApp(t, eventsT0)
	release := holdWriteLock(t, db.path)
	done := make(chan error, 1)
	go func() {
		_, err := db.LogEvent(context.Background(), app, &EventInput{EventID: "view", SessionID: "s"})
		done <- err
	}()
	// Well under the 10 s SQLite's busy handler would first sleep through
	// on the writer, yet generous for a retry every few milliseconds.
	testwait.Until(t, 8*time.Second, "the write to retry for the lock in Go", func() bool { return db.lockWaits.Load() > 0 })
	select {
	case err := <-done:
		t.Fatalf("the write finished while another connection held the lock: %v", err)
	default:
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after the lock's release: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the write did not go through within 30 s of the lock's release")
	}
}

// TestWriterGivesUpOnALockHeldTooLong: past its wait the write fails as
// SQLite's busy timeout would have, nothing is written, and the next write
// after the release succeeds.
func TestWriterGivesUpOnALockHeldTooLong(t *testing.T) {
	sqliteOnly(t)
	db, app, _ := mustOpenApp(t, eventsT0)
	db.lockWait = 200 * time.Millisecond
	release := holdWriteLock(t, db.path)
	ctx := context.Background()
	start := time.Now()
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "lost", SessionID: "s"}); !isBusy(err) {
		t.Fatalf("write under a held lock: err = %v, want SQLITE_BUSY", err)
	}
	// The writer's own wait, not SQLite's 10 s busy timeout.
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("gave up after %v, want about the 200 ms wait", d)
	}
	release()
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "kept", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	var lost, kept int
	if err := db.read.QueryRow(`SELECT count(*) FILTER (WHERE event_id = 'lost'), count(*) FILTER (WHERE event_id = 'kept') FROM events`).Scan(&lost, &kept); err != nil {
		t.Fatal(err)
	}
	if lost != 0 || kept != 1 {
		t.Fatalf("events: lost=%d kept=%d, want 0 and 1", lost, kept)
	}
}

// TestMigrationsWaitForTheWriteLock: migrations run on a connection that
// waits for another writer rather than failing halfway, which would leave
// the schema marked dirty.
func TestMigrationsWaitForTheWriteLock(t *testing.T) {
	sqliteOnly(t)
	path := tempDBPath(t)
	db, err := OpenNoMigrate(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	release := holdWriteLock(t, path)
	done := make(chan error, 1)
	go func() { done <- db.Migrate(context.Background(), 0) }()
	// Long enough for the migration to be waiting on the lock in most
	// runs; the test holds either way.
	time.Sleep(200 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	v, dirty, err := db.Version()
	if err != nil || dirty || v == 0 {
		t.Fatalf("after migrating: version %d dirty %v err %v", v, dirty, err)
	}
}
