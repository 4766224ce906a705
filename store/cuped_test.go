package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// cupedUser is one user of a CUPED test: the goal events logged before
// the assignment, at offsets from it, and whether the user converts.
type cupedUser struct {
	key     string // userId, or a sessionId when session is set
	session bool
	before  []time.Duration // goal ("buy") events, before the assignment
	other   int             // events of another id, just before
	convert bool
	x       int64 // the covariate the test expects
}

// TestCupedCovariatesAndAnalytics assigns users with known histories,
// converts some, and checks each stored covariate and the analytics'
// CUPED figures against a plain per-user computation.
func TestCupedCovariatesAndAnalytics(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0.Add(-20*24*time.Hour))
	const day = 24 * time.Hour
	users := []cupedUser{
		// Boundaries: t-14d is in, t itself (logged just before, same
		// millisecond) is not, nor 15 days before.
		{key: "edge", before: []time.Duration{14 * day, 0, 15 * day}, x: 1, convert: true},
		{key: "repeat", before: []time.Duration{10 * day, 9 * day, 9 * day, 3 * day, time.Hour}, x: 5, convert: true},
		{key: "once", before: []time.Duration{2 * day}, other: 3, x: 1},
		{key: "viewer", other: 4, x: 0, convert: true},
		// A visitor known by sessionId owns the events with that sessionId
		// and no userId ("shared" also logs one with a userId, which is
		// that user's).
		{key: "sess-1", session: true, before: []time.Duration{day, 3 * day, 20 * day}, x: 2, convert: true},
		{key: "sess-2", session: true, other: 2, x: 0},
		{key: "shared", session: true, before: []time.Duration{5 * day}, x: 1, convert: true},
	}
	for i := range 24 {
		u := cupedUser{key: fmt.Sprintf("u-%02d", i), convert: i%3 == 0}
		for k := range i % 4 {
			u.before = append(u.before, time.Duration(k+1)*day)
		}
		u.x = int64(len(u.before))
		users = append(users, u)
	}
	// The histories, in time order, so the clock only moves forward.
	type logged struct {
		at   time.Duration // before the assignment time
		user *cupedUser
		id   string
	}
	var evs []logged
	for i := range users {
		u := &users[i]
		for _, b := range u.before {
			evs = append(evs, logged{b, u, "buy"})
		}
		for range u.other {
			evs = append(evs, logged{time.Minute, u, "view"})
		}
	}
	for len(evs) > 0 {
		// The earliest (largest offset) next; stable among equals.
		j := 0
		for k := range evs {
			if evs[k].at > evs[j].at {
				j = k
			}
		}
		e := evs[j]
		evs = append(evs[:j], evs[j+1:]...)
		clock.Set(eventsT0.Add(-e.at))
		in := &EventInput{EventID: e.id, UserID: e.user.key}
		if e.user.session {
			in = &EventInput{EventID: e.id, SessionID: e.user.key}
		}
		if _, err := db.LogEvent(ctx, app, in); err != nil {
			t.Fatal(err)
		}
		if e.user.key == "shared" && e.id == "buy" {
			if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", UserID: "someone", SessionID: "shared"}); err != nil {
				t.Fatal(err)
			}
		}
		// On SQLite most of the history is in event_users by now; the last
		// hour's events stay in the indexer's memory.
		if db.pgEngine() == nil && e.at > 2*time.Hour {
			indexGeneration(t, db)
		}
	}
	clock.Set(eventsT0)
	c := mustCreateCampaign(t, db, app, "buy", []testArm{{alloc: 50, control: true}, {alloc: 50}})
	if c.CupedLookbackDays != DefaultCupedLookbackDays {
		t.Fatalf("cupedLookbackDays %d, want the default %d", c.CupedLookbackDays, DefaultCupedLookbackDays)
	}
	variantOf := map[string]int64{}
	for _, u := range users {
		req := &VariantRequest{UserID: u.key}
		if u.session {
			req = &VariantRequest{SessionID: u.key}
		}
		b, err := db.Variant(ctx, app, c.ID, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ans struct{ VariantID int64 }
		if err := json.Unmarshal(b, &ans); err != nil || ans.VariantID == 0 {
			t.Fatalf("%s: %s %v", u.key, b, err)
		}
		variantOf[u.key] = ans.VariantID
	}
	for _, u := range users {
		key := storedKey('u', u.key)
		if u.session {
			key = storedKey('s', u.key)
		}
		if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, key); got != u.x {
			t.Errorf("%s: covariate %d, want %d", u.key, got, u.x)
		}
	}
	clock.Add(time.Hour)
	for _, u := range users {
		if !u.convert {
			continue
		}
		in := &EventInput{EventID: "buy", UserID: u.key}
		if u.session {
			in = &EventInput{EventID: "buy", SessionID: u.key}
		}
		if _, err := db.LogEvent(ctx, app, in); err != nil {
			t.Fatal(err)
		}
	}
	a, err := db.CampaignAnalytics(ctx, app, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cuped == nil {
		t.Fatal("analytics cuped is null")
	}
	want := plainCuped(users, variantOf, c.Variants[0].ID)
	if a.Cuped.LookbackDays != 14 || !nearly(a.Cuped.Theta, want.theta) || !nearly(a.Cuped.VarianceReduction, want.reduction) {
		t.Errorf("cuped %+v, want theta %.12g reduction %.12g", *a.Cuped, want.theta, want.reduction)
	}
	for _, v := range a.Variants {
		w := want.arms[v.VariantID]
		if v.Cuped == nil || !nearly(v.Cuped.AdjustedConversionRate, w.adjusted*100) {
			t.Fatalf("variant %d cuped %+v, want adjusted %.12g%%", v.VariantID, v.Cuped, w.adjusted*100)
		}
		if v.IsControl {
			if v.Cuped.Difference != nil {
				t.Errorf("control has a difference")
			}
			continue
		}
		if !nearly(*v.Cuped.Difference, w.diff*100) || !nearly(*v.Cuped.PValue, w.p) ||
			!nearly((*v.Cuped.DifferenceInterval)[0], (w.diff-1.959963984540054*w.se)*100) ||
			!nearly((*v.Cuped.DifferenceInterval)[1], (w.diff+1.959963984540054*w.se)*100) ||
			!nearly(*v.Cuped.Uplift, w.diff/want.arms[c.Variants[0].ID].adjusted*100) {
			t.Errorf("treatment cuped %+v (interval %v), want diff %.12g pp, p %.12g, se %.12g", *v.Cuped, *v.Cuped.DifferenceInterval, w.diff*100, w.p, w.se)
		}
	}
	// The answer's shape: the control carries only its adjusted rate.
	body, _ := json.Marshal(a)
	if !strings.Contains(string(body), `"cuped":{"lookbackDays":14,"theta":`) || !strings.Contains(string(body), `"differenceInterval":[`) {
		t.Errorf("analytics JSON lacks the cuped fields: %s", body)
	}
}

