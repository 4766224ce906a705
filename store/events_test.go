package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/fixture"
	"service/internal/testclock"
	"service/stats"
)

// eventsT0 is when event tests start; their campaigns end eventsRun later.
var eventsT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const eventsRun = 30 * 24 * time.Hour

// testArm is one variant as a test wants it: allocation, control flag and
// the counters to give it.
type testArm struct {
	alloc       float64
	control     bool
	impressions int64
	conversions int64
}

// mustCreateCampaign creates an active campaign with the goal event and one
// variant per arm (counters untouched), returning it with its variants in
// ascending id order.
func mustCreateCampaign(tb testing.TB, db *DB, appID int64, goal string, arms []testArm) *Campaign {
	tb.Helper()
	ctx := context.Background()
	vs := make([]VariantInput, len(arms))
	for i, a := range arms {
		name := fmt.Sprintf("Block %d", i)
		cv, err := db.CreateContent(ctx, appID, ContentInput{Name: &name, Status: ptr(ContentPublished)})
		if err != nil {
			tb.Fatal(err)
		}
		vname, alloc, control := fmt.Sprintf("Arm %d", i), a.alloc, a.control
		vs[i] = VariantInput{Name: &vname, ContentViewID: &cv.ID, TrafficAllocation: &alloc, IsControl: &control}
	}
	name, status := "Analytics", CampaignActive
	end, _ := json.Marshal(db.Now().Add(eventsRun).Format(time.RFC3339))
	g, _ := json.Marshal(goal)
	c, err := db.CreateCampaign(ctx, appID, 0, CampaignInput{Name: &name, Status: &status, EndDate: end, GoalEventID: g, Variants: &vs})
	if err != nil {
		tb.Fatal(err)
	}
	if c.Status != CampaignActive {
		tb.Fatalf("campaign status=%s, want active", c.Status)
	}
	sort.Slice(c.Variants, func(i, j int) bool { return c.Variants[i].ID < c.Variants[j].ID })
	return c
}

// setCounters writes a variant's counters directly, as if that many users
// had seen and converted.
func setCounters(tb testing.TB, db *DB, variantID, impressions, conversions int64) {
	tb.Helper()
	if _, err := db.write.Exec(`UPDATE campaign_variants SET impressions = ?, conversions = ? WHERE id = ?`, impressions, conversions, variantID); err != nil {
		tb.Fatal(err)
	}
}

// analyticsWant is the analytics computed independently of stats.Analyze.
type analyticsWant struct {
	totalImpr, totalConv int64
	average              float64
	pValue               *float64
	significant          bool
	winner               int // arm index, -1 none
	rates                []float64
	uplift, armP         []*float64
	lower, upper         []*float64
	srmP                 *float64
	srmDetected          bool
	sufficient           bool
}

// refChi2x2 is Pearson's chi-square of the 2x2 table of conversions and
// non-conversions of two arms; for a pooled z-test z² equals it.
func refChi2x2(c1, n1, c2, n2 int64) (float64, bool) {
	a, b, c, d := float64(c1), float64(n1-c1), float64(c2), float64(n2-c2)
	den := (a + b) * (c + d) * (a + c) * (b + d)
	if den == 0 {
		return 0, false
	}
	return (a + b + c + d) * (a*d - b*c) * (a*d - b*c) / den, true
}

// refHolm adjusts p-values by Holm's step-down rule, written out plainly.
func refHolm(p []float64) []float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	adj := make([]float64, len(p))
	run := 0.0
	for rank, i := range idx {
		run = math.Max(run, math.Min(1, float64(len(p)-rank)*p[i]))
		adj[i] = run
	}
	return adj
}

