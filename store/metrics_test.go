package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"service/stats"
)

// An app that holds only a metric still holds data: deleting it needs
// force, and force takes the metric and its links with it.
func TestMetricsGoWithTheirApp(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
	key, name, typ, event := "signups", "Sign-ups", MetricConversion, "signup"
	m, err := db.CreateMetric(ctx, app, MetricInput{Key: &key, Name: &name, Type: &typ, EventID: &event})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := db.DeleteApp(ctx, app, false)
	wantCode(t, err, EINVALID)
	if err.(*Error).Details["metrics"] != int64(1) {
		t.Fatalf("refusal details %v, want metrics: 1", err.(*Error).Details)
	}
	if counts, err = db.DeleteApp(ctx, app, true); err != nil || counts["metrics"] != 1 {
		t.Fatalf("forced delete: %v, %v", counts, err)
	}
	if n := countRows(t, db, `SELECT COUNT(*) FROM metrics WHERE id = ?`, m.ID); n != 0 {
		t.Fatalf("%d metrics left of the deleted app", n)
	}
}

// metricDef creates a metric from a JSON body, as the API does.
func metricDef(tb testing.TB, db *DB, app int64, body string) int64 {
	tb.Helper()
	var in MetricInput
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		tb.Fatal(err)
	}
	m, err := db.CreateMetric(context.Background(), app, in)
	if err != nil {
		tb.Fatal(err)
	}
	return m.ID
}

// metricCampaign creates an active round-robin campaign of two variants
// (users alternate, the control first) over the metrics, running from the
// clock's now for eventsRun.
func metricCampaign(tb testing.TB, db *DB, app int64, metrics string) *Campaign {
	tb.Helper()
	ctx := context.Background()
	vs := make([]VariantInput, 2)
	for i := range vs {
		name, published := fmt.Sprintf("Block %d", i), "published"
		cv, err := db.CreateContent(ctx, app, ContentInput{Name: &name, Status: &published})
		if err != nil {
			tb.Fatal(err)
		}
		vs[i] = VariantInput{ContentViewID: &cv.ID}
	}
	name, status, rr := "Metrics", CampaignActive, AssignRoundRobin
	end, _ := json.Marshal(db.Now().Add(eventsRun).Format(time.RFC3339))
	c, err := db.CreateCampaign(ctx, app, 0, CampaignInput{Name: &name, Status: &status, EndDate: end, AssignmentType: &rr,
		GoalEventID: json.RawMessage(`"signup"`), Metrics: json.RawMessage(metrics), Variants: &vs})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(c.Variants, func(i, j int) bool { return c.Variants[i].ID < c.Variants[j].ID })
	return c
}

