package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestRunCodec(t *testing.T) {
	sqliteOnly(t)
	rows := []indexRow{{tailEvent: tailEvent{ts: 1893456000000, id: 7}}, {tailEvent: tailEvent{ts: 1893456000001, id: 12}}, {tailEvent: tailEvent{ts: -5, id: 0}}}
	text := appendRun(nil, rows)
	if string(text) != `[[1893456000000,7],[1893456000001,12],[-5,0]]` {
		t.Fatalf("appendRun: %s", text)
	}
	var got [][2]int64
	if err := eachRunEvent(text, func(ts, id int64) { got = append(got, [2]int64{ts, id}) }); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int64{{1893456000000, 7}, {1893456000001, 12}, {-5, 0}}; !slices.Equal(got, want) {
		t.Fatalf("eachRunEvent: %v, want %v", got, want)
	}
	for _, bad := range []string{``, `[`, `[[1,2]`, `[[1,2],]`, `[[1,2][3,4]]`, `[[1]]`, `[[1,2,3]]`, `[[a,2]]`, `[[1,2]],`, `[[12345678901234567890,1]]`, `[[1, 2]]`, `[[-,1]]`} {
		if err := eachRunEvent([]byte(bad), func(int64, int64) {}); err == nil {
			t.Errorf("eachRunEvent(%q) accepted", bad)
		}
	}
	if err := eachRunEvent([]byte(`[]`), func(int64, int64) { t.Error("an event in []") }); err != nil {
		t.Errorf("eachRunEvent([]): %v", err)
	}
}

// mustIndexExactly fails unless every event with a user or a session, up
// to upto, is in event_users exactly once with its key (a session's under
// its app's id negated), event id and time, and every run is keyed by its
// last event.
func mustIndexExactly(tb testing.TB, db *DB) {
	tb.Helper()
	mustHaveNoOrphans(tb, db)
	const expanded = `SELECT u.app_id, u.user_id, u.event_id, coalesce(j.value->>0, u.ts) AS ts, coalesce(j.value->>1, u.id) AS id
		FROM event_users AS u LEFT JOIN json_each(u.run) AS j`
	if n := mustScalar(tb, db, `SELECT COUNT(*) - COUNT(DISTINCT id) FROM (`+expanded+`)`); n != 0 {
		tb.Fatalf("event_users holds %d events twice", n)
	}
	if n := mustScalar(tb, db, `SELECT COUNT(*) FROM events AS e
		WHERE coalesce(e.user_id, e.session_id) IS NOT NULL AND e.id <= (SELECT upto FROM event_users_upto)
		AND NOT EXISTS (SELECT 1 FROM (`+expanded+`) AS x
			WHERE x.id = e.id AND x.app_id = CASE WHEN e.user_id IS NULL THEN -e.app_id ELSE e.app_id END
				AND x.user_id = coalesce(e.user_id, e.session_id) AND x.event_id = e.event_id AND x.ts = e.ts)`); n != 0 {
		tb.Fatalf("%d events up to upto are not in event_users as they are", n)
	}
	if n := mustScalar(tb, db, `SELECT COUNT(*) FROM event_users WHERE run IS NOT NULL
		AND (json_array_length(run) < 2 OR json_array_length(run) > ? OR run->'$[#-1]'->>0 <> ts OR run->'$[#-1]'->>1 <> id)`, maxRun); n != 0 {
		tb.Fatalf("%d runs are not keyed by their last event, or hold fewer than 2 or more than %d", n, maxRun)
	}
}

