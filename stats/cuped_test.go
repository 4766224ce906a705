package stats

import (
	"math"
	"testing"

	"service/internal/fixture"
)

// cupedReference is testdata/cuped_reference.json.
type cupedReference struct {
	About string `json:"about"`
	Cases []struct {
		Name     string     `json:"name"`
		Users    [][3]int64 `json:"users"`
		Expected struct {
			Theta             float64 `json:"theta"`
			VarianceReduction float64 `json:"varianceReduction"`
			Arms              []struct {
				Variant      int      `json:"variant"`
				N            int64    `json:"n"`
				AdjustedRate float64  `json:"adjustedRate"`
				S2           float64  `json:"s2"`
				Difference   *float64 `json:"difference"`
				Lower        *float64 `json:"lower"`
				Upper        *float64 `json:"upper"`
				PValue       *float64 `json:"pValue"`
				Uplift       *float64 `json:"uplift"`
			} `json:"arms"`
			OLS []struct {
				Variant       int     `json:"variant"`
				Coefficient   float64 `json:"coefficient"`
				StandardError float64 `json:"standardError"`
			} `json:"ols"`
		} `json:"expected"`
	} `json:"cases"`
}

// cupedSums folds per-user [variant, X, Y] rows into per-arm sums, arm 0
// the control: what a store keeps as users are assigned and convert.
func cupedSums(users [][3]int64) []CupedArm {
	var arms []CupedArm
	for _, u := range users {
		for int(u[0]) >= len(arms) {
			arms = append(arms, CupedArm{Control: len(arms) == 0})
		}
		a := &arms[u[0]]
		a.N++
		a.SumX += u[1]
		a.SumXX += u[1] * u[1]
		a.SumY += u[2]
		a.SumXY += u[1] * u[2]
	}
	return arms
}

func closeTo(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestCupedReference checks Cuped, from per-arm sums, against the figures
// numpy computed from the per-user definitions, and against statsmodels'
// OLS of Y on the treatment indicators and X.
func TestCupedReference(t *testing.T) {
	var ref cupedReference
	fixture.JSON(t, "cuped_reference.json", &ref)
	if len(ref.Cases) == 0 {
		t.Fatal("cuped_reference.json has no cases")
	}
	const exact = 1e-12
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			r, ok := Cuped(cupedSums(c.Users))
			if !ok {
				t.Fatal("Cuped: not ok")
			}
			want := c.Expected
			if !closeTo(r.Theta, want.Theta, exact) {
				t.Errorf("theta = %.17g, want %.17g", r.Theta, want.Theta)
			}
			if !closeTo(r.VarianceReduction, want.VarianceReduction, 1e-10) {
				t.Errorf("varianceReduction = %.17g, want %.17g", r.VarianceReduction, want.VarianceReduction)
			}
			for i, w := range want.Arms {
				got := r.Arms[i]
				if !closeTo(got.AdjustedRate, w.AdjustedRate, exact) {
					t.Errorf("arm %d adjustedRate = %.17g, want %.17g", i, got.AdjustedRate, w.AdjustedRate)
				}
				if w.Difference == nil {
					if got.Difference != nil || got.PValue != nil || got.Uplift != nil {
						t.Errorf("control arm %d has comparison fields", i)
					}
					continue
				}
				for _, f := range []struct {
					name      string
					got, want *float64
					tol       float64
				}{
					{"difference", got.Difference, w.Difference, exact},
					{"lower", got.Lower, w.Lower, 1e-10},
					{"upper", got.Upper, w.Upper, 1e-10},
					{"pValue", got.PValue, w.PValue, 1e-10},
					{"uplift", got.Uplift, w.Uplift, 1e-10},
				} {
					if f.got == nil || !closeTo(*f.got, *f.want, f.tol) {
						t.Errorf("arm %d %s = %v, want %.17g", i, f.name, f.got, *f.want)
					}
				}
			}
			// OLS with X estimates the same treatment effects; its slope is
			// fitted within arms, CUPED's θ across them, so they agree to a
			// small fraction of the standard error, not exactly.
			for _, o := range want.OLS {
				d := *r.Arms[o.Variant].Difference
				if math.Abs(d-o.Coefficient) > 0.01*o.StandardError {
					t.Errorf("arm %d: CUPED difference %.6f, OLS coefficient %.6f (se %.6f)", o.Variant, d, o.Coefficient, o.StandardError)
				}
				se := (*r.Arms[o.Variant].Upper - *r.Arms[o.Variant].Lower) / (2 * Z95)
				if math.Abs(se-o.StandardError) > 0.05*o.StandardError {
					t.Errorf("arm %d: CUPED se %.6f, OLS se %.6f", o.Variant, se, o.StandardError)
				}
			}
		})
	}
}

