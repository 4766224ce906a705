package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestJournalEntries: every entry reads back as written, keys of any
// characters included, and a damaged text is refused rather than read as
// other moves.
func TestJournalEntries(t *testing.T) {
	count := &liveMetric{typ: MetricCount}
	conv := &liveMetric{typ: MetricConversion}
	moves := []*metricMove{
		{ref: metricValueRef{1, 2, "u:plain"}, m: count, variant: 3, delta: 1},
		{ref: metricValueRef{10, 20, "u:with space\nand newline: 7:x"}, m: count, variant: 30, delta: -2.5e-7},
		{ref: metricValueRef{4, 5, "s:ünï cödé"}, m: conv, variant: 6},
		{ref: metricValueRef{7, 8, "u:"}, m: count, variant: 9, delta: math.MaxFloat64},
	}
	var b []byte
	for _, mv := range moves {
		b = appendMoveEntry(b, mv)
	}
	b = appendRekeyEntry(b, 11, 12, "s:a b\n", "u:c:d")
	var got []journalEntry
	if err := eachJournalEntry(string(b), func(e *journalEntry) { got = append(got, *e) }); err != nil {
		t.Fatal(err)
	}
	want := []journalEntry{
		{kind: entryAdd, campaign: 1, metric: 2, variant: 3, delta: 1, key: "u:plain"},
		{kind: entryAdd, campaign: 10, metric: 20, variant: 30, delta: -2.5e-7, key: "u:with space\nand newline: 7:x"},
		{kind: entryConversion, campaign: 4, metric: 5, variant: 6, key: "s:ünï cödé"},
		{kind: entryAdd, campaign: 7, metric: 8, variant: 9, delta: math.MaxFloat64, key: "u:"},
		{kind: entryRekey, campaign: 11, app: 12, key: "s:a b\n", to: "u:c:d"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read back\n%v\nwant\n%v", got, want)
	}
	for _, bad := range []string{
		"a 1 2 3 1 7:u:plai\n",       // key longer than the text
		"a 1 2 3 1 7:u:plain",        // no end of line
		"a 1 2 3 x 7:u:plain\n",      // delta not a number
		"c 1 2 7:u:plain\n",          // a field short
		"r 1 2 3:s:a\n",              // no user key
		"z 1 2 3 1 7:u:plain\n",      // no such entry
		"a 1 2 3 1 -1:u:plain\n",     // negative length
		"a 1 2 3 1 7:u:plainX\n",     // text after the key
		"a 99999999999999999999 2 3", // out of range
	} {
		if err := eachJournalEntry(bad, func(*journalEntry) {}); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}

// TestMetricMovesWaitForTheApplier: a metric event's moves are journaled
// with the event (on PostgreSQL in the events' statement), and reach the values and sums when applied, by the
// applier or by a reader; an acknowledged event's moves survive the
// process (a reopened database applies them); moves of a campaign deleted
// meanwhile go with it.
func TestMetricMovesWaitForTheApplier(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenDBPath(t)
	clock := time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return clock }
	a, err := db.CreateApp(ctx, "test", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	app := a.ID
	spent := metricDef(t, db, app, `{"key":"spent","name":"Spent","type":"sum","eventId":"buy","property":"amount","cap":100}`)
	c := metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d]}`, spent))
	doomed := metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d]}`, spent))
	for _, id := range []int64{c.ID, doomed.ID} {
		mustAssign(t, db, app, id, VariantRequest{UserID: "u"})
	}
	buy := func(db *DB, amount int) {
		t.Helper()
		clock = clock.Add(time.Second)
		in := EventInput{EventID: "buy", UserID: "u", Metadata: json.RawMessage(fmt.Sprintf(`{"amount":%d}`, amount))}
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			t.Fatal(err)
		}
	}
	waiting := func(db *DB) int64 { return countRows(t, db, `SELECT count(*) FROM metric_moves`) }
	stored := func(db *DB) int64 {
		return countRows(t, db, `SELECT coalesce(sum(value), 0) FROM metric_values WHERE campaign_id = ?`, c.ID)
	}
	inserts := db.journalInserts.Load()
	buy(db, 30)
	buy(db, 50)
	if n := waiting(db); n != 2 {
		t.Fatalf("%d journal rows after two events, want 2", n)
	}
	// On PostgreSQL each commit's row goes in with its events, in one
	// round trip; SQLite, with none to save, inserts it on its own.
	want := int64(2)
	if db.pgEngine() != nil {
		want = 0
	}
	if n := db.journalInserts.Load() - inserts; n != want {
		t.Errorf("%d journal rows inserted by a statement of their own, want %d", n, want)
	}
	if v := stored(db); v != 0 {
		t.Fatalf("value %d stored before the moves were applied", v)
	}
	// A reader applies what waits: the campaign's analytics count both.
	an, err := db.CampaignAnalytics(ctx, app, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := an.Metrics[0].Variants; got[0].Total+got[1].Total != 80 {
		t.Fatalf("analytics count %v, want 80 in all", got)
	}
	if n := waiting(db); n != 0 {
		t.Fatalf("%d journal rows left after a pass", n)
	}

	// Acknowledged, not applied, then the process goes: the moves are in
	// the database, and the next process applies them.
	buy(db, 40) // 120 in all: capped at 100
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpenDBAt(t, path)
	if n := waiting(db); n != 1 {
		t.Fatalf("%d journal rows after a reopen, want 1", n)
	}
	if _, err := db.SetCampaignStatus(ctx, app, doomed.ID, "completed"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteCampaign(ctx, app, doomed.ID); err != nil {
		t.Fatal(err)
	}
	applyMoves(t, db)
	if v := stored(db); v != 120 {
		t.Fatalf("value %d after the reopened database applied the moves, want 120", v)
	}
	var s, q float64
	if err := db.read.QueryRow(`SELECT sum(sum), sum(sum_sq) FROM metric_sums WHERE campaign_id = ?`, c.ID).Scan(&s, &q); err != nil || s != 100 || q != 100*100 {
		t.Fatalf("sums %g, %g (%v), want the capped 100 and 10000", s, q, err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM metric_values WHERE campaign_id = ?`, doomed.ID); n != 0 || waiting(db) != 0 {
		t.Fatalf("%d values of the deleted campaign, %d journal rows left", n, waiting(db))
	}
}

// TestErasureTakesWaitingMoves: an erasure applies the journal before it
// deletes, so a value waiting there cannot come back after it; the sums,
// which an erasure leaves, count it.
func TestErasureTakesWaitingMoves(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
	views := metricDef(t, db, app, `{"key":"views","name":"Views","type":"count","eventId":"view"}`)
	c := metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d]}`, views))
	for _, user := range []string{"gone", "stays"} {
		mustAssign(t, db, app, c.ID, VariantRequest{UserID: user})
		for range 3 {
			clock.Add(time.Second)
			if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", UserID: user}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := db.EraseUser(ctx, app, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if got.MetricValues != 1 {
		t.Errorf("erased %d metric values, want the 1 that waited in the journal", got.MetricValues)
	}
	applyMoves(t, db)
	rows, err := db.read.Query(`SELECT user_key, value FROM metric_values WHERE campaign_id = ? ORDER BY user_key`, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for rows.Next() {
		var k string
		var v float64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		left = append(left, fmt.Sprint(k, "=", v))
	}
	rows.Close()
	if strings.Join(left, " ") != "u:stays=3" {
		t.Errorf("values after the erasure and a pass: %v, want only u:stays=3", left)
	}
	if s := countRows(t, db, `SELECT CAST(sum(sum) AS INTEGER) FROM metric_sums WHERE campaign_id = ?`, c.ID); s != 6 {
		t.Errorf("sums %d after the erasure, want the 6 counted", s)
	}
}

// TestMetricMovesInSlices: commits' moves merged into slices are applied
// a slice a step, exactly: a user's events of the pass move the value
// once, a link among the commits takes the session's moves to its user in
// whichever slice they land, moves that came while slices waited go in
// the next pass, and an erasure in the middle takes slices and commits'
// rows together.
func TestMetricMovesInSlices(t *testing.T) {
	defer func(n int) { metricSlice = n }(metricSlice)
	metricSlice = 2
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
	views := metricDef(t, db, app, `{"key":"views","name":"Views","type":"count","eventId":"view"}`)
	spent := metricDef(t, db, app, `{"key":"spent","name":"Spent","type":"sum","eventId":"buy","property":"amount","cap":10}`)
	c := metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d,%d]}`, views, spent))
	log := func(in EventInput) {
		t.Helper()
		clock.Add(time.Second)
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"a", "b", "c"} {
		mustAssign(t, db, app, c.ID, VariantRequest{UserID: u})
	}
	mustAssign(t, db, app, c.ID, VariantRequest{SessionID: "s"})
	mustAssign(t, db, app, c.ID, VariantRequest{SessionID: "s2"})
	for range 2 {
		log(EventInput{EventID: "view", SessionID: "s2"})
		log(EventInput{EventID: "view", UserID: "a"})
		log(EventInput{EventID: "buy", UserID: "b", Metadata: json.RawMessage(`{"amount":4}`)})
		log(EventInput{EventID: "view", SessionID: "s"})
		log(EventInput{EventID: "buy", SessionID: "s", Metadata: json.RawMessage(`{"amount":3}`)})
	}
	if _, err := db.IdentifySession(ctx, app, "d", "s", nil); err != nil {
		t.Fatal(err)
	}
	log(EventInput{EventID: "buy", UserID: "d", Metadata: json.RawMessage(`{"amount":5}`)})
	log(EventInput{EventID: "view", UserID: "c"})

	upto := countRows(t, db, `SELECT max(id) FROM metric_moves`)
	step := func() bool {
		t.Helper()
		more, err := db.stepJournal(ctx, upto)
		if err != nil {
			t.Fatal(err)
		}
		return more
	}
	// Merged: s2:views 2, a:views 2, b:spent 8, d:views 2, d:spent 11
	// (the session's 6 and d's 5), c:views 1: six values, three slices.
	if !step() {
		t.Fatal("the first step left nothing to do, want slices")
	}
	if n := countRows(t, db, `SELECT count(*) FROM metric_moves WHERE merged`); n != 3 {
		t.Fatalf("%d merged rows, want 3 slices of at most 2 values", n)
	}
	if n := countRows(t, db, `SELECT count(*) FROM metric_values`); n != 0 {
		t.Fatalf("%d values written by the merging step", n)
	}
	// Between two slices: s2 is linked to e, and a reader's pass, which
	// takes the link's row, applies the waiting slices first, so that
	// the link finds s2's values stored.
	if !step() {
		t.Fatal("a slice was the last step")
	}
	if _, err := db.IdentifySession(ctx, app, "e", "s2", nil); err != nil {
		t.Fatal(err)
	}
	applyMoves(t, db)
	// Between two slices again: an event comes, then an erasure.
	log(EventInput{EventID: "view", UserID: "a"})
	log(EventInput{EventID: "view", UserID: "b"})
	log(EventInput{EventID: "view", UserID: "d"})
	upto = countRows(t, db, `SELECT max(id) FROM metric_moves`)
	if !step() || !step() {
		t.Fatal("want slices")
	}
	log(EventInput{EventID: "view", UserID: "a"})
	log(EventInput{EventID: "view", UserID: "c"})
	if _, err := db.EraseUser(ctx, app, "c"); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM metric_moves`); n != 0 {
		t.Fatalf("%d journal rows left after the erasure", n)
	}
	for i := 0; step(); i++ {
		if i == 10 {
			t.Fatal("the pass does not end")
		}
	}
	applyMoves(t, db)

	values := map[string]int64{}
	rows, err := db.read.Query(`SELECT metric_id, user_key, CAST(value AS INTEGER) FROM metric_values WHERE campaign_id = ?`, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m, v int64
		var k string
		if err := rows.Scan(&m, &k, &v); err != nil {
			t.Fatal(err)
		}
		values[fmt.Sprint(map[int64]string{views: "views", spent: "spent"}[m], " ", k)] = v
	}
	rows.Close()
	want := map[string]int64{"views u:a": 4, "views u:b": 1, "spent u:b": 8, "views u:d": 3, "spent u:d": 11, "views u:e": 2}
	if fmt.Sprint(values) != fmt.Sprint(want) {
		t.Errorf("values %v, want %v", values, want)
	}
	// The sums hold the capped values (the erased c's 2 views stay, as an
	// erasure leaves the sums): views 4+1+3+2+2 = 12, squares
	// 16+1+9+4+4; spent 8 and 10, squares 64+100.
	for _, tc := range []struct {
		metric int64
		s, q   int64
	}{{views, 12, 34}, {spent, 18, 164}} {
		var s, q float64
		if err := db.read.QueryRow(`SELECT sum(sum), sum(sum_sq) FROM metric_sums WHERE campaign_id = ? AND metric_id = ?`, c.ID, tc.metric).Scan(&s, &q); err != nil {
			t.Fatal(err)
		}
		if int64(s) != tc.s || int64(q) != tc.q {
			t.Errorf("metric %d: sums %g, %g, want %d, %d", tc.metric, s, q, tc.s, tc.q)
		}
	}
}

