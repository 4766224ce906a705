package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/pgtest"
	"service/internal/testwait"
)

// A group commit takes its row locks at the commit, in one order (see
// rows.go): round-robin steps and conversions wait there with the batch's
// other rows. These tests hold the answers to what they were when each
// operation wrote as it came.

// lockOrderEnv is a database with a round-robin and a weighted campaign,
// both converting on "buy", and the path it was opened at.
type lockOrderEnv struct {
	db            *DB
	path          string
	app           int64
	rr, weighted  *liveCampaign
	rrID, weighID int64
}

func newLockOrderEnv(t *testing.T) *lockOrderEnv {
	t.Helper()
	ctx := context.Background()
	path := tempDBPath(t)
	db := mustOpenDBAt(t, path)
	created, err := db.CreateApp(ctx, "locks", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := &lockOrderEnv{db: db, path: path, app: created.ID}
	var blocks []int64
	for _, n := range []string{"a", "b"} {
		published := ContentPublished
		cv, err := db.CreateContent(ctx, e.app, ContentInput{Name: &n, Status: &published})
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, cv.ID)
	}
	for _, assignment := range []string{AssignRoundRobin, AssignWeighted} {
		name, end, goal, active := assignment, json.RawMessage(`"2999-01-01T00:00:00Z"`), json.RawMessage(`"buy"`), CampaignActive
		vs := []VariantInput{{ContentViewID: &blocks[0]}, {ContentViewID: &blocks[1]}}
		c, err := db.CreateCampaign(ctx, e.app, 0, CampaignInput{Name: &name, Status: &active, EndDate: end, GoalEventID: goal, AssignmentType: &assignment, Variants: &vs})
		if err != nil {
			t.Fatal(err)
		}
		lc, err := db.liveCampaign(ctx, e.app, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if assignment == AssignRoundRobin {
			e.rr, e.rrID = lc, c.ID
		} else {
			e.weighted, e.weighID = lc, c.ID
		}
	}
	return e
}

// TestOneCommitRoundRobinAndGoals: one transaction holding round-robin
// first assignments, a user stored before, the same user twice, and goal
// events before and after an assignment answers each operation as if it
// had written on the spot: new users take the counter's values in the
// order they came, the stored user takes none and records no impression,
// a goal event before the user's first impression converts nothing, and
// two goal events after it convert once.
func TestOneCommitRoundRobinAndGoals(t *testing.T) {
	ctx := context.Background()
	e := newLockOrderEnv(t)
	for _, tc := range []struct {
		name string
		lc   *liveCampaign
	}{{"round_robin", e.rr}, {"weighted", e.weighted}} {
		t.Run(tc.name, func(t *testing.T) {
			lc := tc.lc
			// "back" is stored, in a commit of its own.
			if _, err := e.db.Variant(ctx, e.app, lc.id, &VariantRequest{UserID: "back"}, nil); err != nil {
				t.Fatal(err)
			}
			counter := countRows(t, e.db, `SELECT rr_next FROM campaigns WHERE id = ?`, lc.id)
			storedBack := countRows(t, e.db, `SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = 'u:back'`, lc.id)
			impressions := countRows(t, e.db, `SELECT sum(impressions) FROM campaign_variants WHERE campaign_id = ?`, lc.id)

			users := []string{"n1", "back", "early", "n2", "n1"}
			outs := make([]assignOutcome, len(users))
			res := make([]EventResult, 3)
			err := e.db.withTx(ctx, func(tx *Tx) error {
				goal := func(i int, user string) error {
					return tx.logEvent(e.app, &EventInput{EventID: "buy", UserID: user}, []*liveCampaign{lc}, nil, &res[i])
				}
				if err := goal(0, "early"); err != nil { // before early's first impression
					return err
				}
				for i, u := range users {
					if err := tx.assign(lc, &VariantRequest{UserID: u}, 'u', u, &outs[i]); err != nil {
						return err
					}
				}
				if err := goal(1, "n1"); err != nil {
					return err
				}
				return goal(2, "n1")
			})
			if err != nil {
				t.Fatal(err)
			}

			for i, out := range outs {
				stored := countRows(t, e.db, `SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`, lc.id, storedKey('u', users[i]))
				if out.variantID != stored {
					t.Fatalf("%s: answered %d, stored %d", users[i], out.variantID, stored)
				}
				if want := i != 1 && i != 4; out.recorded != want {
					t.Fatalf("%s (operation %d): recorded %v, want %v", users[i], i, out.recorded, want)
				}
			}
			if outs[1].variantID != storedBack || outs[4].variantID != outs[0].variantID {
				t.Fatalf("outcomes %+v: want the stored user's variant %d and n1's twice", outs, storedBack)
			}
			if lc.roundRobin {
				// n1, early and n2 take the next three values, in order.
				for k, i := range []int{0, 2, 3} {
					if want := lc.variants[(counter+int64(k))%2].id; outs[i].variantID != want {
						t.Fatalf("%s: variant %d, want %d (counter %d + %d)", users[i], outs[i].variantID, want, counter, k)
					}
				}
				if got := countRows(t, e.db, `SELECT rr_next FROM campaigns WHERE id = ?`, lc.id); got != counter+3 {
					t.Fatalf("counter %d after three new users, want %d", got, counter+3)
				}
			}
			if got := countRows(t, e.db, `SELECT sum(impressions) FROM campaign_variants WHERE campaign_id = ?`, lc.id); got != impressions+3 {
				t.Fatalf("impressions +%d, want 3", got-impressions)
			}
			converted := countRows(t, e.db, `SELECT count(*) FROM assignments WHERE campaign_id = ? AND converted_at IS NOT NULL`, lc.id)
			counted := countRows(t, e.db, `SELECT sum(conversions) FROM campaign_variants WHERE campaign_id = ?`, lc.id)
			early := countRows(t, e.db, `SELECT count(*) FROM assignments WHERE campaign_id = ? AND user_key = 'u:early' AND converted_at IS NOT NULL`, lc.id)
			if converted != 1 || counted != 1 || early != 0 {
				t.Fatalf("%d assignments converted, %d conversions counted, early converted %d: want n1's alone, once", converted, counted, early)
			}
			for i, r := range res {
				if r.ID == 0 || r.Duplicate {
					t.Fatalf("goal event %d: %+v", i, r)
				}
			}
		})
	}
}

// TestDeadlockCostsOneRetry: a group commit that PostgreSQL picks as a
// deadlock's victim (40P01) is run again, each of its operations alone,
// once, and each request gets one answer, no error. The other party is a
// session that holds a converting user's assignment and then asks for the
// round-robin campaign's row, which the batch took first. SQLite's one
// writer deadlocks with nobody: there the batch commits on its first run.
func TestDeadlockCostsOneRetry(t *testing.T) {
	ctx := context.Background()
	e := newLockOrderEnv(t)
	if _, err := e.db.Variant(ctx, e.app, e.weighID, &VariantRequest{UserID: "y"}, nil); err != nil {
		t.Fatal(err)
	}
	counter := countRows(t, e.db, `SELECT rr_next FROM campaigns WHERE id = ?`, e.rrID)

	var out assignOutcome
	var res EventResult
	var runs [2]atomic.Int32
	reqs := []*batchReq{
		{err: make(chan error, 1), op: func(tx *Tx) error {
			runs[0].Add(1)
			return tx.assign(e.rr, &VariantRequest{UserID: "n"}, 'u', "n", &out)
		}},
		{err: make(chan error, 1), op: func(tx *Tx) error {
			runs[1].Add(1)
			return tx.logEvent(e.app, &EventInput{EventID: "buy", UserID: "y"}, []*liveCampaign{e.weighted}, nil, &res)
		}},
	}
	done := make(chan struct{})
	if pgtest.Selected() {
		raw, err := OpenSQL(e.path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		other, err := raw.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		hold, err := other.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer hold.Rollback()
		// The batch detects the deadlock, after its deadlock_timeout; this
		// session would only after 30 s.
		if _, err := hold.Exec(`SET LOCAL deadlock_timeout = '30s'`); err != nil {
			t.Fatal(err)
		}
		if _, err := hold.Exec(`UPDATE assignments SET covariate = covariate WHERE campaign_id = ? AND user_key = 'u:y'`, e.weighID); err != nil {
			t.Fatal(err)
		}
		go func() { defer close(done); e.db.batch.run(reqs) }()
		// The batch holds the campaign's row and waits for y's.
		testwait.Until(t, 10*time.Second, "the batch to wait for the held assignment", func() bool {
			var n int
			_ = raw.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
			return n > 0
		})
		if _, err := hold.Exec(`SELECT rr_next FROM campaigns WHERE id = ? FOR UPDATE`, e.rrID); err != nil {
			t.Fatal(err)
		}
		if err := hold.Rollback(); err != nil {
			t.Fatal(err)
		}
	} else {
		go func() { defer close(done); e.db.batch.run(reqs) }()
	}
	<-done

	want := int32(1)
	if pgtest.Selected() {
		want = 2 // the batch, then each operation alone
	}
	for i, r := range reqs {
		select {
		case err := <-r.err:
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		default:
			t.Fatalf("request %d was not answered", i)
		}
		select {
		case err := <-r.err:
			t.Fatalf("request %d answered twice, then %v", i, err)
		default:
		}
		if n := runs[i].Load(); n != want {
			t.Fatalf("request %d ran %d times, want %d", i, n, want)
		}
	}
	if want := e.rr.variants[counter%2].id; out.variantID != want || !out.recorded {
		t.Fatalf("first assignment %+v, want variant %d recorded", out, want)
	}
	if got := countRows(t, e.db, `SELECT rr_next FROM campaigns WHERE id = ?`, e.rrID); got != counter+1 {
		t.Fatalf("counter %d, want %d", got, counter+1)
	}
	if res.ID == 0 || res.Duplicate {
		t.Fatalf("event %+v", res)
	}
	if n := countRows(t, e.db, `SELECT sum(conversions) FROM campaign_variants WHERE campaign_id = ?`, e.weighID); n != 1 {
		t.Fatalf("%d conversions, want 1", n)
	}
	if n := countRows(t, e.db, `SELECT count(*) FROM events WHERE app_id = ?`, e.app); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}
}

// TestOneLockOrderTwoProcesses: two processes' transactions holding the
// same operations in different orders (a first assignment on a weighted
// campaign, a goal event, a round-robin first assignment) both commit. Each
// operation used to lock as it came: one process took the weighted
// assignment's key, for its goal event, before the round-robin campaign's
// row, the other the row before the key, and PostgreSQL killed one of
// them as a deadlock. SQLite's one writer runs them one after the other.
func TestOneLockOrderTwoProcesses(t *testing.T) {
	ctx := context.Background()
	e := newLockOrderEnv(t)
	b := mustOpenDBAt(t, e.path)
	b.Now = e.db.Now
	lcs := func(db *DB) (rr, weighted *liveCampaign) {
		rr, err := db.liveCampaign(ctx, e.app, e.rrID)
		if err != nil {
			t.Fatal(err)
		}
		weighted, err = db.liveCampaign(ctx, e.app, e.weighID)
		if err != nil {
			t.Fatal(err)
		}
		return rr, weighted
	}
	aRR, aW := lcs(e.db)
	bRR, bW := lcs(b)
	// steps hold each transaction at the points where the other's locks
	// used to cross it; on SQLite, where the second transaction cannot
	// begin before the first ends, they are not waited for.
	together := pgtest.Selected()
	bStarted, aWrote := make(chan struct{}), make(chan struct{})
	wait := func(c chan struct{}) {
		if together {
			select {
			case <-c:
			case <-time.After(10 * time.Second):
			}
		}
	}
	var outs [4]assignOutcome
	var res EventResult
	errs := make(chan error, 2)
	runA := func() {
		errs <- e.db.withTx(ctx, func(tx *Tx) error {
			wait(bStarted)
			if err := tx.assign(aW, &VariantRequest{UserID: "x"}, 'u', "x", &outs[0]); err != nil {
				return err
			}
			if err := tx.logEvent(e.app, &EventInput{EventID: "buy", UserID: "x"}, []*liveCampaign{aW}, nil, &res); err != nil {
				return err
			}
			close(aWrote)
			return tx.assign(aRR, &VariantRequest{UserID: "a"}, 'u', "a", &outs[1])
		})
	}
	runB := func() {
		errs <- b.withTx(ctx, func(tx *Tx) error {
			if err := tx.assign(bRR, &VariantRequest{UserID: "b"}, 'u', "b", &outs[2]); err != nil {
				return err
			}
			close(bStarted)
			wait(aWrote)
			return tx.assign(bW, &VariantRequest{UserID: "x"}, 'u', "x", &outs[3])
		})
	}
	if together {
		go runA()
		go runB()
	} else {
		runB()
		runA()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a transaction failed: %v", err)
		}
	}
	if outs[0].variantID != outs[3].variantID || outs[0].recorded == outs[3].recorded {
		t.Fatalf("x answered %+v and %+v: want one variant, one impression", outs[0], outs[3])
	}
	if outs[1].variantID == outs[2].variantID || !outs[1].recorded || !outs[2].recorded {
		t.Fatalf("round robin answered %+v and %+v: want both variants, recorded", outs[1], outs[2])
	}
	if got := countRows(t, e.db, `SELECT rr_next FROM campaigns WHERE id = ?`, e.rrID); got != 2 {
		t.Fatalf("counter %d, want 2", got)
	}
}

