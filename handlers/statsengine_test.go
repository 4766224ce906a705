package handlers

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"service/stats"
)

// TestCampaignStatsEngineField: statsEngine on create, get and update, its
// default, its validation and the state rule (draft only).
func TestCampaignStatsEngineField(t *testing.T) {
	e, _ := evSetup(t)
	a, b := e.mustContent("A", "published"), e.mustContent("B", "published")
	def := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{
		"name": "Default", "variants": []any{map[string]any{"contentViewId": a}, map[string]any{"contentViewId": b}}})
	if def["statsEngine"] != "frequentist" {
		t.Fatalf("default statsEngine=%v, want frequentist", def["statsEngine"])
	}
	for _, engine := range []string{"frequentist", "sequential", "bayesian"} {
		m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{
			"name": engine, "statsEngine": engine,
			"variants": []any{map[string]any{"contentViewId": a}, map[string]any{"contentViewId": b}}})
		got := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d", num(m, "id")), e.Admin, nil)
		if got["statsEngine"] != engine {
			t.Fatalf("GET statsEngine=%v, want %s", got["statsEngine"], engine)
		}
	}

	for _, bad := range []any{"magic", "", 3, "Bayesian"} {
		t.Run(fmt.Sprintf("Create%v", bad), func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{
				"name": "Bad", "statsEngine": bad,
				"variants": []any{map[string]any{"contentViewId": a}, map[string]any{"contentViewId": b}}})
			if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
				t.Fatalf("status=%d %s, want 400", rec.Code, rec.Body)
			}
			if fields := fieldsOf(t, rec); fields["statsEngine"] == nil {
				t.Fatalf("details.fields=%v, want statsEngine named", fields)
			}
		})
	}

	id := num(def, "id")
	t.Run("DraftUpdate", func(t *testing.T) {
		m := e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"statsEngine": "sequential"})
		if m["statsEngine"] != "sequential" {
			t.Fatalf("statsEngine=%v, want sequential", m["statsEngine"])
		}
		rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"statsEngine": "nope"})
		if rec.Code != http.StatusBadRequest || fieldsOf(t, rec)["statsEngine"] == nil {
			t.Fatalf("status=%d %s, want 400 naming statsEngine", rec.Code, rec.Body)
		}
	})
	t.Run("ActiveRefused", func(t *testing.T) {
		c := e.evCreateCampaign("purchase", nil)
		rec := e.do("PATCH", pathf("/v1/campaigns/%d", c.id), e.Admin, map[string]any{"statsEngine": "bayesian"})
		if rec.Code != http.StatusBadRequest || fieldsOf(t, rec)["statsEngine"] == nil {
			t.Fatalf("status=%d %s, want 400 naming statsEngine", rec.Code, rec.Body)
		}
		if got := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d", c.id), e.Admin, nil); got["statsEngine"] != "frequentist" {
			t.Fatalf("statsEngine=%v after a refused update", got["statsEngine"])
		}
	})
}