func refExpect(tb testing.TB, arms []testArm) analyticsWant {
	tb.Helper()
	w := analyticsWant{winner: -1, sufficient: true}
	n := len(arms)
	w.rates = make([]float64, n)
	w.uplift, w.armP = make([]*float64, n), make([]*float64, n)
	w.lower, w.upper = make([]*float64, n), make([]*float64, n)
	ctrl := 0
	for i, a := range arms {
		if a.control {
			ctrl = i
			break
		}
	}
	rate := func(a testArm) float64 {
		if a.impressions == 0 {
			return 0
		}
		return float64(a.conversions) / float64(a.impressions)
	}
	var tested []int
	var raw []float64
	for i, a := range arms {
		w.totalImpr += a.impressions
		w.totalConv += a.conversions
		w.rates[i] = rate(a) * 100
		if a.impressions > 0 {
			lo, hi, ok := stats.Wilson(a.conversions, a.impressions, stats.Z95)
			if !ok {
				tb.Fatalf("Wilson(%d, %d) undefined", a.conversions, a.impressions)
			}
			w.lower[i], w.upper[i] = ptr(lo*100), ptr(hi*100)
		}
		if a.impressions < 1000 || a.conversions < 100 {
			w.sufficient = false
		}
		c := arms[ctrl]
		if i == ctrl {
			continue
		}
		if a.impressions > 0 && rate(c) > 0 {
			w.uplift[i] = ptr((rate(a) - rate(c)) / rate(c) * 100)
		}
		// Pearson's rule for a 2×2 table: every expected cell count, row
		// total × column total / N, at least 5; below it the test is not
		// valid and the treatment has no p-value.
		valid := a.impressions > 0 && c.impressions > 0
		if valid {
			nAll, cAll := float64(a.impressions+c.impressions), float64(a.conversions+c.conversions)
			for _, row := range []float64{float64(a.impressions), float64(c.impressions)} {
				if row*cAll/nAll < 5-1e-9 || row*(nAll-cAll)/nAll < 5-1e-9 {
					valid = false
				}
			}
		}
		if valid {
			p := 1.0 // no variation at all: no evidence of a difference
			if chi2, ok := refChi2x2(a.conversions, a.impressions, c.conversions, c.impressions); ok {
				p = stats.ChiSquareSF(chi2, 1)
				// For one degree of freedom the survival function is
				// erfc(√(x/2)): a check that needs nothing from stats.
				if alt := math.Erfc(math.Sqrt(chi2 / 2)); math.Abs(alt-p) > 1e-12 {
					tb.Fatalf("ChiSquareSF(%g,1)=%g, erfc form %g", chi2, p, alt)
				}
			}
			w.armP[i] = ptr(p)
			tested = append(tested, i)
			raw = append(raw, p)
		}
	}
	if w.totalImpr > 0 {
		w.average = float64(w.totalConv) / float64(w.totalImpr) * 100
	}
	if len(tested) > 0 {
		adj := refHolm(raw)
		best := slices.Min(adj)
		w.pValue = &best
		w.significant = best < 0.05
		if w.significant {
			w.winner = ctrl
			for j, i := range tested {
				if adj[j] < 0.05 && rate(arms[i]) > rate(arms[w.winner]) {
					w.winner = i
				}
			}
		}
	}
	if n >= 2 && w.totalImpr > 0 {
		var sum float64
		for _, a := range arms {
			sum += a.alloc
		}
		chi2, k := 0.0, 0
		for _, a := range arms {
			if a.alloc == 0 {
				continue
			}
			k++
			e := float64(w.totalImpr) * a.alloc / sum
			chi2 += (float64(a.impressions) - e) * (float64(a.impressions) - e) / e
		}
		// Closed forms of the chi-square survival function.
		var p float64
		switch k - 1 {
		case 1:
			p = math.Erfc(math.Sqrt(chi2 / 2))
		case 2:
			p = math.Exp(-chi2 / 2)
		default:
			tb.Fatalf("no closed form for %d degrees of freedom", k-1)
		}
		w.srmP, w.srmDetected = &p, p < 0.001
	}
	return w
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

func samePtr(tb testing.TB, what string, got, want *float64) {
	tb.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		tb.Fatalf("%s=%v, want %v", what, fmtPtr(got), fmtPtr(want))
	case !near(*got, *want):
		tb.Fatalf("%s=%.15g, want %.15g", what, *got, *want)
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func TestEventsAnalyticsReference(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	for _, tc := range []struct {
		name string
		arms []testArm
		// Plain facts of the case, checked besides the computed figures.
		significant bool
		winner      int
	}{
		{"Reference", []testArm{{50, true, 1000, 100}, {50, false, 1000, 150}}, true, 1},
		{"NotSignificant", []testArm{{50, true, 1000, 100}, {50, false, 1000, 110}}, false, -1},
		{"TreatmentWorse", []testArm{{50, true, 1000, 150}, {50, false, 1000, 100}}, true, 0},
		{"ControlNotFirst", []testArm{{50, false, 1000, 150}, {50, true, 1000, 100}}, true, 0},
		{"ThreeArmsHolm", []testArm{{34, true, 1000, 100}, {33, false, 1000, 130}, {33, false, 1000, 150}}, true, 2},
		{"HolmRemovesSignificance", []testArm{{34, true, 1000, 100}, {33, false, 1000, 128}, {33, false, 1000, 101}}, false, -1},
		{"SampleRatioMismatch", []testArm{{50, true, 1000, 100}, {50, false, 1200, 120}}, false, -1},
		{"WeightedAllocationFits", []testArm{{90, true, 9000, 900}, {10, false, 1000, 100}}, false, -1},
		{"ZeroImpressions", []testArm{{50, true, 0, 0}, {50, false, 0, 0}}, false, -1},
		{"ZeroConversions", []testArm{{50, true, 500, 0}, {50, false, 500, 0}}, false, -1},
		{"ControlRateZero", []testArm{{50, true, 500, 0}, {50, false, 500, 10}}, true, 1},
		{"TreatmentWithoutImpressions", []testArm{{50, true, 1000, 100}, {50, false, 0, 0}}, false, -1},
		{"EveryoneConverts", []testArm{{50, true, 100, 100}, {50, false, 100, 100}}, false, -1},
		{"Insufficient", []testArm{{50, true, 999, 150}, {50, false, 1000, 150}}, false, -1},
		// Below the z-test's rule the raw p of 0.046 decides nothing.
		{"OneAgainstThree", []testArm{{50, true, 1, 0}, {50, false, 3, 3}}, false, -1},
		{"TwoAgainstTwo", []testArm{{50, true, 2, 0}, {50, false, 2, 2}}, false, -1},
		{"SmallArmLeftOutOfHolm", []testArm{{34, true, 1000, 100}, {33, false, 1000, 150}, {33, false, 12, 3}}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCreateCampaign(t, db, app, "purchase", tc.arms)
			for i, a := range tc.arms {
				setCounters(t, db, c.Variants[i].ID, a.impressions, a.conversions)
			}
			want := refExpect(t, tc.arms)
			if want.significant != tc.significant || want.winner != tc.winner {
				t.Fatalf("reference: significant=%v winner=%d, case says %v %d", want.significant, want.winner, tc.significant, tc.winner)
			}
			got, err := db.CampaignAnalytics(ctx, app, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.CampaignID != c.ID || got.Status != CampaignActive {
				t.Fatalf("campaignId=%d status=%s, want %d active", got.CampaignID, got.Status, c.ID)
			}
			if got.TotalImpressions != want.totalImpr || got.TotalConversions != want.totalConv || !near(got.AverageConversionRate, want.average) {
				t.Fatalf("totals=%d/%d avg %g, want %d/%d avg %g", got.TotalImpressions, got.TotalConversions, got.AverageConversionRate, want.totalImpr, want.totalConv, want.average)
			}
			samePtr(t, "pValue", got.PValue, want.pValue)
			if got.StatisticalSignificance != want.significant {
				t.Fatalf("statisticalSignificance=%v, want %v", got.StatisticalSignificance, want.significant)
			}
			var wantLevel *float64
			if want.pValue != nil {
				wantLevel = ptr((1 - *want.pValue) * 100)
			}
			samePtr(t, "confidenceLevel", got.ConfidenceLevel, wantLevel)
			switch {
			case want.winner < 0 && (got.WinningVariantID != nil || got.WinningVariant != nil):
				t.Fatalf("winningVariantId=%d, want null", *got.WinningVariantID)
			case want.winner >= 0 && (got.WinningVariantID == nil || *got.WinningVariantID != c.Variants[want.winner].ID):
				t.Fatalf("winningVariantId=%v, want %d", got.WinningVariantID, c.Variants[want.winner].ID)
			case want.winner >= 0 && (got.WinningVariant == nil || got.WinningVariant.VariantID != c.Variants[want.winner].ID):
				t.Fatalf("winningVariant=%+v, want variant %d", got.WinningVariant, c.Variants[want.winner].ID)
			}
			samePtr(t, "sampleRatioMismatch.pValue", got.SampleRatioMismatch.PValue, want.srmP)
			if got.SampleRatioMismatch.Detected != want.srmDetected {
				t.Fatalf("sampleRatioMismatch.detected=%v, want %v", got.SampleRatioMismatch.Detected, want.srmDetected)
			}
			if got.SufficientData != want.sufficient {
				t.Fatalf("sufficientData=%v, want %v", got.SufficientData, want.sufficient)
			}
			if len(got.Variants) != len(tc.arms) {
				t.Fatalf("%d variants, want %d", len(got.Variants), len(tc.arms))
			}
			for i, v := range got.Variants {
				a, cv := tc.arms[i], c.Variants[i]
				p := fmt.Sprintf("variants[%d].", i)
				if v.VariantID != cv.ID || v.VariantName != cv.Name || v.IsControl != a.control || v.TrafficAllocation != a.alloc ||
					v.Impressions != a.impressions || v.Conversions != a.conversions || !near(v.ConversionRate, want.rates[i]) {
					t.Fatalf("%s=%+v, want id %d %s control %v alloc %g %d/%d rate %g", p, v, cv.ID, cv.Name, a.control, a.alloc, a.impressions, a.conversions, want.rates[i])
				}
				samePtr(t, p+"uplift", v.Uplift, want.uplift[i])
				samePtr(t, p+"pValue", v.PValue, want.armP[i])
				samePtr(t, p+"lowerBound", v.LowerBound, want.lower[i])
				samePtr(t, p+"upperBound", v.UpperBound, want.upper[i])
				switch {
				case v.ConfidenceInterval == nil && want.lower[i] != nil:
					t.Fatalf("%sconfidenceInterval=null, want [%g, %g]", p, *want.lower[i], *want.upper[i])
				case v.ConfidenceInterval != nil && (v.LowerBound == nil || v.UpperBound == nil ||
					v.ConfidenceInterval.Lower != *v.LowerBound || v.ConfidenceInterval.Upper != *v.UpperBound):
					t.Fatalf("%sconfidenceInterval=%+v, bounds %v/%v", p, v.ConfidenceInterval, fmtPtr(v.LowerBound), fmtPtr(v.UpperBound))
				}
			}
			if tc.name == "Reference" {
				if up := got.Variants[1].Uplift; up == nil || !near(*up, 50) {
					t.Fatalf("uplift=%v, want 50", fmtPtr(up))
				}
				if !got.SufficientData || got.SampleRatioMismatch.Detected || *got.SampleRatioMismatch.PValue != 1 {
					t.Fatalf("sufficientData=%v srm=%+v, want true and p 1", got.SufficientData, got.SampleRatioMismatch)
				}
			}

			// The route writes this struct as JSON: it must encode (NaN and
			// Inf cannot) and carry every documented field.
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatalf("analytics do not encode: %v", err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"campaignId", "status", "totalImpressions", "totalConversions", "averageConversionRate",
				"statisticalSignificance", "pValue", "confidenceLevel", "winningVariantId", "variants", "sampleRatioMismatch", "sufficientData"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("JSON lacks %s: %s", k, b)
				}
			}
			for i, v := range m["variants"].([]any) {
				for _, k := range []string{"variantId", "variantName", "impressions", "conversions", "conversionRate", "uplift", "pValue", "confidenceInterval", "lowerBound", "upperBound"} {
					if _, ok := v.(map[string]any)[k]; !ok {
						t.Fatalf("JSON variants[%d] lacks %s: %s", i, k, b)
					}
				}
			}
			srm := m["sampleRatioMismatch"].(map[string]any)
			if _, ok := srm["pValue"]; !ok {
				t.Fatalf("JSON sampleRatioMismatch lacks pValue: %s", b)
			}

			// The campaign's own totals agree.
			full, err := db.FindCampaignByID(ctx, app, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if full.Analytics == nil || full.Analytics.TotalImpressions != want.totalImpr || full.Analytics.TotalConversions != want.totalConv {
				t.Fatalf("campaign analytics=%+v, want %d/%d", full.Analytics, want.totalImpr, want.totalConv)
			}
		})
	}

	t.Run("NotFound", func(t *testing.T) {
		c := mustCreateCampaign(t, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})
		other, err := db.CreateApp(ctx, "other", "free", 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.CampaignAnalytics(ctx, other.ID, c.ID)
		wantCode(t, err, ENOTFOUND)
		_, err = db.CampaignAnalytics(ctx, app, c.ID+1000)
		wantCode(t, err, ENOTFOUND)
	})
}

func TestEventsLogIDDuplicate(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	first, err := db.LogEvent(ctx, app, &EventInput{EventID: "signup", UserID: "u1", LogID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || !first.Success || first.ID < 1 || first.EventID != "signup" || !first.Timestamp.Equal(eventsT0) {
		t.Fatalf("first=%+v", first)
	}
	clock.Set(eventsT0.Add(time.Hour))
	again, err := db.LogEvent(ctx, app, &EventInput{EventID: "other", LogID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Duplicate || again.ID != first.ID || again.EventID != "signup" || !again.Timestamp.Equal(eventsT0) {
		t.Fatalf("retry=%+v, want the first event %+v marked duplicate", again, first)
	}
	// Without a logId every call is a new event.
	for range 2 {
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "signup"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := countRows(t, db, `SELECT COUNT(*) FROM events WHERE app_id = ?`, app); got != 3 {
		t.Fatalf("%d events stored, want 3", got)
	}
	_, err = db.LogEvent(ctx, app, &EventInput{})
	wantCode(t, err, EINVALID)
}

// mustAssign assigns a user through the SDK path.
func mustAssign(tb testing.TB, db *DB, appID, campaignID int64, req VariantRequest) {
	tb.Helper()
	b, err := db.Variant(context.Background(), appID, campaignID, &req, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["variantId"] == nil {
		tb.Fatalf("not assigned: %s (%v)", b, err)
	}
}

func countConversions(tb testing.TB, db *DB, campaignID int64) int64 {
	return countRows(tb, db, `SELECT COALESCE(SUM(conversions), 0) FROM campaign_variants WHERE campaign_id = ?`, campaignID)
}

// TestEventsConcurrentLogID sends one logId from 50 goroutines at once.
func TestEventsConcurrentLogID(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	c := mustCreateCampaign(t, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})
	mustAssign(t, db, app, c.ID, VariantRequest{UserID: "u1"})
	clock.Set(eventsT0.Add(time.Second))
	const n = 50
	results := make([]*EventResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = db.LogEvent(ctx, app, &EventInput{EventID: "purchase", UserID: "u1", LogID: "same"})
		})
	}
	close(start)
	wg.Wait()
	dups := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if results[i].ID != results[0].ID || results[i].EventID != "purchase" || !results[i].Timestamp.Equal(results[0].Timestamp.Time) {
			t.Fatalf("call %d answered %+v, call 0 %+v", i, results[i], results[0])
		}
		if results[i].Duplicate {
			dups++
		}
	}
	if dups != n-1 {
		t.Fatalf("%d answers marked duplicate, want %d", dups, n-1)
	}
	if got := countRows(t, db, `SELECT COUNT(*) FROM events WHERE log_id = 'same'`); got != 1 {
		t.Fatalf("%d rows, want 1", got)
	}
	if got := countConversions(t, db, c.ID); got != 1 {
		t.Fatalf("%d conversions, want 1", got)
	}
}

// TestEventsConcurrentConversions converts many users at once, each twice:
// the group commit must neither lose nor double a conversion.
func TestEventsConcurrentConversions(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	c := mustCreateCampaign(t, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})
	const users = 100
	for i := range users {
		mustAssign(t, db, app, c.ID, VariantRequest{UserID: fmt.Sprint("u", i)})
	}
	clock.Set(eventsT0.Add(time.Second))
	var wg sync.WaitGroup
	errs := make(chan error, 3*users)
	for i := range 3 * users {
		wg.Go(func() {
			// A third of the events come from users never assigned.
			user := fmt.Sprint("u", i%users)
			if i >= 2*users {
				user = fmt.Sprint("x", i)
			}
			if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "purchase", UserID: user}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := countConversions(t, db, c.ID); got != users {
		t.Fatalf("%d conversions, want %d", got, users)
	}
	if got := countRows(t, db, `SELECT COUNT(*) FROM assignments WHERE campaign_id = ? AND converted_at IS NOT NULL`, c.ID); got != users {
		t.Fatalf("%d converted assignments, want %d", got, users)
	}
	if got := countRows(t, db, `SELECT COUNT(*) FROM events WHERE app_id = ?`, app); got != 3*users {
		t.Fatalf("%d events, want %d", got, 3*users)
	}
}

// TestEventsConvertEveryGoal logs events that are the goal of several
// active campaigns, or of one among others: each converts the user in
// every campaign whose goal it is, and the campaigns' shared list stays
// whole for the next event.
func TestEventsConvertEveryGoal(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	arms := []testArm{{50, true, 0, 0}, {50, false, 0, 0}}
	campaigns := map[string]*Campaign{}
	for _, name := range []string{"buy-1", "signup", "buy-2", "share", "buy-3"} {
		goal := name
		if strings.HasPrefix(name, "buy-") {
			goal = "purchase"
		}
		campaigns[name] = mustCreateCampaign(t, db, app, goal, arms)
		mustAssign(t, db, app, campaigns[name].ID, VariantRequest{UserID: "u1"})
	}
	clock.Set(eventsT0.Add(time.Second))
	for _, ev := range []string{"purchase", "share", "signup"} {
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: ev, UserID: "u1"}); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]int64{"buy-1": 1, "buy-2": 1, "buy-3": 1, "share": 1, "signup": 1} {
		if got := countConversions(t, db, campaigns[name].ID); got != want {
			t.Errorf("campaign %s: %d conversions, want %d", name, got, want)
		}
	}
}

// mustOpenGoalCampaign opens a database with an active two-variant
// campaign whose goal is "purchase", assigns users in it, and moves the
// clock a second past the impressions.
func mustOpenGoalCampaign(tb testing.TB, users ...string) (*DB, int64, *Campaign, *testclock.Clock) {
	tb.Helper()
	db, app, clock := mustOpenApp(tb, eventsT0)
	c := mustCreateCampaign(tb, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})
	for _, u := range users {
		mustAssign(tb, db, app, c.ID, VariantRequest{UserID: u})
	}
	clock.Set(eventsT0.Add(time.Second))
	return db, app, c, clock
}

// TestEventsConversionStaleCache pauses a campaign through another handle
// on the same file, which the first handle's campaign cache cannot see: the
// conversion must still respect the status on disk.
func TestEventsConversionStaleCache(t *testing.T) {
	ctx := context.Background()
	db, app, c, clock := mustOpenGoalCampaign(t, "u1", "u2")
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "purchase", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	other := mustOpenDBAt(t, db.path)
	other.Now = clock.Now
	if _, err := other.SetCampaignStatus(ctx, app, c.ID, CampaignPaused); err != nil {
		t.Fatal(err)
	}
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "purchase", UserID: "u2"}); err != nil {
		t.Fatal(err)
	}
	if got := countConversions(t, db, c.ID); got != 1 {
		t.Fatalf("conversions=%d, want 1 (u2 converted while paused)", got)
	}
}

