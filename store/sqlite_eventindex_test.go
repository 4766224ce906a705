package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
	"unsafe"
)

// stopIdleDrain stops db's idle indexing, so a test can hold the indexer
// in a state of its choosing.
func stopIdleDrain(tb testing.TB, db *DB) {
	tb.Helper()
	if db.ix.stop == nil {
		tb.Fatal("no idle drain running")
	}
	close(db.ix.stop)
	<-db.ix.done
	db.ix.stop = nil
}

// mustLogUserEvents logs n events of eventID per user, interleaved, in one
// batch request per 100 events.
func mustLogUserEvents(tb testing.TB, db *DB, app int64, eventID string, counts map[string]int) {
	tb.Helper()
	mustLogKeyEvents(tb, db, app, eventID, counts, false)
}

// mustLogSessionEvents is mustLogUserEvents for sessions: events with a
// sessionId and no userId.
func mustLogSessionEvents(tb testing.TB, db *DB, app int64, eventID string, counts map[string]int) {
	tb.Helper()
	mustLogKeyEvents(tb, db, app, eventID, counts, true)
}

func mustLogKeyEvents(tb testing.TB, db *DB, app int64, eventID string, counts map[string]int, session bool) {
	tb.Helper()
	var ins []*EventInput
	for left := true; left; {
		left = false
		for user, n := range counts {
			if n > 0 {
				in := &EventInput{EventID: eventID, UserID: user}
				if session {
					in.UserID, in.SessionID = "", user
				}
				ins = append(ins, in)
				counts[user] = n - 1
				left = true
			}
		}
	}
	for len(ins) > 0 {
		k := min(len(ins), MaxEventBatch)
		if _, err := db.LogEvents(context.Background(), app, ins[:k]); err != nil {
			tb.Fatal(err)
		}
		ins = ins[k:]
	}
}