// TestOneCommitWithMetrics: the events a campaign's metric counts are
// written at the commit, after the assignments: each new user is recorded
// once and takes one round-robin value, the metric counts the user
// assigned before the event, and a goal event queued before a user's
// first assignment converts nothing while one after it does.
func TestOneCommitWithMetrics(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	clicks := metricDef(t, db, app, `{"key":"clicks","name":"Clicks","type":"count","eventId":"click"}`)
	vs := make([]VariantInput, 2)
	for i := range vs {
		name, published := fmt.Sprint("block ", i), ContentPublished
		cv, err := db.CreateContent(ctx, app, ContentInput{Name: &name, Status: &published})
		if err != nil {
			t.Fatal(err)
		}
		vs[i] = VariantInput{ContentViewID: &cv.ID}
	}
	name, status, rr := "metrics", CampaignActive, AssignRoundRobin
	c, err := db.CreateCampaign(ctx, app, 0, CampaignInput{Name: &name, Status: &status, EndDate: json.RawMessage(`"2999-01-01T00:00:00Z"`),
		AssignmentType: &rr, GoalEventID: json.RawMessage(`"signup"`), Metrics: json.RawMessage(fmt.Sprintf(`{"secondary":[%d]}`, clicks)), Variants: &vs})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(c.Variants, func(a, b *Variant) int { return cmp.Compare(a.ID, b.ID) })
	clock.Set(eventsT0.Add(time.Second))
	active, metrics, err := db.activeWithMetrics(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	lc := goalsOf(active, "signup")
	if len(lc) != 1 || len(metrics["click"]) != 1 {
		t.Fatalf("campaigns %v, metric targets %v", lc, metrics)
	}
	users := []string{"m1", "m2", "m3"}
	outs := make([]assignOutcome, len(users))
	res := make([]EventResult, 3)
	err = db.withTx(ctx, func(tx *Tx) error {
		if err := tx.logEvent(app, &EventInput{EventID: "signup", UserID: "m3"}, lc, nil, &res[0]); err != nil {
			return err
		}
		for i, u := range users[:2] {
			if err := tx.assign(lc[0], &VariantRequest{UserID: u}, 'u', u, &outs[i]); err != nil {
				return err
			}
		}
		if err := tx.logEvent(app, &EventInput{EventID: "click", UserID: "m1"}, nil, metrics["click"], &res[1]); err != nil {
			return err
		}
		if err := tx.assign(lc[0], &VariantRequest{UserID: "m3"}, 'u', "m3", &outs[2]); err != nil {
			return err
		}
		return tx.logEvent(app, &EventInput{EventID: "signup", UserID: "m1"}, lc, nil, &res[2])
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, out := range outs {
		if want := c.Variants[i%2].ID; out.variantID != want || !out.recorded {
			t.Fatalf("%s: %+v, want variant %d recorded", users[i], out, want)
		}
	}
	applyMoves(t, db)
	checks := []struct {
		what string
		q    string
		want int64
	}{
		{"impressions", `SELECT sum(impressions) FROM campaign_variants WHERE campaign_id = ?`, 3},
		{"counter", `SELECT rr_next FROM campaigns WHERE id = ?`, 3},
		{"assignments", `SELECT count(*) FROM assignments WHERE campaign_id = ?`, 3},
		{"conversions", `SELECT sum(conversions) FROM campaign_variants WHERE campaign_id = ?`, 1},
		{"m1 converted", `SELECT count(*) FROM assignments WHERE campaign_id = ? AND user_key = 'u:m1' AND converted_at IS NOT NULL`, 1},
		{"m1's clicks", `SELECT coalesce(sum(value), 0) FROM metric_values WHERE campaign_id = ? AND user_key = 'u:m1'`, 1},
	}
	for _, ck := range checks {
		if got := countRows(t, db, ck.q, c.ID); got != ck.want {
			t.Errorf("%s: %d, want %d", ck.what, got, ck.want)
		}
	}
}

// TestOneCommitMetricEventsOfOneUser: a user's several events in one
// commit move their values and the variants' sums as much as they would
// one commit each: a capped sum by the change of the capped total, a
// conversion metric once, a count by every event; and an event of a user
// first assigned after it in the commit counts nothing.
func TestOneCommitMetricEventsOfOneUser(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	revenue := metricDef(t, db, app, `{"key":"revenue","name":"Revenue","type":"sum","eventId":"order","property":"revenue","cap":500}`)
	orders := metricDef(t, db, app, `{"key":"orders","name":"Ordered","type":"conversion","eventId":"order"}`)
	views := metricDef(t, db, app, `{"key":"views","name":"Views","type":"count","eventId":"view"}`)
	c := metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d,%d,%d]}`, revenue, orders, views))
	for _, u := range []string{"a", "b"} {
		if _, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: u}, nil); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(eventsT0.Add(time.Second))
	active, metrics, err := db.activeWithMetrics(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	lc := active[0]
	events := []EventInput{
		{EventID: "order", UserID: "a", Metadata: json.RawMessage(`{"revenue":300}`)},
		{EventID: "view", UserID: "a"},
		{EventID: "order", UserID: "a", Metadata: json.RawMessage(`{"revenue":300}`)},
		{EventID: "order", UserID: "b", Metadata: json.RawMessage(`{"revenue":-20}`)},
		{EventID: "view", UserID: "a"},
		{EventID: "order", UserID: "b", Metadata: json.RawMessage(`{"revenue":70}`)},
		{EventID: "view", UserID: "late"},
	}
	res := make([]EventResult, len(events))
	var out assignOutcome
	err = db.withTx(ctx, func(tx *Tx) error {
		for i := range events {
			if err := tx.logEvent(app, &events[i], nil, metrics[events[i].EventID], &res[i]); err != nil {
				return err
			}
		}
		return tx.assign(lc, &VariantRequest{UserID: "late"}, 'u', "late", &out)
	})
	if err != nil {
		t.Fatal(err)
	}
	applyMoves(t, db)
	value := func(metric int64, user string) float64 {
		var v float64
		if err := db.readRow(ctx, `SELECT coalesce(sum(value), 0) FROM metric_values WHERE metric_id = ? AND user_key = ?`, metric, storedKey('u', user)).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	sums := func(metric int64) (s, q float64) {
		if err := db.readRow(ctx, `SELECT coalesce(sum(sum), 0), coalesce(sum(sum_sq), 0) FROM metric_sums WHERE metric_id = ?`, metric).Scan(&s, &q); err != nil {
			t.Fatal(err)
		}
		return s, q
	}
	for _, ck := range []struct {
		what      string
		got, want float64
	}{
		{"a's revenue", value(revenue, "a"), 600},
		{"b's revenue", value(revenue, "b"), 50},
		{"a's orders", value(orders, "a"), 1},
		{"a's views", value(views, "a"), 2},
		{"late's views", value(views, "late"), 0},
	} {
		if ck.got != ck.want {
			t.Errorf("%s: %v, want %v", ck.what, ck.got, ck.want)
		}
	}
	for _, ck := range []struct {
		what   string
		metric int64
		s, q   float64
	}{
		{"revenue", revenue, 500 + 50, 500*500 + 50*50},
		{"orders", orders, 2, 2},
		{"views", views, 2, 4},
	} {
		if s, q := sums(ck.metric); s != ck.s || q != ck.q {
			t.Errorf("%s sums: %v, %v, want %v, %v", ck.what, s, q, ck.s, ck.q)
		}
	}
}