// TestEventsRepeatGoalReadsNoCampaign logs a converted user's goal event
// again: the converted cache answers it without reading the campaign,
// which had been a query in every commit of a busy event stream, while an
// unconverted user's goal event still reads it.
func TestEventsRepeatGoalReadsNoCampaign(t *testing.T) {
	ctx := context.Background()
	db, app, c, _ := mustOpenGoalCampaign(t, "u1", "u2")
	logPurchase := func(user string) {
		t.Helper()
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "purchase", UserID: user}); err != nil {
			t.Fatal(err)
		}
	}
	logPurchase("u1")
	reads := db.runningReads.Load()
	if reads == 0 {
		t.Fatal("the first conversion did not check the campaign")
	}
	for range 3 {
		logPurchase("u1")
	}
	if got := db.runningReads.Load(); got != reads {
		t.Errorf("repeat goal events of a converted user read the campaign %d times, want 0", got-reads)
	}
	logPurchase("u2")
	if got := db.runningReads.Load(); got == reads {
		t.Error("an unconverted user's goal event did not check the campaign")
	}
	if got := countConversions(t, db, c.ID); got != 2 {
		t.Errorf("conversions=%d, want 2", got)
	}
}

// mustLogEvents logs n events at the clock's time t from several goroutines, so
// the group commit batches them.
func mustLogEvents(tb testing.TB, db *DB, clock *testclock.Clock, appID int64, t time.Time, eventID string, n int) {
	tb.Helper()
	clock.Set(t)
	var wg sync.WaitGroup
	var next atomic.Int64
	var failed atomic.Value
	for range 16 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, err := db.LogEvent(context.Background(), appID, &EventInput{EventID: eventID}); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatal(err)
	}
}

