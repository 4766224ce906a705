package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestLinkMovesMetricValues: a session's per-user metric values become the
// user's at the link, and the session's events after it add to the user's,
// so the variant's sums hold each person once and n (impressions) is one;
// whether the session's values were applied before the link or still
// wait in the journal with it (metricmoves.go).
func TestLinkMovesMetricValues(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(map[bool]string{true: "applied before the link", false: "waiting at the link"}[applied], func(t *testing.T) {
			ctx := context.Background()
			db, app, clock := mustOpenApp(t, time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
			views := metricDef(t, db, app, `{"key":"views","name":"Views","type":"count","eventId":"view"}`)
			spent := metricDef(t, db, app, `{"key":"spent","name":"Spent","type":"sum","eventId":"buy","property":"amount","cap":10}`)
			c := metricCampaign(t, db, app, `{"secondary":[`+itoa(views)+`,`+itoa(spent)+`]}`)
			log := func(in EventInput) {
				t.Helper()
				clock.Add(time.Second)
				if _, err := db.LogEvent(ctx, app, &in); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Variant(ctx, app, c.ID, &VariantRequest{SessionID: "s"}, nil); err != nil {
				t.Fatal(err)
			}
			log(EventInput{EventID: "view", SessionID: "s"})
			log(EventInput{EventID: "view", SessionID: "s"})
			log(EventInput{EventID: "buy", SessionID: "s", Metadata: []byte(`{"amount":5}`)})
			if applied {
				applyMoves(t, db)
				if n := countRows(t, db, `SELECT count(*) FROM metric_values WHERE campaign_id = ? AND user_key = 's:s'`, c.ID); n != 2 {
					t.Fatalf("%d values of the session applied before the link, want 2", n)
				}
			}
			clock.Add(time.Second)
			if _, err := db.IdentifySession(ctx, app, "u", "s", nil); err != nil {
				t.Fatal(err)
			}
			// After the link: by the session alone (a queued event sent late), by
			// both ids, by the user alone.
			log(EventInput{EventID: "view", SessionID: "s"})
			log(EventInput{EventID: "view", UserID: "u", SessionID: "s"})
			log(EventInput{EventID: "buy", UserID: "u", Metadata: []byte(`{"amount":7}`)})
			applyMoves(t, db)
			for _, tc := range []struct {
				metric int64
				key    string
				want   int64
			}{{views, "u:u", 4}, {views, "s:s", -1}, {spent, "u:u", 12}, {spent, "s:s", -1}} {
				n := countRows(t, db, `SELECT count(*) FROM metric_values WHERE campaign_id = ? AND metric_id = ? AND user_key = ?`, c.ID, tc.metric, tc.key)
				if tc.want < 0 {
					if n != 0 {
						t.Errorf("metric %d: %d values left under %s, want them moved", tc.metric, n, tc.key)
					}
					continue
				}
				if got := mustScalar(t, db, `SELECT CAST(value AS INTEGER) FROM metric_values WHERE campaign_id = ? AND metric_id = ? AND user_key = ?`, c.ID, tc.metric, tc.key); got != tc.want {
					t.Errorf("metric %d %s: value %d, want %d", tc.metric, tc.key, got, tc.want)
				}
			}
			a, err := db.CampaignAnalytics(ctx, app, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			// spent is capped at 10: the person's 12 counts 10, and its
			// square 100, once.
			for _, m := range a.Metrics {
				want := map[int64]float64{views: 4, spent: 10}[m.MetricID]
				v := m.Variants[0]
				if v.Users != 1 || v.Total != want || m.Variants[1].Users != 0 || m.Variants[1].Total != 0 {
					t.Errorf("metric %s: variants %+v, want one user with %g in the first", m.Key, m.Variants, want)
				}
				var q float64
				if err := db.read.QueryRow(`SELECT sum_sq FROM metric_sums WHERE campaign_id = ? AND metric_id = ? AND variant_id = ?`, c.ID, m.MetricID, v.VariantID).Scan(&q); err != nil || q != want*want {
					t.Errorf("metric %s: sum of squares %g (%v), want %g", m.Key, q, err, want*want)
				}
			}
		})
	}
}

// TestLinkedCovariate: a user's CUPED covariate counts the goal events
// their linked sessions logged without a userId, each once, beside their
// own; a user who took a session's assignment at the link keeps the
// session's covariate.
func TestLinkedCovariate(t *testing.T) {
	for _, waiting := range []bool{false, true} {
		// On SQLite the sessions' events are either in their runs when the
		// users are assigned, or still in the indexer's memory.
		t.Run(map[bool]string{false: "indexed", true: "waiting"}[waiting], func(t *testing.T) {
			testLinkedCovariate(t, waiting)
		})
	}
}

func testLinkedCovariate(t *testing.T, waiting bool) {
	ctx := context.Background()
	const day = 24 * time.Hour
	db, app, clock := mustOpenApp(t, eventsT0.Add(-5*day))
	if waiting && db.pgEngine() == nil {
		stopIdleDrain(t, db)
		generationDue(db, false)
	}
	buy := func(in EventInput) {
		t.Helper()
		clock.Add(time.Hour)
		in.EventID = "buy"
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			t.Fatal(err)
		}
	}
	// "u" had two sessions, each buying as a visitor, and bought once
	// signed in (that event carries both ids: it is counted once, as u's).
	buy(EventInput{SessionID: "s1"})
	buy(EventInput{SessionID: "s1"})
	buy(EventInput{SessionID: "s2"})
	buy(EventInput{UserID: "u", SessionID: "s2"})
	buy(EventInput{SessionID: "stranger"})
	for _, s := range []string{"s1", "s2"} {
		if _, err := db.IdentifySession(ctx, app, "u", s, nil); err != nil {
			t.Fatal(err)
		}
	}
	// "v" is a visitor assigned before signing in, with one purchase.
	buy(EventInput{SessionID: "sv"})
	// "w" bought twice as a visitor and is first seen, linked and
	// assigned by one request naming both ids: a user the commit records
	// for the first time, yet the owner of the session's events.
	buy(EventInput{SessionID: "sw"})
	buy(EventInput{SessionID: "sw"})
	if db.pgEngine() == nil {
		if !waiting {
			indexGeneration(t, db)
		}
		if n, want := mustScalar(t, db, `SELECT COUNT(*) FROM event_users LEFT JOIN json_each(run) WHERE app_id = ?`, -app), map[bool]int64{false: 7, true: 0}[waiting]; n != want {
			t.Fatalf("%d of the sessions' 7 events indexed, want %d", n, want)
		}
	}
	clock.Set(eventsT0)
	c := mustCreateCampaign(t, db, app, "buy", []testArm{{alloc: 50, control: true}, {alloc: 50}})
	for _, req := range []*VariantRequest{{UserID: "u"}, {SessionID: "sv"}, {UserID: "w", SessionID: "sw"}} {
		if _, err := db.Variant(ctx, app, c.ID, req, nil); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(time.Minute)
	if _, err := db.IdentifySession(ctx, app, "v", "sv", nil); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{"u:u": 4, "s:sv": 1, "u:v": 1, "u:w": 2} {
		if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, key); got != want {
			t.Errorf("%s: covariate %d, want %d", key, got, want)
		}
	}
	// The variants' sums count the session's covariate once: the copy
	// the user took adds nothing.
	if got := mustScalar(t, db, `SELECT sum(cuped_sum_x) FROM campaign_variants WHERE campaign_id = ?`, c.ID); got != 7 {
		t.Errorf("cuped_sum_x over the variants %d, want 7", got)
	}
	if got := mustScalar(t, db, `SELECT sum(impressions) FROM campaign_variants WHERE campaign_id = ?`, c.ID); got != 3 {
		t.Errorf("impressions %d, want 3", got)
	}
}

func itoa(n int64) string { return string(appendInt(nil, n)) }

// TestNewPairOneCommit: a variant request naming a new session and user
// links them and assigns the user in one group commit, and answers as a
// link in a commit of its own did: a fresh pair's user takes a first
// assignment and its impression; a user whose session was assigned
// takes the session's variant, with no new impression; a pair linked
// before costs the link nothing.
func TestNewPairOneCommit(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	c := mustCreateCampaign(t, db, app, "buy", []testArm{{alloc: 50, control: true}, {alloc: 50}})
	clock.Set(eventsT0.Add(time.Second))
	variant := func(req VariantRequest) string {
		t.Helper()
		c0, _ := db.batch.stats()
		answer, err := db.Variant(ctx, app, c.ID, &req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c1, _ := db.batch.stats(); c1-c0 != 1 {
			t.Errorf("%+v: %d group commits, want 1", req, c1-c0)
		}
		return string(answer)
	}
	if got := variant(VariantRequest{UserID: "u1", SessionID: "s1"}); !strings.HasSuffix(got, `"impressionRecorded":true}`) {
		t.Fatalf("new pair: %s, want a first impression", got)
	}
	anon := variant(VariantRequest{SessionID: "s2"})
	got := variant(VariantRequest{UserID: "u2", SessionID: "s2"})
	if want := strings.Replace(anon, `"impressionRecorded":true}`, `"impressionRecorded":false}`, 1); got != want {
		t.Fatalf("signed-in session: %s, want the session's %s", got, want)
	}
	if got := variant(VariantRequest{UserID: "u3", SessionID: "s1"}); !strings.HasSuffix(got, `"impressionRecorded":true}`) {
		t.Fatalf("session linked to another user: %s, want u3's first impression", got)
	}
	if n := countRows(t, db, `SELECT count(*) FROM session_links WHERE app_id = ?`, app); n != 2 {
		t.Fatalf("%d links, want 2", n)
	}
	if n := countRows(t, db, `SELECT sum(impressions) FROM campaign_variants WHERE campaign_id = ?`, c.ID); n != 3 {
		t.Fatalf("%d impressions, want 3", n)
	}
}

// TestNewUsersReadLinksOncePerCommit: the new users of one commit whose
// covariates are counted (CUPED) read their links, for their linked
// sessions' events still in the indexer's memory, in one query, and in
// none while no session's event waits there; the user the event counts
// for is the one linked, wherever it stands in the commit.
func TestNewUsersReadLinksOncePerCommit(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	sqlite := db.pgEngine() == nil
	if sqlite {
		stopIdleDrain(t, db)
		generationDue(db, false)
	}
	c := mustCreateCampaign(t, db, app, "buy", []testArm{{alloc: 50, control: true}, {alloc: 50}})
	lc, err := db.liveCampaign(ctx, app, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	assignAll := func(prefix string) int64 {
		t.Helper()
		clock.Add(time.Minute)
		reads := db.linkReads.Load()
		outs := make([]assignOutcome, 5)
		err := db.withTx(ctx, func(tx *Tx) error {
			for i := range outs {
				u := fmt.Sprintf("%s-%d", prefix, i)
				if err := tx.assign(lc, &VariantRequest{UserID: u}, 'u', u, &outs[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return db.linkReads.Load() - reads
	}
	if n := assignAll("a"); n != 0 {
		t.Errorf("%d link reads with no session's event waiting, want 0", n)
	}
	// A visitor buys, then signs in as b-3, and b-3 is assigned with four
	// others while the purchase still waits to be indexed by session.
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", SessionID: "visit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.IdentifySession(ctx, app, "b-3", "visit", nil); err != nil {
		t.Fatal(err)
	}
	want := int64(0)
	if sqlite {
		if n := mustScalar(t, db, `SELECT COUNT(*) FROM event_users WHERE app_id = ?`, -app); n != 0 {
			t.Fatalf("%d rows of the session's events indexed, want the event still in memory", n)
		}
		want = 1
	}
	if n := assignAll("b"); n != want {
		t.Errorf("%d link reads for a commit of 5 users while a session's event waits, want %d", n, want)
	}
	for i := range 5 {
		want := map[bool]int64{false: 0, true: 1}[i == 3]
		if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, storedKey('u', fmt.Sprintf("b-%d", i))); got != want {
			t.Errorf("b-%d: covariate %d, want %d", i, got, want)
		}
	}
}