// indexGeneration forms a generation of what is pending and indexes all of
// it, as the commits of the next second would.
func indexGeneration(tb testing.TB, db *DB) {
	tb.Helper()
	generationDue(db, true)
	for db.unindexed() {
		if err := db.withTx(context.Background(), func(*Tx) error { return nil }); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestEventIndexRuns checks that a user's repeated events share rows of
// event_users, and that every lookup still counts each event once,
// including a time window that starts inside a run.
func TestEventIndexRuns(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	for _, u := range []string{"u-1", "u-2"} {
		mustTouchUser(t, db, app, u, nil)
	}
	generationDue(db, false)
	mustLogUserEvents(t, db, app, "buy", map[string]int{"u-1": 70, "u-2": 1})
	clock.Add(48 * time.Hour)
	// One generation holds both days' events: u-1's 75 make runs that
	// start before the day's window and end inside it.
	mustLogUserEvents(t, db, app, "buy", map[string]int{"u-1": 5})
	mustLogUserEvents(t, db, app, "view", map[string]int{"u-1": 1})
	indexGeneration(t, db)
	mustIndexExactly(t, db)
	if rows, events := mustScalar(t, db, `SELECT COUNT(*) FROM event_users`), mustScalar(t, db, `SELECT COUNT(*) FROM events`); rows >= events/4 {
		t.Fatalf("%d rows of event_users for %d events: runs were not made", rows, events)
	}

	for _, tc := range []struct {
		user, rule string
	}{
		{"u-1", `"operator":"performed_count","count":75,"comparison":"exactly"`},
		{"u-1", `"operator":"performed_count","count":5,"comparison":"exactly","timeWindow":{"value":1,"unit":"days"}`},
		{"u-2", `"operator":"performed_count","count":1,"comparison":"exactly"`},
		{"u-2", `"operator":"not_performed_within","timeWindow":{"value":1,"unit":"days"}`},
	} {
		a := mustCreateAudience(t, db, app, `{"rules":[{"ruleType":"event","eventId":"buy",`+tc.rule+`}]}`)
		for _, u := range []string{"u-1", "u-2"} {
			want := u == tc.user
			if got := writerInAudience(t, db, app, a.ID, u); got != want {
				t.Errorf("writer: %s in {%s}: %v, want %v", u, tc.rule, got, want)
			}
			if got, err := db.UserInAudience(ctx, app, a.ID, u); err != nil || got != want {
				t.Errorf("reader: %s in {%s}: %v, %v; want %v", u, tc.rule, got, err, want)
			}
		}
		members, _, err := db.FindAudienceMembers(ctx, app, a.ID, ListOptions{Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(members) != 1 || members[0].UserID != tc.user {
			t.Errorf("members of {%s}: %v, want only %s", tc.rule, members, tc.user)
		}
	}
	for _, tc := range []struct {
		f    EventFilter
		want int
	}{
		{EventFilter{UserID: "u-1", Limit: MaxEventsLimit}, 76},
		{EventFilter{UserID: "u-1", EventID: "buy", Limit: MaxEventsLimit}, 75},
		{EventFilter{UserID: "u-1", EventID: "view", Limit: MaxEventsLimit}, 1},
		{EventFilter{UserID: "u-2", Limit: MaxEventsLimit}, 1},
	} {
		evs, err := db.FindEvents(ctx, app, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != tc.want {
			t.Errorf("FindEvents %+v: %d events, want %d", tc.f, len(evs), tc.want)
		}
	}
}

// TestEventIndexRunDeletes checks that deleting events of a run, in any
// order, leaves each remaining event indexed once under a run keyed by its
// last event.
func TestEventIndexRunDeletes(t *testing.T) {
	sqliteOnly(t)
	for _, tc := range []struct {
		name string
		// pick returns the positions, in id order, of u-1's events to delete
		pick func(n int) []int
	}{
		{"a middle event", func(n int) []int { return []int{n / 2} }},
		{"the last event", func(n int) []int { return []int{n - 1} }},
		{"the first event", func(n int) []int { return []int{0} }},
		{"all but one", func(n int) []int {
			var p []int
			for i := range n - 1 {
				p = append(p, i)
			}
			return p
		}},
		{"every other", func(n int) []int {
			var p []int
			for i := 0; i < n; i += 2 {
				p = append(p, i)
			}
			return p
		}},
		{"all", func(n int) []int {
			var p []int
			for i := range n {
				p = append(p, i)
			}
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, app, _ := mustOpenApp(t, eventsT0)
			stopIdleDrain(t, db)
			mustLogUserEvents(t, db, app, "buy", map[string]int{"u-1": 10, "u-2": 1})
			indexGeneration(t, db)
			if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users WHERE user_id = 'u-1' AND run IS NOT NULL`); n != 1 {
				t.Fatalf("u-1's 10 events are in %d runs, want 1", n)
			}
			rows, err := db.write.QueryContext(ctx, `SELECT id FROM events WHERE user_id = 'u-1' ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			rows.Close()
			picked := tc.pick(len(ids))
			for _, i := range picked {
				if _, err := db.write.ExecContext(ctx, `DELETE FROM events WHERE id = ?`, ids[i]); err != nil {
					t.Fatal(err)
				}
			}
			mustIndexExactly(t, db)
			left := len(ids) - len(picked)
			if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE user_id = 'u-1'`); n != int64(left) {
				t.Fatalf("%d of u-1's events indexed, want the %d left", n, left)
			}
			if left == 1 && mustScalar(t, db, `SELECT COUNT(*) FROM event_users WHERE user_id = 'u-1' AND run IS NULL`) != 1 {
				t.Fatal("a run's one event left is not a row of its own")
			}
			evs, err := db.FindEvents(ctx, app, EventFilter{UserID: "u-1", Limit: MaxEventsLimit})
			if err != nil || len(evs) != left {
				t.Fatalf("FindEvents u-1: %d events, %v; want %d", len(evs), err, left)
			}
		})
	}
}

// TestEventIndexRetentionInsideRuns checks retention whose cutoff falls
// inside runs: the runs keep their later events, once each.
func TestEventIndexRetentionInsideRuns(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	generationDue(db, false)
	for range 4 {
		mustLogUserEvents(t, db, app, "buy", map[string]int{"u-1": 3, "u-2": 2})
		mustLogSessionEvents(t, db, app, "buy", map[string]int{"s-1": 3, "s-2": 2})
		clock.Add(time.Hour)
	}
	indexGeneration(t, db)
	if n, err := db.DeleteEventsBefore(ctx, eventsT0.Add(2*time.Hour)); err != nil || n != 20 {
		t.Fatalf("retention deleted %d, %v; want 20", n, err)
	}
	mustIndexExactly(t, db)
	for u, want := range map[string]int{"u-1": 6, "u-2": 4, "s-1": 6, "s-2": 4} {
		if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE user_id = ?`, u); n != int64(want) {
			t.Errorf("%s: %d events indexed after retention, want %d", u, n, want)
		}
	}
}

// TestEventIndexRecoversPartialRuns checks a restart after a crash in the
// middle of a generation: the runs already written are indexed again from
// the events, never twice.
func TestEventIndexRecoversPartialRuns(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := tempDBPath(t)
	db := mustOpenDBAt(t, path)
	stopIdleDrain(t, db)
	app, err := db.CreateApp(ctx, "test", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i := range 8 {
		counts[fmt.Sprintf("u-%d", i)] = 20
	}
	generationDue(db, false)
	mustLogUserEvents(t, db, app.ID, "buy", counts)
	mustLogSessionEvents(t, db, app.ID, "buy", map[string]int{"s-1": 20, "s-2": 20})
	generationDue(db, true)
	if err := db.withTx(ctx, func(*Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users WHERE run IS NOT NULL`); n == 0 || !db.unindexed() {
		t.Fatalf("%d runs written, generation unfinished: %v; want some and true", n, db.unindexed())
	}
	// Closing drops the memory as a crash would; the events and the runs
	// written so far stay.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpenDBAt(t, path)
	mustIndexExactly(t, db)
	if got, want := mustScalar(t, db, `SELECT upto FROM event_users_upto`), mustScalar(t, db, `SELECT MAX(id) FROM events`); got != want {
		t.Fatalf("upto %d, want %d", got, want)
	}
	evs, err := db.FindEvents(ctx, app.ID, EventFilter{UserID: "u-0", Limit: MaxEventsLimit})
	if err != nil || len(evs) != 20 {
		t.Fatalf("FindEvents u-0 after the restart: %d events, %v; want 20", len(evs), err)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, -app.ID); n != 40 {
		t.Fatalf("%d session events indexed after the restart, want 40", n)
	}
}

// TestEventRunsMigrationDown checks that going down past migration 9
// gives every event of a run its own row again, and that up keeps them.
func TestEventRunsMigrationDown(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	generationDue(db, false)
	mustLogUserEvents(t, db, app, "buy", map[string]int{"u-1": 40, "u-2": 3})
	indexGeneration(t, db)
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users WHERE run IS NOT NULL`); n == 0 {
		t.Fatal("no runs to migrate")
	}
	mustMigrateDownTo(t, db, 8)
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users`); n != 43 {
		t.Fatalf("%d rows after down, want one for each of the 43 events", n)
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	mustIndexExactly(t, db)
}

// TestEventIndexRetentionAcrossBatches checks a retention pass of more
// than one batch whose batches cut across every user's runs, some of
// which also hold events it keeps: the second batch finds the runs done.
func TestEventIndexRetentionAcrossBatches(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	generationDue(db, false)
	old, kept := map[string]int{}, map[string]int{}
	for i := range 50 {
		old[fmt.Sprintf("u-%d", i)] = retentionBatch/50 + 10
		kept[fmt.Sprintf("u-%d", i)] = 2
	}
	mustLogUserEvents(t, db, app, "buy", old)
	clock.Add(time.Hour)
	mustLogUserEvents(t, db, app, "buy", kept)
	indexGeneration(t, db)
	if n, err := db.DeleteEventsBefore(ctx, eventsT0.Add(30*time.Minute)); err != nil || n != 50*(retentionBatch/50+10) {
		t.Fatalf("retention deleted %d, %v; want %d", n, err, 50*(retentionBatch/50+10))
	}
	mustIndexExactly(t, db)
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run)`); n != 100 {
		t.Fatalf("%d events indexed after retention, want the 100 kept", n)
	}
}

// TestEventIndexRetentionPerApp checks a pass where each app keeps its
// events for its own number of days, the users' runs spanning the
// cutoffs: the index holds exactly the events kept, app by app, and the
// lookups by user count them.
func TestEventIndexRetentionPerApp(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, short, clock := mustOpenApp(t, eventsT0)
	stopIdleDrain(t, db)
	generationDue(db, false)
	other, err := db.CreateApp(ctx, "server's", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	long, err := db.CreateApp(ctx, "long", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	one, ten := 1, 10
	for app, d := range map[int64]*int{short: &one, long.ID: &ten} {
		if _, err := db.UpdateApp(ctx, app, AppUpdate{EventRetention: &RetentionChange{Days: d}}); err != nil {
			t.Fatal(err)
		}
	}
	// One day of each of eight days ago to one: the short app keeps one
	// day of it, the server's (4 days) four, the long app all eight.
	for range 8 {
		for _, app := range []int64{short, other.ID, long.ID} {
			mustLogUserEvents(t, db, app, "buy", map[string]int{"u-1": 3, "u-2": 2})
		}
		clock.Add(24 * time.Hour)
	}
	indexGeneration(t, db)
	if n, err := db.DeleteExpiredEvents(ctx, clock.Now(), 4*24*time.Hour); err != nil || n != 7*5+4*5 {
		t.Fatalf("retention deleted %d, %v; want %d", n, err, 7*5+4*5)
	}
	mustIndexExactly(t, db)
	for _, tc := range []struct {
		app  int64
		days int
	}{{short, 1}, {other.ID, 4}, {long.ID, 8}} {
		for u, per := range map[string]int{"u-1": 3, "u-2": 2} {
			evs, err := db.FindEvents(ctx, tc.app, EventFilter{UserID: u, Limit: MaxEventsLimit})
			if err != nil || len(evs) != tc.days*per {
				t.Errorf("app %d %s: %d events, %v; want %d", tc.app, u, len(evs), err, tc.days*per)
			}
		}
	}
}
