package stats

import (
	"math"
	"testing"

	"service/internal/fixture"
)

// welchReference is testdata/welch_reference.json, written by
// testdata/welch_reference.py with scipy.
type welchReference struct {
	About string `json:"about"`
	Scipy string `json:"scipy"`
	Cases []struct {
		Name string `json:"name"`
		T    struct {
			N int64   `json:"n"`
			S float64 `json:"s"`
			Q float64 `json:"q"`
		} `json:"treatment"`
		C struct {
			N int64   `json:"n"`
			S float64 `json:"s"`
			Q float64 `json:"q"`
		} `json:"control"`
		Difference float64 `json:"difference"`
		SE         float64 `json:"se"`
		DF         float64 `json:"df"`
		Statistic  float64 `json:"statistic"`
		PValue     float64 `json:"pValue"`
		Lower      float64 `json:"lower"`
		Upper      float64 `json:"upper"`
	} `json:"cases"`
}

// nearRel reports whether got is within rel of want, relatively, or within
// abs absolutely (for values near 0).
func nearRel(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= math.Max(rel*math.Abs(want), abs)
}

// TestWelchMatchesScipy pins Welch to scipy.stats.ttest_ind(equal_var=False)
// on the per-arm sums the service keeps.
func TestWelchMatchesScipy(t *testing.T) {
	var ref welchReference
	fixture.JSON(t, "welch_reference.json", &ref)
	if len(ref.Cases) < 10 {
		t.Fatalf("%d cases in the reference, want at least 10", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			tr, ct := Moments{c.T.N, c.T.S, c.T.Q}, Moments{c.C.N, c.C.S, c.C.Q}
			r, ok := Welch(tr, ct)
			if !ok || r.PValue == nil || r.Lower == nil || r.Upper == nil {
				t.Fatalf("Welch = %+v, %v; want a full result", r, ok)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"difference", r.Difference, c.Difference},
				{"se", r.SE, c.SE},
				{"df", r.DF, c.DF},
				{"statistic", r.Difference / r.SE, c.Statistic},
				{"pValue", *r.PValue, c.PValue},
				{"lower", *r.Lower, c.Lower},
				{"upper", *r.Upper, c.Upper},
			} {
				// The service keeps Q and S, not the values: Q − S²/n loses
				// a few digits that numpy's two-pass variance keeps.
				if !nearRel(f.got, f.want, 1e-8, 1e-12) {
					t.Errorf("%s = %.17g, scipy %.17g", f.name, f.got, f.want)
				}
			}
			if c.T.S != 0 && c.C.S != 0 {
				mc := c.C.S / float64(c.C.N)
				if r.Uplift == nil || !nearRel(*r.Uplift, c.Difference/mc*100, 1e-9, 1e-12) {
					t.Errorf("uplift = %v, want %v", r.Uplift, c.Difference/mc*100)
				}
			}
		})
	}
}

func TestWelchUndefined(t *testing.T) {
	for _, tc := range []struct {
		name       string
		t, c       Moments
		ok         bool
		difference float64
	}{
		{"no treatment users", Moments{}, Moments{N: 5, S: 2, Q: 2}, false, 0},
		{"no control users", Moments{N: 5, S: 2, Q: 2}, Moments{}, false, 0},
		{"one treatment user", Moments{N: 1, S: 3, Q: 9}, Moments{N: 5, S: 5, Q: 7}, true, 2},
		{"one control user", Moments{N: 4, S: 4, Q: 6}, Moments{N: 1, S: 0, Q: 0}, true, 1},
		{"no variance", Moments{N: 4, S: 4, Q: 4}, Moments{N: 6, S: 0, Q: 0}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := Welch(tc.t, tc.c)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if !nearRel(r.Difference, tc.difference, 1e-12, 1e-12) || r.PValue != nil || r.Lower != nil || r.Upper != nil || r.Uplift != nil {
				t.Fatalf("Welch = %+v, want difference %v and no p, interval or uplift", r, tc.difference)
			}
		})
	}
	if v, ok := (Moments{N: 3, S: 0.3, Q: 0.03 - 1e-18}).Variance(); !ok || v < 0 {
		t.Fatalf("Variance = %v, %v; want 0 rather than a negative rounding error", v, ok)
	}
}

// TestRegressed checks the guardrail rule against the mixture SPRT's
// confidence sequence: regressed exactly when d ± half lies on the
// harmful side of 0.
func TestRegressed(t *testing.T) {
	rho := MixtureRho(Alpha, SequentialTuning)
	half := MixtureHalfwidth(0.1, 2000, rho, Alpha)
	for _, tc := range []struct {
		name     string
		d, se    float64
		n        int64
		increase bool
		want     bool
	}{
		{"worse, sequence below 0", -half - 0.01, 0.1, 2000, true, true},
		{"worse but sequence holds 0", -half + 0.01, 0.1, 2000, true, false},
		{"better", half + 0.5, 0.1, 2000, true, false},
		{"decrease: higher is harmful", half + 0.01, 0.1, 2000, false, true},
		{"decrease: lower is good", -half - 0.01, 0.1, 2000, false, false},
		{"no standard error", -5, 0, 2000, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Regressed(tc.d, tc.se, tc.n, tc.increase); got != tc.want {
				t.Errorf("Regressed(%v, %v, %d, %v) = %v, want %v (half %v)", tc.d, tc.se, tc.n, tc.increase, got, tc.want, half)
			}
		})
	}
}