// writerInAudience is userInAudience in a write transaction that rolls
// back: committing would move the indexer on.
func writerInAudience(tb testing.TB, db *DB, appID, audienceID int64, userID string) bool {
	tb.Helper()
	var in bool
	rollback := errors.New("rollback")
	err := db.withTx(context.Background(), func(tx *Tx) error {
		var err error
		if in, err = tx.userInAudience(appID, audienceID, userID); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		tb.Fatal(err)
	}
	return in
}

func mustScalar(tb testing.TB, db *DB, q string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := db.write.QueryRow(q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestEventIndexLookups checks every lookup of a user's events, on the
// writer and on readers, while the events are only in memory, while a
// generation is half indexed, and once all are indexed: each must count
// every event exactly once.
func TestEventIndexLookups(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	want := map[string]int{"u-a": 50, "u-b": 30, "u-c": 20}
	exactly := map[string]*Audience{}
	for user, n := range want {
		mustTouchUser(t, db, app, user, nil)
		exactly[user] = mustCreateAudience(t, db, app, fmt.Sprintf(
			`{"rules":[{"ruleType":"event","eventId":"purchase","operator":"performed_count","count":%d,"comparison":"exactly"}]}`, n))
	}
	counts := map[string]int{}
	for u, n := range want {
		counts[u] = n
	}
	mustLogUserEvents(t, db, app, "purchase", counts)
	maxID := mustScalar(t, db, `SELECT MAX(id) FROM events`)

	check := func(t *testing.T) {
		t.Helper()
		for user, n := range want {
			evs, err := db.FindEvents(ctx, app, EventFilter{UserID: user, Limit: MaxEventsLimit})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != n {
				t.Errorf("FindEvents %s: %d events, want %d", user, len(evs), n)
			}
			evs, err = db.FindEvents(ctx, app, EventFilter{UserID: user, EventID: "purchase", Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 7 || evs[0].ID < evs[6].ID {
				t.Errorf("FindEvents %s purchase limit 7: %d events, newest first %v", user, len(evs), evs[0].ID > evs[6].ID)
			}
			for other, a := range exactly {
				match := other == user
				if got := writerInAudience(t, db, app, a.ID, user); got != match {
					t.Errorf("writer: %s in %q: %v, want %v", user, other, got, match)
				}
				got, err := db.UserInAudience(ctx, app, a.ID, user)
				if err != nil {
					t.Fatal(err)
				}
				if got != match {
					t.Errorf("reader: %s in %q: %v, want %v", user, other, got, match)
				}
				ex, err := db.ExplainUserInAudience(ctx, app, a.ID, user)
				if err != nil {
					t.Fatal(err)
				}
				if ex.Match != match {
					t.Errorf("explain: %s in %q: %v, want %v", user, other, ex.Match, match)
				}
			}
			members, _, err := db.FindAudienceMembers(ctx, app, exactly[user].ID, ListOptions{Page: 1, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(members) != 1 || members[0].UserID != user {
				t.Errorf("members of %q: %v, want only %s", user, members, user)
			}
		}
	}
	indexed := func() int64 {
		return mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, app)
	}
	upto := func() int64 { return mustScalar(t, db, `SELECT upto FROM event_users_upto`) }
	commitNothing := func() {
		if err := db.withTx(ctx, func(*Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("InMemory", func(t *testing.T) {
		if n := indexed(); n != 0 {
			t.Fatalf("%d events indexed with their own commit, want 0", n)
		}
		if upto() >= maxID-99 {
			t.Fatalf("upto %d covers the new events (max id %d)", upto(), maxID)
		}
		check(t)
	})
	t.Run("HalfIndexed", func(t *testing.T) {
		commitNothing() // forms the generation and indexes its first chunk
		if n := indexed(); n != minChunk {
			t.Fatalf("%d events indexed, want one chunk of %d", n, minChunk)
		}
		check(t)
	})
	t.Run("Indexed", func(t *testing.T) {
		commitNothing()
		if n := indexed(); n != 100 {
			t.Fatalf("%d events indexed, want 100", n)
		}
		if upto() != maxID {
			t.Fatalf("upto %d, want the last event's id %d", upto(), maxID)
		}
		if db.unindexed() {
			t.Fatal("the indexer still holds events")
		}
		check(t)
	})
	t.Run("NewEventsOnTop", func(t *testing.T) {
		for u := range want {
			want[u]++
			counts[u] = 1
		}
		mustLogUserEvents(t, db, app, "purchase", counts)
		for u, n := range want {
			exactly[u] = mustCreateAudience(t, db, app, fmt.Sprintf(
				`{"rules":[{"ruleType":"event","eventId":"purchase","operator":"performed_count","count":%d,"comparison":"exactly"}]}`, n))
		}
		check(t)
	})
}

// TestEventIndexRecoversOnOpen checks that events a crash left out of the
// index, as the memory is lost, are indexed when the database opens.
func TestEventIndexRecoversOnOpen(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := tempDBPath(t)
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	stopIdleDrain(t, db)
	app, err := db.CreateApp(ctx, "test", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustLogUserEvents(t, db, app.ID, "signup", map[string]int{"u-1": 3, "u-2": 4})
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run)`); n != 0 {
		t.Fatalf("%d events indexed before the restart, want 0", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpenDBAt(t, path)
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, app.ID); n != 7 {
		t.Fatalf("%d events indexed after the restart, want 7", n)
	}
	if got, want := mustScalar(t, db, `SELECT upto FROM event_users_upto`), mustScalar(t, db, `SELECT MAX(id) FROM events`); got != want {
		t.Fatalf("upto %d, want %d", got, want)
	}
	evs, err := db.FindEvents(ctx, app.ID, EventFilter{UserID: "u-2", Limit: 10})
	if err != nil || len(evs) != 4 {
		t.Fatalf("FindEvents u-2 after the restart: %d events, %v; want 4", len(evs), err)
	}
}

// TestEventIndexIdleDrain checks that events logged just before writes
// stop are indexed without any further write.
func TestEventIndexIdleDrain(t *testing.T) {
	sqliteOnly(t)
	db, app, _ := mustOpenApp(t, eventsT0)
	mustLogUserEvents(t, db, app, "view", map[string]int{"u-1": 40, "u-2": 40})
	maxID := mustScalar(t, db, `SELECT MAX(id) FROM events`)
	deadline := time.Now().Add(10 * time.Second)
	for mustScalar(t, db, `SELECT upto FROM event_users_upto`) != maxID {
		if time.Now().After(deadline) {
			t.Fatalf("events not indexed 10 s after the last write: %d of 80",
				mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run)`))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run)`); n != 80 {
		t.Fatalf("%d events indexed, want 80", n)
	}
}

// TestEventIndexDeletes checks that deleting events, by retention or with
// their app, deletes their index rows and forgets them in memory.
func TestEventIndexDeletes(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	mustLogUserEvents(t, db, app, "old", map[string]int{"u-1": 5, "u-2": 5})
	mustLogSessionEvents(t, db, app, "old", map[string]int{"s-1": 4})
	clock.Add(48 * time.Hour)
	mustLogUserEvents(t, db, app, "new", map[string]int{"u-1": 2})
	mustLogSessionEvents(t, db, app, "new", map[string]int{"s-1": 1})
	if err := db.indexAll(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := db.DeleteEventsBefore(ctx, clock.Now().Add(-24*time.Hour)); err != nil || n != 14 {
		t.Fatalf("retention deleted %d, %v; want 14", n, err)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, app); n != 2 {
		t.Fatalf("%d index rows after retention, want the 2 kept events'", n)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, -app); n != 1 {
		t.Fatalf("%d index rows of sessions after retention, want the kept event's", n)
	}

	// Events in memory when their app goes are forgotten with it.
	mustLogUserEvents(t, db, app, "new", map[string]int{"u-1": 3, "u-3": 3})
	if _, err := db.DeleteApp(ctx, app, true); err != nil {
		t.Fatal(err)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id IN (?, ?)`, app, -app); n != 0 {
		t.Fatalf("%d index rows of a deleted app", n)
	}
	db.ix.mu.Lock()
	held := db.ix.pendingN + len(db.ix.gen) - db.ix.pos
	db.ix.mu.Unlock()
	if held != 0 {
		t.Fatalf("the indexer holds %d events of a deleted app", held)
	}
}

// generationDue makes the next commit form a generation of what is
// pending, as a second's wait would; with false, the next commits leave
// what they log pending, however slowly the test runs.
func generationDue(db *DB, due bool) {
	db.ix.mu.Lock()
	db.ix.formed = time.Time{}
	if !due {
		db.ix.formed = time.Now().Add(time.Hour)
	}
	db.ix.mu.Unlock()
}

// mustHaveNoOrphans fails when event_users holds a row whose event is gone.
func mustHaveNoOrphans(tb testing.TB, db *DB) {
	tb.Helper()
	if n := mustScalar(tb, db, `SELECT COUNT(*) FROM event_users u LEFT JOIN json_each(u.run) j WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = coalesce(j.value->>1, u.id))`); n != 0 {
		tb.Fatalf("event_users holds %d rows of deleted events", n)
	}
}

// TestEventIndexDeletesUnindexed deletes events that are still only in the
// indexer's memory, which writes index rows from memory: the transaction
// that deletes them, and every later one, must not index them.
func TestEventIndexDeletesUnindexed(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// sameTx lets the retention transaction itself index the
		// generation holding the deleted events.
		sameTx bool
		// app deletes the app instead of running retention.
		app bool
	}{
		{"retention, by the deleting transaction", true, false},
		{"retention, by a later transaction", false, false},
		{"app deleted, by the deleting transaction", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, app, clock := mustOpenApp(t, eventsT0)
			stopIdleDrain(t, db)
			generationDue(db, false)
			mustLogUserEvents(t, db, app, "old", map[string]int{"u-1": 5, "u-2": 5})
			mustLogSessionEvents(t, db, app, "old", map[string]int{"s-1": 4})
			clock.Add(48 * time.Hour)
			mustLogUserEvents(t, db, app, "new", map[string]int{"u-1": 2})
			mustLogSessionEvents(t, db, app, "new", map[string]int{"s-1": 1})
			if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run)`); n != 0 {
				t.Fatalf("%d events indexed before retention, want them all in memory", n)
			}
			generationDue(db, tc.sameTx)
			if tc.app {
				if _, err := db.DeleteApp(ctx, app, true); err != nil {
					t.Fatal(err)
				}
				mustHaveNoOrphans(t, db)
				return
			}
			if n, err := db.DeleteEventsBefore(ctx, clock.Now().Add(-24*time.Hour)); err != nil || n != 14 {
				t.Fatalf("retention deleted %d, %v; want 14", n, err)
			}
			if tc.sameTx && mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run)`) == 0 {
				t.Fatal("the retention transaction indexed nothing: the case is not exercised")
			}
			generationDue(db, true)
			mustLogUserEvents(t, db, app, "new", map[string]int{"u-3": 1})
			if err := db.indexAll(ctx); err != nil {
				t.Fatal(err)
			}
			mustHaveNoOrphans(t, db)
			if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, app); n != 3 {
				t.Fatalf("%d index rows, want the 3 kept events'", n)
			}
			if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, -app); n != 1 {
				t.Fatalf("%d index rows of sessions, want the kept event's", n)
			}
			evs, err := db.FindEvents(ctx, app, EventFilter{UserID: "u-1", Limit: 10})
			if err != nil || len(evs) != 2 {
				t.Fatalf("FindEvents u-1: %d events, %v; want the 2 kept", len(evs), err)
			}
		})
	}
}

