package dashboard

import (
	"encoding/json"
	"testing"

	"service/store"
)

// Every field of today's analytics answer has its place on the page, so
// "Further analyses" lists nothing; a field the store adds later, at the
// top, in a variant or inside an engine's object, is listed there.
func TestExtraAnalysesListOnlyUnknownFields(t *testing.T) {
	p := func(f float64) *float64 { return &f }
	a := &store.Analytics{StatsEngine: "bayesian", PValue: p(0.01), Metrics: []store.MetricResult{}, Variants: []store.VariantStats{
		{VariantName: "A", IsControl: true, ConfidenceInterval: &store.Interval{Lower: 1, Upper: 2}},
		{VariantName: "B", Uplift: p(3), Sequential: &store.SequentialStats{Uplift: p(3), UpliftConfidenceSequence: &store.Interval{}},
			Bayesian: &store.BayesianStats{ChanceToBeatControl: 0.9}},
	}}
	a.WinningVariant = &a.Variants[1]
	if got := extraAnalyses(a); len(got) != 0 {
		t.Fatalf("known fields listed as further analyses: %v", got)
	}
	raw, _ := json.Marshal(a)
	var m map[string]any
	json.Unmarshal(raw, &m)
	m["thompson"] = map[string]any{"draws": 1000.0, "best": "B"}
	vs := m["variants"].([]any)
	vs[1].(map[string]any)["lift2"] = 0.5
	vs[1].(map[string]any)["bayesian"].(map[string]any)["riskRatio"] = nil
	got := extraAnalyses(m)
	want := []kv{{"thompson.best", "B"}, {"thompson.draws", "1000"}, {"variants[1].bayesian.riskRatio", "—"}, {"variants[1].lift2", "0.5"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