// TestCupedDegenerate covers the cases the formulas leave open.
func TestCupedDegenerate(t *testing.T) {
	tests := []struct {
		name    string
		arms    []CupedArm
		ok      bool
		theta   float64
		vr      float64
		adj     []float64
		pValue  float64
		uplift  bool
		diffNil bool
	}{
		{name: "no covariate: theta 0, raw rates",
			arms: []CupedArm{{N: 10, SumY: 2, Control: true}, {N: 10, SumY: 4}},
			ok:   true, adj: []float64{0.2, 0.4}, pValue: TwoSidedP(0.2 / math.Sqrt((0.2*0.8*10/9)/10+(0.4*0.6*10/9)/10)), uplift: true},
		{name: "outcome constant: no reduction, p 1",
			arms: []CupedArm{{N: 4, SumX: 3, SumXX: 5, Control: true}, {N: 3, SumX: 1, SumXX: 1}},
			ok:   true, theta: 0, adj: []float64{0, 0}, pValue: 1},
		{name: "X predicts Y exactly: all variance removed",
			arms: []CupedArm{{N: 4, SumX: 2, SumXX: 2, SumY: 2, SumXY: 2, Control: true}, {N: 4, SumX: 2, SumXX: 2, SumY: 2, SumXY: 2}},
			ok:   true, theta: 1, vr: 1, adj: []float64{0.5, 0.5}, pValue: 1, uplift: true},
		{name: "an arm of one user", arms: []CupedArm{{N: 1, Control: true}, {N: 5}}},
		{name: "no control", arms: []CupedArm{{N: 3}, {N: 5}}},
		{name: "two controls", arms: []CupedArm{{N: 3, Control: true}, {N: 5, Control: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Cuped(tt.arms)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if !closeTo(r.Theta, tt.theta, 1e-12) || !closeTo(r.VarianceReduction, tt.vr, 1e-12) {
				t.Errorf("theta %g vr %g, want %g %g", r.Theta, r.VarianceReduction, tt.theta, tt.vr)
			}
			for i, w := range tt.adj {
				if !closeTo(r.Arms[i].AdjustedRate, w, 1e-12) {
					t.Errorf("arm %d adjusted %g, want %g", i, r.Arms[i].AdjustedRate, w)
				}
			}
			if p := r.Arms[1].PValue; p == nil || !closeTo(*p, tt.pValue, 1e-12) {
				t.Errorf("pValue %v, want %g", p, tt.pValue)
			}
			if (r.Arms[1].Uplift != nil) != tt.uplift {
				t.Errorf("uplift %v, want set=%v (null when the control's adjusted rate is 0)", r.Arms[1].Uplift, tt.uplift)
			}
		})
	}
}

// TestCupedIntervalClamped: the difference interval of a few users is cut
// at what a difference of two rates can be, ±1, keeping the side inside.
func TestCupedIntervalClamped(t *testing.T) {
	// One of two control users converts (s² = 0.5) and every treated one
	// does (or none): d = ±0.5, se = 0.5, so d ± 1.96·se passes ±1.
	se := 0.5
	for _, tt := range []struct {
		name         string
		treated      CupedArm
		lower, upper float64
	}{
		{"Above", CupedArm{N: 2, SumY: 2}, 0.5 - Z95*se, 1},
		{"Below", CupedArm{N: 2}, -1, -0.5 + Z95*se},
		{"Inside", CupedArm{N: 200, SumY: 100}, -Z95 * math.Sqrt(0.5/2+(0.25*200/199)/200), Z95 * math.Sqrt(0.5/2+(0.25*200/199)/200)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Cuped([]CupedArm{{N: 2, SumY: 1, Control: true}, tt.treated})
			if !ok {
				t.Fatal("Cuped: not ok")
			}
			a := r.Arms[1]
			if !closeTo(*a.Lower, tt.lower, 1e-12) || !closeTo(*a.Upper, tt.upper, 1e-12) {
				t.Fatalf("interval [%.17g, %.17g], want [%.17g, %.17g]", *a.Lower, *a.Upper, tt.lower, tt.upper)
			}
		})
	}
}