func nearly(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

type plainArm struct {
	n            float64
	adjusted, s2 float64
	diff, se, p  float64
	xs, ys, zs   []float64
}

type plainResult struct {
	theta, reduction float64
	arms             map[int64]*plainArm
}

// plainCuped computes CUPED straight from the per-user definitions, with
// none of the sums the store keeps.
func plainCuped(users []cupedUser, variantOf map[string]int64, control int64) plainResult {
	var xs, ys []float64
	arms := map[int64]*plainArm{}
	for _, u := range users {
		y := 0.0
		if u.convert {
			y = 1
		}
		xs, ys = append(xs, float64(u.x)), append(ys, y)
		a := arms[variantOf[u.key]]
		if a == nil {
			a = &plainArm{}
			arms[variantOf[u.key]] = a
		}
		a.xs, a.ys = append(a.xs, float64(u.x)), append(a.ys, y)
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	mx, my := mean(xs), mean(ys)
	var sxy, sxx, syy float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	r := plainResult{arms: arms}
	if sxx != 0 {
		r.theta = sxy / sxx
	}
	var zs []float64
	for i := range xs {
		zs = append(zs, ys[i]-r.theta*xs[i])
	}
	mz, szz := mean(zs), 0.0
	for _, z := range zs {
		szz += (z - mz) * (z - mz)
	}
	r.reduction = 1 - szz/syy
	for _, a := range arms {
		a.n = float64(len(a.xs))
		a.adjusted = mean(a.ys) - r.theta*(mean(a.xs)-mx)
		for i := range a.xs {
			a.zs = append(a.zs, a.ys[i]-r.theta*a.xs[i])
		}
		m := mean(a.zs)
		for _, z := range a.zs {
			a.s2 += (z - m) * (z - m)
		}
		a.s2 /= a.n - 1
	}
	c := arms[control]
	for id, a := range arms {
		if id == control {
			continue
		}
		a.diff = a.adjusted - c.adjusted
		a.se = math.Sqrt(a.s2/a.n + c.s2/c.n)
		a.p = math.Erfc(math.Abs(a.diff/a.se) / math.Sqrt2)
	}
	return r
}

// TestCovariateQueryPlan checks that covariates are counted by probing
// an index, of events by user or by session, for each key of the batch,
// never by walking an app's events.
func TestCovariateQueryPlan(t *testing.T) {
	db := mustOpenDB(t)
	conn, explain := planConn(t, db)
	for _, tc := range []struct {
		name, q, sqlite, pg string
	}{
		{"by user", db.eng.covariateEvents('u'), "SEARCH e USING PRIMARY KEY (app_id=? AND user_id=? AND event_id=? AND ts>?)", "Index Cond: ((app_id = '1'::bigint) AND (user_id = jsonb_array_elements_text.value)"},
		// The events a user's linked sessions logged without a userId: a
		// search of the links by user, then of the session's events.
		// On SQLite a session's events are in event_users' runs, under
		// the app's id negated: the link, then the same search as a user's.
		{"by linked session", db.eng.covariateEvents('u'), "SEARCH l USING COVERING INDEX session_links_user (app_id=? AND user_id=?); SEARCH e USING PRIMARY KEY (app_id=? AND user_id=? AND event_id=? AND ts>?)", "Index Cond: ((app_id = l.app_id) AND (session_id = l.session_id)"},
		{"links by user", db.eng.covariateEvents('u'), "SEARCH l USING COVERING INDEX session_links_user (app_id=? AND user_id=?)", "session_links_user"},
		{"by session", db.eng.covariateEvents('s'), "SEARCH e USING PRIMARY KEY (app_id=? AND user_id=? AND event_id=? AND ts>?)", "Index Cond: ((app_id = '1'::bigint) AND (session_id = jsonb_array_elements_text.value)"},
	} {
		want := tc.sqlite
		if db.pgEngine() != nil {
			want = tc.pg
		}
		args := []any{`["a","b"]`, 1, "buy", 0}
		if tc.q == db.eng.covariateEvents('u') {
			args = append(args, args...)
		}
		got := queryPlan(t, conn, explain+tc.q, args...)
		if !strings.Contains(got, want) {
			t.Errorf("%s: plan %q: want %q, a search of the index for each key", tc.name, got, want)
		}
	}
}

// TestCovariateLinksPlan checks that a commit's covariates find its users'
// linked sessions by a search of the links by user for each key, in an
// app of 20,000 links: a walk of the app's links costs every commit that
// counts covariates the app's size.
func TestCovariateLinksPlan(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	conn, explain := planAtScale(t, db, "session_links", `INSERT INTO session_links (app_id, session_id, user_id, linked_at)
		SELECT ?, 's-' || i, 'u-' || i, 0 FROM n`, app)
	want := "SCAN u VIRTUAL TABLE INDEX 1:; SEARCH l USING COVERING INDEX session_links_user (app_id=? AND user_id=?)"
	if db.pgEngine() != nil {
		want = fmt.Sprintf("Index Cond: ((app_id = '%d'::bigint) AND (user_id = jsonb_array_elements_text_1.value))", app)
	}
	list := `["u-1","u-2"]`
	if got := queryPlan(t, conn, explain+db.eng.covariateEvents('u'), list, app, "buy", 0, list, app, "buy", 0); !strings.Contains(got, want) {
		t.Errorf("plan %q: want %q", got, want)
	}
}

// planConn is a connection of db for EXPLAIN, and the EXPLAIN that ends
// each plan row with its text. On PostgreSQL scans are priced out on it:
// an empty table is cheapest to scan, and the plan should show whether
// the query can use an index at all.
func planConn(t *testing.T, db *DB) (*sql.Conn, string) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if db.pgEngine() == nil {
		return conn, `EXPLAIN QUERY PLAN `
	}
	if _, err := conn.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.ExecContext(ctx, `RESET enable_seqscan`) })
	return conn, `EXPLAIN `
}