// TestEventIndexForeignDelete deletes an app through a second handle on the
// file, as `service apps delete` does beside a running server, while the
// first still holds the app's events in memory: the first must not index
// them, not even in the chunks before its generation ends.
func TestEventIndexForeignDelete(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := tempDBPath(t)
	db1 := mustOpenDBAt(t, path)
	stopIdleDrain(t, db1)
	gone, err := db1.CreateApp(ctx, "gone", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := db1.CreateApp(ctx, "kept", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	// More rows than one commit's chunk, so the generation ends in a
	// later commit than the first chunk.
	mustLogUserEvents(t, db1, gone.ID, "view", map[string]int{"u-1": 150, "u-2": 150})

	db2 := mustOpenDBAt(t, path)
	stopIdleDrain(t, db2)
	if _, err := db2.DeleteApp(ctx, gone.ID, true); err != nil {
		t.Fatal(err)
	}

	generationDue(db1, true)
	mustLogUserEvents(t, db1, kept.ID, "view", map[string]int{"a-1": 1})
	db1.ix.mu.Lock()
	left := len(db1.ix.gen) - db1.ix.pos
	db1.ix.mu.Unlock()
	if left == 0 {
		t.Fatal("the generation ended in one commit: the case is not exercised")
	}
	mustHaveNoOrphans(t, db1)
	if n := mustScalar(t, db1, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, gone.ID); n != 0 {
		t.Fatalf("%d index rows of the app deleted by the other handle", n)
	}
	if err := db1.indexAll(ctx); err != nil {
		t.Fatal(err)
	}
	mustHaveNoOrphans(t, db1)
	if n := mustScalar(t, db1, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, kept.ID); n != 1 {
		t.Fatalf("%d index rows of the kept app, want 1", n)
	}
}

// TestEventIndexMigration checks that the migration indexes the events an
// older database holds, and that down restores the index it replaced.
func TestEventIndexMigration(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	mustLogUserEvents(t, db, app, "view", map[string]int{"u-1": 6, "u-2": 9})
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", SessionID: "s-1"}); err != nil {
		t.Fatal(err)
	}
	// Down past 0009 (runs) and 0008 (event_users).
	mustMigrateDownTo(t, db, 7)
	if tableExists(t, db, "event_users") {
		t.Fatal("down left event_users")
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'events_app_user_event_ts'`); n != 1 {
		t.Fatal("down did not restore events_app_user_event_ts")
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, app); n != 15 {
		t.Fatalf("%d events indexed by user by the migrations, want the 15 with a user", n)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users WHERE app_id = ? AND user_id = 's-1'`, -app); n != 1 {
		t.Fatalf("%d events indexed by session by the migrations, want s-1's one", n)
	}
	if got, want := mustScalar(t, db, `SELECT upto FROM event_users_upto`), mustScalar(t, db, `SELECT MAX(id) FROM events`); got != want {
		t.Fatalf("upto %d, want %d", got, want)
	}
}

// TestEventIndexTwoProcesses checks two handles on one file, as a second
// server or the CLI would have: events one of them logged and never
// indexed (it may have crashed) are indexed by the other before it moves
// upto past them, and counted once by both.
func TestEventIndexTwoProcesses(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := tempDBPath(t)
	db1, db2 := mustOpenDBAt(t, path), mustOpenDBAt(t, path)
	stopIdleDrain(t, db1)
	stopIdleDrain(t, db2)
	app, err := db1.CreateApp(ctx, "test", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustTouchUser(t, db2, app.ID, "u-2", nil)
	five := mustCreateAudience(t, db1, app.ID, `{"rules":[{"ruleType":"event","eventId":"buy","operator":"performed_count","count":5,"comparison":"exactly"}]}`)
	eight := mustCreateAudience(t, db1, app.ID, `{"rules":[{"ruleType":"event","eventId":"buy","operator":"performed_count","count":8,"comparison":"exactly"}]}`)

	mustLogUserEvents(t, db2, app.ID, "buy", map[string]int{"u-2": 5})
	mustLogSessionEvents(t, db2, app.ID, "buy", map[string]int{"s-2": 4})
	mustLogUserEvents(t, db1, app.ID, "buy", map[string]int{"u-1": 10})
	// db1's next commit forms its generation and completes it.
	if err := db1.withTx(ctx, func(*Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := mustScalar(t, db1, `SELECT upto FROM event_users_upto`), mustScalar(t, db1, `SELECT MAX(id) FROM events`); got != want {
		t.Fatalf("upto %d, want %d", got, want)
	}
	if n := mustScalar(t, db1, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE user_id = 'u-2'`); n != 5 {
		t.Fatalf("%d of the other handle's 5 events indexed", n)
	}
	if n := mustScalar(t, db1, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ? AND user_id = 's-2'`, -app.ID); n != 4 {
		t.Fatalf("%d of the other handle's 4 session events indexed", n)
	}
	for name, db := range map[string]*DB{"db1": db1, "db2": db2} {
		if !writerInAudience(t, db, app.ID, five.ID, "u-2") {
			t.Errorf("%s writer: u-2 does not have exactly 5 events", name)
		}
		if ok, err := db.UserInAudience(ctx, app.ID, five.ID, "u-2"); err != nil || !ok {
			t.Errorf("%s reader: u-2 has exactly 5 events: %v, %v", name, ok, err)
		}
	}

	// With nothing of its own to index, db1's idle drain indexes what the
	// other handle left.
	mustLogUserEvents(t, db2, app.ID, "buy", map[string]int{"u-2": 3})
	if err := db1.withTx(ctx, func(tx *Tx) error { tx.drain = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if n := mustScalar(t, db1, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE user_id = 'u-2'`); n != 8 {
		t.Fatalf("%d of the other handle's 8 events indexed", n)
	}
	for name, db := range map[string]*DB{"db1": db1, "db2": db2} {
		if !writerInAudience(t, db, app.ID, eight.ID, "u-2") {
			t.Errorf("%s writer: u-2 does not have exactly 8 events", name)
		}
	}
}

// TestEventIndexInternsEventIDs: pending events of one event id share one
// string, not each request's copy (every copy is a heap object the
// garbage collector marks), and the interned ids stay bounded.
func TestEventIndexInternsEventIDs(t *testing.T) {
	sqliteOnly(t)
	var ix eventIndexer
	staged := make([]indexRow, 0, 6)
	for i := range 6 {
		// A distinct allocation of the same text each time, as decoding
		// a request body gives.
		id := string([]byte("purchase"))
		staged = append(staged, indexRow{userRef{1, fmt.Sprint("u-", i%2)}, tailEvent{id, int64(i), int64(i + 1)}})
	}
	ix.applyIndex(staged, 0, true, nil)
	var first *byte
	n := 0
	for _, evs := range ix.pending {
		for _, e := range evs {
			n++
			if e.eventID != "purchase" {
				t.Fatalf("event id %q; want purchase", e.eventID)
			}
			if p := unsafe.StringData(e.eventID); first == nil {
				first = p
			} else if p != first {
				t.Fatal("two pending events of one event id hold separate strings")
			}
		}
	}
	if n != 6 || ix.pendingN != 6 {
		t.Fatalf("%d pending events (pendingN %d); want 6", n, ix.pendingN)
	}
	for i := range 3 * maxNames {
		ix.intern(fmt.Sprint("e-", i))
		if len(ix.names) > maxNames {
			t.Fatalf("%d interned event ids; the bound is %d", len(ix.names), maxNames)
		}
	}
}

// TestSessionEventIndexMigration: migration 24 indexes by session the
// events that sessions logged alone, and its trigger mends a session's run
// when one of its events is deleted; down gives back events_app_session.
func TestSessionEventIndexMigration(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	mustLogSessionEvents(t, db, app, "view", map[string]int{"s-1": 3, "s-2": 2})
	mustLogUserEvents(t, db, app, "view", map[string]int{"u-1": 2})
	indexGeneration(t, db)
	mustMigrateDownTo(t, db, 23)
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users WHERE app_id < 0`); n != 0 {
		t.Fatalf("down left %d rows of sessions' events", n)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'events_app_session'`); n != 1 {
		t.Fatal("down did not restore events_app_session")
	}
	// An event logged at version 23 after the last generation, above upto,
	// is indexed as the database opens (indexAll), as after a crash.
	if _, err := db.write.ExecContext(ctx, `INSERT INTO events (app_id, event_id, session_id, ts) VALUES (?, 'view', 's-1', ?)`, app, ms(eventsT0)); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, -app); n != 5 {
		t.Fatalf("%d events indexed by session by the migration, want the 5 up to upto", n)
	}
	if err := db.indexAll(ctx); err != nil {
		t.Fatal(err)
	}
	mustIndexExactly(t, db)
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ? AND user_id = 's-1'`, -app); n != 4 {
		t.Fatalf("%d of s-1's 4 events indexed", n)
	}
	if _, err := db.write.ExecContext(ctx, `DELETE FROM events WHERE id = (SELECT min(id) FROM events WHERE session_id = 's-1')`); err != nil {
		t.Fatal(err)
	}
	mustIndexExactly(t, db)
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ? AND user_id = 's-1'`, -app); n != 3 {
		t.Fatalf("%d of s-1's 3 events left indexed after a delete", n)
	}
}