// TestMetricMovesTwoProcesses: two processes log metric events while both
// apply the journal, in slices, at once (the leader's paced passes on one,
// readers' passes on the other): every event moves its user's value once,
// and the sums hold exactly the values.
func TestMetricMovesTwoProcesses(t *testing.T) {
	defer func(n int) { metricSlice = n }(metricSlice)
	metricSlice = 4
	ctx := context.Background()
	a, b, app, _ := twoProcesses(t)
	views := metricDef(t, a, app, `{"key":"views","name":"Views","type":"count","eventId":"view"}`)
	c := metricCampaign(t, a, app, fmt.Sprintf(`{"secondary":[%d]}`, views))
	const users, perUser = 24, 15
	for i := range users {
		mustAssign(t, a, app, c.ID, VariantRequest{UserID: fmt.Sprint("u", i)})
	}
	var logging, applying sync.WaitGroup
	done := make(chan struct{})
	for p, db := range []*DB{a, b} {
		logging.Add(1)
		go func() {
			defer logging.Done()
			for n := range users * perUser / 2 {
				in := EventInput{EventID: "view", UserID: fmt.Sprint("u", (n*2+p)%users)}
				if _, err := db.LogEvent(ctx, app, &in); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		applying.Add(1)
		go func() {
			defer applying.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				apply := db.ApplyMetricMoves
				if p == 0 {
					apply = db.ApplyMetricMovesPaced
				}
				if err := apply(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	logging.Wait()
	close(done)
	applying.Wait()
	applyMoves(t, b)
	rows, err := a.read.Query(`SELECT user_key, CAST(value AS INTEGER) FROM metric_values WHERE campaign_id = ? AND metric_id = ?`, c.ID, views)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		seen++
		if v != perUser {
			t.Errorf("%s: %d views, want %d", k, v, perUser)
		}
	}
	rows.Close()
	if seen != users {
		t.Errorf("%d users with values, want %d", seen, users)
	}
	var s, q float64
	if err := a.read.QueryRow(`SELECT sum(sum), sum(sum_sq) FROM metric_sums WHERE campaign_id = ? AND metric_id = ?`, c.ID, views).Scan(&s, &q); err != nil {
		t.Fatal(err)
	}
	if s != users*perUser || q != users*perUser*perUser {
		t.Errorf("sums %g, %g, want %d, %d", s, q, users*perUser, users*perUser*perUser)
	}
}