// queryPlan is the last column of each row of an EXPLAIN, joined.
func queryPlan(t *testing.T, conn *sql.Conn, q string, args ...any) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, fmt.Sprint(vals[len(vals)-1]))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// TestCovariatesOfFreshUsers writes several users' first assignments in
// one commit each, as the group commit does, and checks their covariates:
// a user the commit itself records for the first time has none, without
// a query on PostgreSQL; a known user's earlier goal events count, alone
// or beside new users; and a goal event the same commit logs just before
// the assignment is not before it.
func TestCovariatesOfFreshUsers(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0.Add(-3*24*time.Hour))
	for _, e := range []struct {
		user string
		n    int
	}{{"known-1", 2}, {"known-2", 1}, {"known-3", 3}} {
		for range e.n {
			if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", UserID: e.user}); err != nil {
				t.Fatal(err)
			}
		}
	}
	clock.Set(eventsT0)
	c := mustCreateCampaign(t, db, app, "buy", []testArm{{alloc: 50, control: true}, {alloc: 50}})
	lc, err := db.liveCampaign(ctx, app, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// users are assigned in one commit, after that commit logs a goal
		// event for each of events.
		users, events []string
		want          []int64
	}{
		{"AllNew", []string{"new-1", "new-2", "new-3"}, nil, []int64{0, 0, 0}},
		// Updating a known user's last sighting returns its row too: it
		// must not pass for a new one.
		{"KnownAlone", []string{"known-2"}, nil, []int64{1}},
		{"KnownBesideNew", []string{"new-4", "known-1", "new-5"}, nil, []int64{0, 2, 0}},
		{"EventInTheSameCommit", []string{"new-6", "new-7"}, []string{"new-6"}, []int64{0, 0}},
		{"KnownWithEventInTheSameCommit", []string{"known-3"}, []string{"known-3"}, []int64{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock.Add(time.Minute)
			outs := make([]assignOutcome, len(tc.users))
			err := db.withTx(ctx, func(tx *Tx) error {
				for _, u := range tc.events {
					if err := tx.logEvent(app, &EventInput{EventID: "buy", UserID: u}, nil, nil, &EventResult{}); err != nil {
						return err
					}
				}
				for i, u := range tc.users {
					if err := tx.assign(lc, &VariantRequest{UserID: u}, 'u', u, &outs[i]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, u := range tc.users {
				if !outs[i].recorded {
					t.Fatalf("%s: not recorded as a first assignment: %+v", u, outs[i])
				}
				if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, storedKey('u', u)); got != tc.want[i] {
					t.Errorf("%s: covariate %d, want %d", u, got, tc.want[i])
				}
				if n := countRows(t, db, `SELECT count(*) FROM users WHERE app_id = ? AND user_id = ?`, app, u); n != 1 {
					t.Errorf("%s: %d users rows, want 1", u, n)
				}
			}
		})
	}
	// The sums analytics reads agree with the rows.
	if got := mustScalar(t, db, `SELECT sum(cuped_sum_x) FROM campaign_variants WHERE campaign_id = ?`, c.ID); got != 6 {
		t.Errorf("cuped_sum_x over the variants %d, want 6", got)
	}
}

// TestForgottenReturningUserCostsNoCovariate: a returning user whom the
// memory forgot is answered from the stored assignment, and their goal
// events since are not counted: only a first assignment has a covariate.
// The count of goal events is a query per commit, and a query that, for
// users with many events, is the costliest part of it.
func TestForgottenReturningUserCostsNoCovariate(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", UserID: "known"}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	c := mustCreateCampaign(t, db, app, "buy", []testArm{{alloc: 50, control: true}, {alloc: 50}})
	variant := func(user string) string {
		t.Helper()
		b, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: user}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first := variant("known")
	if !strings.Contains(first, `"impressionRecorded":true`) {
		t.Fatalf("first answer %s, want a recorded impression", first)
	}
	if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, storedKey('u', "known")); got != 1 {
		t.Fatalf("covariate %d, want 1 (the goal event before the assignment)", got)
	}
	for range 3 {
		clock.Add(time.Minute)
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", UserID: "known"}); err != nil {
			t.Fatal(err)
		}
	}

	db.assigned = newUserCache(1<<10, &db.userEpoch) // as a full shard starts over
	reads := db.covariateReads.Load()
	again := variant("known")
	if want := strings.Replace(first, `"impressionRecorded":true`, `"impressionRecorded":false`, 1); again != want {
		t.Fatalf("returning answer %s, want %s", again, want)
	}
	if got := db.covariateReads.Load() - reads; got != 0 {
		t.Errorf("%d covariate queries for a returning user, want 0", got)
	}
	if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, storedKey('u', "known")); got != 1 {
		t.Errorf("covariate %d after the return, want 1", got)
	}
	if got := mustScalar(t, db, `SELECT sum(impressions) FROM campaign_variants WHERE campaign_id = ?`, c.ID); got != 1 {
		t.Errorf("impressions %d, want 1", got)
	}

	// A new user still has theirs counted, by a query when the commit
	// knew them before.
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", UserID: "second"}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	reads = db.covariateReads.Load()
	variant("second")
	if got := db.covariateReads.Load() - reads; got != 1 {
		t.Errorf("%d covariate queries for a known user's first assignment, want 1", got)
	}
	if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, storedKey('u', "second")); got != 1 {
		t.Errorf("second: covariate %d, want 1", got)
	}
}