// TestAnalyticsStatsEngine runs the same traffic (15 of 150 against 40 of
// 150) under each engine. The fixed-horizon test and the Bayesian chance
// call it, the always-valid p-value (about 0.12 at 300 users) does not.
func TestAnalyticsStatsEngine(t *testing.T) {
	e, clock := evSetup(t)
	const perArm = 150
	conv := [2]int64{15, 40}
	seq, _ := stats.Sequential(conv[1], perArm, conv[0], perArm, stats.Alpha, stats.SequentialTuning)
	bay, _ := stats.Bayesian(conv[1], perArm, conv[0], perArm)
	if seq.PValue < stats.Alpha || bay.ChanceToBeatControl < stats.BayesThreshold {
		t.Fatalf("the case no longer separates the engines: seq p=%g, chance=%g", seq.PValue, bay.ChanceToBeatControl)
	}
	for _, tc := range []struct {
		engine      string
		significant bool
	}{{"frequentist", true}, {"sequential", false}, {"bayesian", true}} {
		t.Run(tc.engine, func(t *testing.T) {
			c := e.evCreateCampaign("purchase-"+tc.engine, map[string]any{"statsEngine": tc.engine})
			for i := range 2 * perArm {
				e.evAssign(c.id, map[string]any{"userId": fmt.Sprint(tc.engine, "-u", i)})
			}
			clock.Add(time.Second)
			for arm, n := range conv {
				for j := range n {
					e.evLog(map[string]any{"eventId": "purchase-" + tc.engine, "userId": fmt.Sprint(tc.engine, "-u", 2*int(j)+arm)})
				}
			}
			m := e.anaGet(c.id, e.Read)
			if m["statsEngine"] != tc.engine {
				t.Fatalf("statsEngine=%v", m["statsEngine"])
			}
			if m["statisticalSignificance"] != tc.significant {
				t.Fatalf("statisticalSignificance=%v, want %v", m["statisticalSignificance"], tc.significant)
			}
			if tc.significant {
				if num(m, "winningVariantId") != c.variants[1] {
					t.Fatalf("winningVariantId=%v, want %d", m["winningVariantId"], c.variants[1])
				}
			} else {
				anaNull(t, m, "winningVariantId", "winningVariant")
			}
			if tc.engine == "sequential" {
				anaClose(t, "pValue", anaNum(t, m, "pValue"), seq.PValue)
			} else {
				anaClose(t, "pValue", anaNum(t, m, "pValue"), anaPValue(40, perArm, 15, perArm))
			}
			vs := m["variants"].([]any)
			anaNull(t, vs[0].(map[string]any), "sequential", "bayesian")
			v := vs[1].(map[string]any)
			s, _ := v["sequential"].(map[string]any)
			bm, _ := v["bayesian"].(map[string]any)
			if s == nil || bm == nil {
				t.Fatalf("treatment sequential=%v bayesian=%v", v["sequential"], v["bayesian"])
			}
			anaClose(t, "sequential.pValue", anaNum(t, s, "pValue"), seq.PValue)
			anaClose(t, "sequential.difference", anaNum(t, s, "difference"), seq.Difference*100)
			cs := s["confidenceSequence"].(map[string]any)
			anaClose(t, "sequential.confidenceSequence.lower", anaNum(t, cs, "lower"), seq.DiffLower*100)
			anaClose(t, "sequential.confidenceSequence.upper", anaNum(t, cs, "upper"), seq.DiffUpper*100)
			anaClose(t, "sequential.uplift", anaNum(t, s, "uplift"), *seq.Uplift*100)
			us := s["upliftConfidenceSequence"].(map[string]any)
			anaClose(t, "sequential.upliftConfidenceSequence.lower", anaNum(t, us, "lower"), *seq.UpliftLower*100)
			anaClose(t, "bayesian.chanceToBeatControl", anaNum(t, bm, "chanceToBeatControl"), bay.ChanceToBeatControl)
			anaClose(t, "bayesian.expectedLoss", anaNum(t, bm, "expectedLoss"), bay.ExpectedLoss*100)
			anaClose(t, "bayesian.controlExpectedLoss", anaNum(t, bm, "controlExpectedLoss"), bay.ControlExpectedLoss*100)
			ci := bm["credibleInterval"].(map[string]any)
			anaClose(t, "bayesian.credibleInterval.lower", anaNum(t, ci, "lower"), bay.UpliftLower*100)
			anaClose(t, "bayesian.credibleInterval.upper", anaNum(t, ci, "upper"), bay.UpliftUpper*100)
		})
	}
}

// TestAnalyticsSequentialFewUsers: with 3 users an arm the raw confidence
// sequence of the difference spans about ±970 percentage points; the
// answer keeps it within what a difference of two rates can be, [−100,
// +100], and the uplift's above −100%.
func TestAnalyticsSequentialFewUsers(t *testing.T) {
	e, clock := evSetup(t)
	for _, tc := range []struct {
		name        string
		conversions [2][]int // users converting, by index within their arm
		difference  float64  // percentage points
	}{
		{"TreatmentAhead", [2][]int{{0}, {0, 1}}, 100.0 / 3},
		{"TreatmentBehind", [2][]int{{0, 1, 2}, {0}}, -200.0 / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goal := "purchase-" + tc.name
			c := e.evCreateCampaign(goal, map[string]any{"statsEngine": "sequential"})
			// Round robin: user 2i sees the control, user 2i+1 the treatment.
			for i := range 6 {
				e.evAssign(c.id, map[string]any{"userId": fmt.Sprint(tc.name, i)})
			}
			clock.Add(time.Second)
			for arm, users := range tc.conversions {
				for _, j := range users {
					e.evLog(map[string]any{"eventId": goal, "userId": fmt.Sprint(tc.name, 2*j+arm)})
				}
			}
			m := e.anaGet(c.id, e.Admin)
			v := m["variants"].([]any)[1].(map[string]any)
			if n := anaNum(t, v, "impressions"); n != 3 {
				t.Fatalf("treatment impressions=%v, want 3", n)
			}
			s := v["sequential"].(map[string]any)
			anaClose(t, "difference", anaNum(t, s, "difference"), tc.difference)
			cs := s["confidenceSequence"].(map[string]any)
			if lo, hi := anaNum(t, cs, "lower"), anaNum(t, cs, "upper"); lo != -100 || hi != 100 {
				t.Fatalf("confidenceSequence=[%g, %g], want [-100, 100]", lo, hi)
			}
			us := s["upliftConfidenceSequence"].(map[string]any)
			if lo, hi := anaNum(t, us, "lower"), anaNum(t, us, "upper"); lo != -100 || hi <= anaNum(t, s, "uplift") {
				t.Fatalf("upliftConfidenceSequence=[%g, %g], want [-100, above the uplift %g]", lo, hi, anaNum(t, s, "uplift"))
			}
		})
	}
}