func TestEventsDeleteBefore(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0)
	other, err := db.CreateApp(ctx, "other", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	// A conversion counted by an event that retention later deletes stays
	// counted: analytics read counters, not events.
	c := mustCreateCampaign(t, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})
	mustAssign(t, db, app, c.ID, VariantRequest{UserID: "u1"})
	cutoff := eventsT0.Add(10 * 24 * time.Hour)
	clock.Set(eventsT0.Add(time.Second))
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "purchase", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	// More than two delete batches of old events, some in another app, and
	// a few on each side of the cutoff.
	mustLogEvents(t, db, clock, app, eventsT0.Add(time.Hour), "old", 2*retentionBatch+100)
	mustLogEvents(t, db, clock, other.ID, eventsT0.Add(2*time.Hour), "old", 10)
	mustLogEvents(t, db, clock, app, cutoff.Add(-time.Millisecond), "old", 3)
	mustLogEvents(t, db, clock, app, cutoff, "kept", 2)
	mustLogEvents(t, db, clock, app, cutoff.Add(time.Millisecond), "kept", 4)
	mustLogEvents(t, db, clock, other.ID, cutoff.Add(time.Hour), "kept", 5)
	const old = 1 + 2*retentionBatch + 100 + 10 + 3

	n, err := db.DeleteEventsBefore(ctx, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if n != old {
		t.Fatalf("deleted %d, want %d", n, old)
	}
	if got := countRows(t, db, `SELECT COUNT(*) FROM events WHERE event_id != 'kept'`); got != 0 {
		t.Fatalf("%d old events left", got)
	}
	if got := countRows(t, db, `SELECT COUNT(*) FROM events WHERE event_id = 'kept' AND ts >= ?`, ms(cutoff)); got != 11 {
		t.Fatalf("%d recent events left, want 11", got)
	}
	list, err := db.FindEvents(ctx, app, EventFilter{Limit: MaxEventsLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 6 || !list[len(list)-1].Timestamp.Equal(cutoff) {
		t.Fatalf("app events=%d, oldest %v, want 6 from %v", len(list), list[len(list)-1].Timestamp, cutoff)
	}
	if n, err := db.DeleteEventsBefore(ctx, cutoff); err != nil || n != 0 {
		t.Fatalf("second pass deleted %d (%v), want 0", n, err)
	}
	if got := countConversions(t, db, c.ID); got != 1 {
		t.Fatalf("conversions=%d after retention, want 1", got)
	}
}

// The analytics API reproduces published worked z-tests (the shared
// testdata/stats_tables.json): the treatment's pValue is the two-tailed p
// of the pooled two-proportion test against the control.
func TestEventsAnalyticsPublishedExamples(t *testing.T) {
	ctx := context.Background()
	for _, ex := range fixture.Stats(t).ZTestWorked.Rows {
		t.Run(ex.Name, func(t *testing.T) {
			db, app, _ := mustOpenApp(t, eventsT0)
			c := mustCreateCampaign(t, db, app, "purchase", []testArm{{alloc: 50, control: true}, {alloc: 50}})
			setCounters(t, db, c.Variants[0].ID, ex.N2, ex.C2)
			setCounters(t, db, c.Variants[1].ID, ex.N1, ex.C1)
			got, err := db.CampaignAnalytics(ctx, app, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			p := got.Variants[1].PValue
			if p == nil || math.Abs(*p-ex.P) > ex.TolP {
				t.Fatalf("treatment pValue=%s, want %v (±%v) as published", fmtPtr(p), ex.P, ex.TolP)
			}
		})
	}
}

// TestEventsBatchedIDs logs events from many goroutines at once, so the
// group commit writes them with multi-row statements, and expects every
// answer to carry the id of its own row.
func TestEventsBatchedIDs(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	ctx := context.Background()
	const n = 300
	results := make([]*EventResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = db.LogEvent(ctx, app, batchedEvent(i))
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, r := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		// Columns that are NULL in some rows of a batch and set in others
		// land in the row they belong to.
		var logID string
		var user, session, meta sql.NullString
		if err := db.read.QueryRow(`SELECT log_id, user_id, session_id, metadata FROM events WHERE id = ?`, r.ID).Scan(&logID, &user, &session, &meta); err != nil {
			t.Fatalf("event %d: id %d: %v", i, r.ID, err)
		}
		in := batchedEvent(i)
		if logID != in.LogID || seen[r.ID] {
			t.Fatalf("event %d answered id %d, whose row has logId %q (want %q), seen before %v", i, r.ID, logID, in.LogID, seen[r.ID])
		}
		if user.String != in.UserID || user.Valid != (in.UserID != "") || session.String != in.SessionID || session.Valid != (in.SessionID != "") ||
			meta.String != string(in.Metadata) || meta.Valid != (in.Metadata != nil) {
			t.Fatalf("event %d stored user %v, session %v, metadata %v; want %q, %q, %s", i, user, session, meta, in.UserID, in.SessionID, in.Metadata)
		}
		seen[r.ID] = true
	}
	if got := countRows(t, db, `SELECT count(*) FROM users WHERE app_id = ?`, app); got != 7 {
		t.Fatalf("%d users recorded, want 7", got)
	}
}

// batchedEvent is the i-th event of TestEventsBatchedIDs: a third have
// only a sessionId, half have metadata.
func batchedEvent(i int) *EventInput {
	in := &EventInput{EventID: "view", UserID: fmt.Sprint("u", i%7), LogID: fmt.Sprint("log-", i)}
	if i%3 == 0 {
		in.UserID, in.SessionID = "", fmt.Sprint("s-", i)
	}
	if i%2 == 0 {
		in.Metadata = json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
	}
	return in
}

// TestEventResultAppendJSON checks the event route's hand-written answer
// against encoding/json, which the rest of the API answers with.
func TestEventResultAppendJSON(t *testing.T) {
	ts := NewTime(time.Date(2026, 11, 23, 18, 4, 5, 678_900_000, time.FixedZone("x", 3600)))
	for _, r := range []EventResult{
		{Success: true, ID: 1, EventID: "purchase", Timestamp: ts},
		{Success: true, ID: 1 << 60, EventID: "dup", Timestamp: ts, Duplicate: true},
		{EventID: "", Timestamp: ts},
		{Success: true, ID: 7, EventID: `quote" back\ <tag> & amp`, Timestamp: ts},
		{Success: true, ID: 8, EventID: "ctl\x01\n\t", Timestamp: ts},
		{Success: true, ID: 9, EventID: "café \u2028 😀 \xff", Timestamp: ts},
	} {
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON\n got %s\nwant %s", got, want)
		}
	}
}

func TestCompactJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, `{"a":1}`},
		{`{ "a" : [1, 2] ,"b":"x y"}`, `{"a":[1,2],"b":"x y"}`},
		{"{\n\t\"a\":\r\n{}}", `{"a":{}}`},
		{`{"a":"tab\tin string"}`, `{"a":"tab\tin string"}`},
	} {
		got, err := compactJSON([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("compactJSON(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`{"a":}`, `{"a":1`, `{"a" 1}`, `{ "a": }`} {
		if got, err := compactJSON([]byte(bad)); err == nil {
			t.Errorf("compactJSON(%q) = %q, want an error", bad, got)
		}
	}
}