// TestMetricValues logs events and checks each user's value and the
// variants' sums: conversions count once, counts stop at the window's
// end, sums add numbers only and are capped per user, events before the
// assignment or after the campaign count nothing, and a visitor known by
// sessionId counts by it.
func TestMetricValues(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	conv := metricDef(t, db, app, `{"key":"signed","name":"Signed","type":"conversion","eventId":"signup"}`)
	clicks := metricDef(t, db, app, `{"key":"clicks","name":"Clicks","type":"count","eventId":"click","windowHours":1}`)
	capped := metricDef(t, db, app, `{"key":"rev","name":"Revenue","type":"sum","eventId":"buy","property":"amount","cap":100}`)
	raw := metricDef(t, db, app, `{"key":"spend","name":"Spend","type":"sum","eventId":"buy","property":"amount","direction":"decrease"}`)
	c := metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d,%d,%d],"guardrails":[%d]}`, conv, clicks, raw, capped))
	v0, v1 := c.Variants[0].ID, c.Variants[1].ID
	at := func(d time.Duration) { clock.Set(eventsT0.Add(d)) }
	log := func(in EventInput) {
		t.Helper()
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			t.Fatal(err)
		}
	}
	// Round robin: u0, u2 and the session s1 see the control; u1, u3 and
	// (later) u9 the treatment.
	for _, u := range []string{"u0", "u1", "u2", "u3"} {
		mustAssign(t, db, app, c.ID, VariantRequest{UserID: u})
	}
	mustAssign(t, db, app, c.ID, VariantRequest{SessionID: "s1"})

	at(time.Second)
	log(EventInput{EventID: "signup", UserID: "u0"})
	log(EventInput{EventID: "signup", UserID: "u0"})
	log(EventInput{EventID: "click", UserID: "u0"})
	log(EventInput{EventID: "buy", UserID: "u0", Metadata: json.RawMessage(`{"amount":70}`)})
	log(EventInput{EventID: "buy", UserID: "u0", Metadata: json.RawMessage(`{"amount":50}`)})
	log(EventInput{EventID: "buy", UserID: "u1", Metadata: json.RawMessage(`{"amount":"12.5"}`)})
	log(EventInput{EventID: "buy", UserID: "u1"})
	log(EventInput{EventID: "buy", UserID: "u1", Metadata: json.RawMessage(`{"price":5}`)})
	log(EventInput{EventID: "buy", UserID: "u1", Metadata: json.RawMessage(`{"amount":30}`)})
	log(EventInput{EventID: "buy", UserID: "u2", Metadata: json.RawMessage(`{"amount":-5}`)})
	log(EventInput{EventID: "buy", SessionID: "s1", Metadata: json.RawMessage(`{"amount":10}`)})
	log(EventInput{EventID: "buy", UserID: "u9", Metadata: json.RawMessage(`{"amount":40}`)}) // before u9's assignment
	at(30 * time.Minute)
	log(EventInput{EventID: "click", UserID: "u0"})
	at(time.Hour - time.Millisecond) // the window's last moment (u0 was assigned at eventsT0)
	log(EventInput{EventID: "click", UserID: "u0"})
	at(time.Hour) // the window is over
	log(EventInput{EventID: "click", UserID: "u0"})
	mustAssign(t, db, app, c.ID, VariantRequest{UserID: "u9"})
	at(time.Hour + time.Second)
	log(EventInput{EventID: "buy", UserID: "u9", Metadata: json.RawMessage(`{"amount":20}`)})
	at(eventsRun) // the campaign has ended
	log(EventInput{EventID: "buy", UserID: "u1", Metadata: json.RawMessage(`{"amount":1000}`)})

	applyMoves(t, db)
	values := map[string]float64{}
	rows, err := db.read.Query(`SELECT metric_id, user_key, variant_id, value FROM metric_values WHERE campaign_id = ?`, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m, v int64
		var key string
		var x float64
		if err := rows.Scan(&m, &key, &v, &x); err != nil {
			t.Fatal(err)
		}
		values[fmt.Sprint(m, " ", key, " ", v)] = x
	}
	rows.Close()
	want := map[string]float64{
		fmt.Sprint(conv, " u:u0 ", v0):   1,
		fmt.Sprint(clicks, " u:u0 ", v0): 3,
		fmt.Sprint(capped, " u:u0 ", v0): 120, fmt.Sprint(raw, " u:u0 ", v0): 120, // kept before the cap
		fmt.Sprint(capped, " u:u1 ", v1): 30, fmt.Sprint(raw, " u:u1 ", v1): 30,
		fmt.Sprint(capped, " u:u2 ", v0): -5, fmt.Sprint(raw, " u:u2 ", v0): -5,
		fmt.Sprint(capped, " s:s1 ", v0): 10, fmt.Sprint(raw, " s:s1 ", v0): 10,
		fmt.Sprint(capped, " u:u9 ", v1): 20, fmt.Sprint(raw, " u:u9 ", v1): 20,
	}
	if fmt.Sprint(values) != fmt.Sprint(want) {
		t.Fatalf("values\n%v\nwant\n%v", values, want)
	}

	a, err := db.CampaignAnalytics(ctx, app, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	type sums struct{ s, q float64 }
	wantSums := map[int64][2]sums{
		conv:   {{1, 1}, {0, 0}},
		clicks: {{3, 9}, {0, 0}},
		capped: {{100 - 5 + 10, 100*100 + 25 + 100}, {50, 900 + 400}},
		raw:    {{120 - 5 + 10, 120*120 + 25 + 100}, {50, 900 + 400}},
	}
	order := []int64{conv, clicks, raw, capped}
	if len(a.Metrics) != len(order) {
		t.Fatalf("%d metrics in the analytics, want %d", len(a.Metrics), len(order))
	}
	for i, m := range a.Metrics {
		if m.MetricID != order[i] {
			t.Fatalf("metrics[%d] is %d, want %d (secondary in order, then guardrails)", i, m.MetricID, order[i])
		}
		role := RoleSecondary
		if m.MetricID == capped {
			role = RoleGuardrail
		}
		if m.Role != role {
			t.Errorf("metric %d role %s, want %s", m.MetricID, m.Role, role)
		}
		var mom [2]stats.Moments
		for j, v := range m.Variants {
			w := wantSums[m.MetricID][j]
			mom[j] = stats.Moments{N: 3, S: w.s, Q: w.q}
			if v.Users != 3 || math.Abs(v.Total-w.s) > 1e-9 || v.Mean == nil || math.Abs(*v.Mean-w.s/3) > 1e-9 {
				t.Errorf("metric %d variant %d: users %d total %v mean %v, want 3, %v, %v", m.MetricID, j, v.Users, v.Total, v.Mean, w.s, w.s/3)
			}
			if sd, _ := mom[j].Variance(); v.StdDev == nil || math.Abs(*v.StdDev-math.Sqrt(sd)) > 1e-9 {
				t.Errorf("metric %d variant %d: stdDev %v, want %v", m.MetricID, j, v.StdDev, math.Sqrt(sd))
			}
		}
		w, _ := stats.Welch(mom[1], mom[0])
		if d := m.Variants[1].Difference; d == nil || math.Abs(*d-w.Difference) > 1e-9 {
			t.Errorf("metric %d: difference %v, want %v", m.MetricID, d, w.Difference)
		}
	}
}

// An event that no metric of an active campaign counts finds nothing in
// the app's index of metric events and reads nothing more: not the
// campaign's state, not the assignment.
func TestMetricsOtherEventsReadNothing(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	var ids []string
	for i := range 5 {
		ids = append(ids, fmt.Sprint(metricDef(t, db, app, fmt.Sprintf(`{"key":"m%d","name":"M","type":"count","eventId":"buy-%d"}`, i, i))))
	}
	c := metricCampaign(t, db, app, `{"guardrails":[`+strings.Join(ids, ",")+`]}`)
	mustAssign(t, db, app, c.ID, VariantRequest{UserID: "u1"})
	clock.Set(eventsT0.Add(time.Second))
	_, idx, err := db.activeWithMetrics(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx) != 5 || len(idx["buy-0"]) != 1 || idx["view"] != nil {
		t.Fatalf("index %v, want the 5 metric events", idx)
	}
	before := db.runningReads.Load()
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	if got := db.runningReads.Load(); got != before {
		t.Fatalf("an event no metric counts read the campaign's state %d times", got-before)
	}
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy-3", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	if got := db.runningReads.Load(); got != before+1 {
		t.Fatalf("a counted event read the campaign's state %d times, want 1", got-before)
	}
	applyMoves(t, db)
	if n := countRows(t, db, `SELECT COUNT(*) FROM metric_values WHERE campaign_id = ?`, c.ID); n != 1 {
		t.Fatalf("%d values, want the one counted event's", n)
	}
	// A batch counts its events as single ones do.
	if _, err := db.LogEvents(ctx, app, []*EventInput{{EventID: "view", UserID: "u1"}, {EventID: "buy-3", UserID: "u1"}}); err != nil {
		t.Fatal(err)
	}
	applyMoves(t, db)
	if n := countRows(t, db, `SELECT CAST(value AS INTEGER) FROM metric_values WHERE campaign_id = ?`, c.ID); n != 2 {
		t.Fatalf("value %d after the batch, want 2", n)
	}
}

// TestMetricWindowFromMemory: a metric event finds its user's assignment
// time in memory where memory has it, and it is the stored time: for a
// user who took a session's assignment at the link (the session's time,
// not the link's) and for one memory learnt from the database after a
// restart. A window counted from any other time fails here.
func TestMetricWindowFromMemory(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	clicks := metricDef(t, db, app, `{"key":"clicks","name":"Clicks","type":"count","eventId":"click","windowHours":1}`)
	c := metricCampaign(t, db, app, fmt.Sprintf(`{"secondary":[%d]}`, clicks))
	at := func(d time.Duration) { clock.Set(eventsT0.Add(d)) }
	click := func(user string) {
		t.Helper()
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "click", UserID: user}); err != nil {
			t.Fatal(err)
		}
	}
	mustAssign(t, db, app, c.ID, VariantRequest{SessionID: "s"})
	mustAssign(t, db, app, c.ID, VariantRequest{UserID: "w"})
	// What a restarted process knows: nothing.
	db.assigned = newUserCache(1<<10, &db.userEpoch)
	at(30 * time.Minute)
	if _, err := db.IdentifySession(ctx, app, "u", "s", nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{59 * time.Minute, time.Hour + time.Minute} {
		at(d)
		click("u")
		click("w")
	}
	if _, _, ok := db.assigned.getAt(userKey{c.ID, 'u', "w"}); !ok {
		t.Fatal("the assignment read for a metric event was not kept in memory")
	}
	applyMoves(t, db)
	for _, user := range []string{"u", "w"} {
		if got := mustScalar(t, db, `SELECT CAST(value AS INTEGER) FROM metric_values WHERE campaign_id = ? AND metric_id = ? AND user_key = ?`, c.ID, clicks, "u:"+user); got != 1 {
			t.Errorf("%s: %d clicks counted, want 1 (the one within an hour of the assignment)", user, got)
		}
	}
}
