package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"service/internal/fixture"
)

// near reports whether got is within tol of want (absolute).
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol
}

// relNear reports whether got is within a relative tolerance of want.
func relNear(got, want, rel float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func TestNormalCDF(t *testing.T) {
	// A standard normal table (7 decimals).
	for _, tt := range fixture.Stats(t).NormalCDF.Rows {
		if got, want := NormalCDF(tt.Z), tt.P; !near(got, want, 5e-8) {
			t.Errorf("NormalCDF(%v) = %.9f, want %.7f", tt.Z, got, want)
		}
	}
	// Deep tail: 1 − Φ(8) ≈ 6.220960574e-16 must keep relative precision,
	// which the erf-based formula would lose entirely.
	if got, want := NormalCDF(-8), 6.220960574271785e-16; !relNear(got, want, 1e-9) {
		t.Errorf("NormalCDF(-8) = %g, want %g", got, want)
	}
}

func TestTwoSidedP(t *testing.T) {
	tests := []struct {
		z, want float64
	}{
		{0, 1},
		{Z95, 0.05},
		{-Z95, 0.05},
		{2.5758293035489, 0.01},
		{math.Inf(1), 0},
		{math.Inf(-1), 0},
	}
	for _, tt := range tests {
		if got, want := TwoSidedP(tt.z), tt.want; !near(got, want, 1e-12) {
			t.Errorf("TwoSidedP(%v) = %.15f, want %v", tt.z, got, want)
		}
	}
}

// TestZTestWorkedExamples checks ZTest against published worked solutions
// (testdata/stats_tables.json). Each source computes z by hand and reads
// the p-value from a normal table, so agreement is to their rounding.
func TestZTestWorkedExamples(t *testing.T) {
	for _, tt := range fixture.Stats(t).ZTestWorked.Rows {
		t.Run(tt.Name, func(t *testing.T) {
			z, p, ok := ZTest(tt.C1, tt.N1, tt.C2, tt.N2)
			if !ok {
				t.Fatalf("ZTest ok = false, want true")
			}
			if got, want := z, tt.Z; !near(got, want, tt.TolZ) {
				t.Errorf("z = %.6f, want %.4f", got, want)
			}
			if got, want := p, tt.P; !near(got, want, tt.TolP) {
				t.Errorf("p = %.6f, want %.4f", got, want)
			}
			// Swapping the arms flips the sign and keeps p.
			z2, p2, _ := ZTest(tt.C2, tt.N2, tt.C1, tt.N1)
			if got, want := z2, -z; !near(got, want, 1e-12) {
				t.Errorf("swapped z = %v, want %v", got, want)
			}
			if got, want := p2, p; !near(got, want, 1e-15) {
				t.Errorf("swapped p = %v, want %v", got, want)
			}
		})
	}
}

// pearson2x2 is an independent Pearson chi-square on the 2×2 table
//
//	            converted   not converted
//	arm 1       c1          n1−c1
//	arm 2       c2          n2−c2
//
// computed cell by cell as Σ(O−E)²/E with E = row·column/total.
func pearson2x2(c1, n1, c2, n2 int64) float64 {
	obs := [2][2]float64{
		{float64(c1), float64(n1 - c1)},
		{float64(c2), float64(n2 - c2)},
	}
	var rows, cols [2]float64
	total := 0.0
	for i := range 2 {
		for j := range 2 {
			rows[i] += obs[i][j]
			cols[j] += obs[i][j]
			total += obs[i][j]
		}
	}
	chi2 := 0.0
	for i := range 2 {
		for j := range 2 {
			e := rows[i] * cols[j] / total
			chi2 += (obs[i][j] - e) * (obs[i][j] - e) / e
		}
	}
	return chi2
}

// TestZTestMatchesPearsonChiSquare relies on the identity that the pooled
// two-proportion z² equals Pearson's X² on the 2×2 table (without Yates'
// correction), and that P(|Z| > |z|) = P(χ²₁ > z²). It therefore checks
// ZTest, the normal tail and the incomplete gamma function against one
// another through code paths that share nothing.
func TestZTestMatchesPearsonChiSquare(t *testing.T) {
	tests := []struct {
		c1, n1, c2, n2 int64
	}{
		{200, 1000, 250, 1000},
		{100, 1000, 150, 1000},
		{168, 300, 96, 200},
		{28, 254, 36, 301},
		{1, 10, 9, 10},
		{5, 100000, 7, 100000},
		{4900, 10000, 5100, 10000},
		{0, 50, 3, 60},
		{100, 1000, 500, 500},
	}
	for _, tt := range tests {
		z, p, ok := ZTest(tt.c1, tt.n1, tt.c2, tt.n2)
		if !ok {
			t.Fatalf("ZTest%v ok = false", tt)
		}
		chi2 := pearson2x2(tt.c1, tt.n1, tt.c2, tt.n2)
		if got, want := z*z, chi2; !relNear(got, want, 1e-9) {
			t.Errorf("ZTest%v z² = %.12g, want Pearson X² %.12g", tt, got, want)
		}
		if got, want := p, ChiSquareSF(chi2, 1); !near(got, want, 1e-9) || !relNear(got, want, 1e-6) {
			t.Errorf("ZTest%v p = %.12g, want ChiSquareSF(X², 1) = %.12g", tt, got, want)
		}
	}
}

func TestZTestEdgeCases(t *testing.T) {
	tests := []struct {
		name           string
		c1, n1, c2, n2 int64
		wantZ, wantP   float64
		wantOK         bool
	}{
		{"no impressions in arm 1", 0, 0, 5, 100, 0, 0, false},
		{"no impressions in arm 2", 5, 100, 0, 0, 0, 0, false},
		{"negative count", -1, 100, 5, 100, 0, 0, false},
		{"conversions above impressions", 101, 100, 5, 100, 0, 0, false},
		{"no conversions anywhere", 0, 1000, 0, 500, 0, 1, true},
		{"only conversions", 1000, 1000, 500, 500, 0, 1, true},
		{"identical rates", 10, 100, 20, 200, 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z, p, ok := ZTest(tt.c1, tt.n1, tt.c2, tt.n2)
			if got, want := ok, tt.wantOK; got != want {
				t.Fatalf("ok = %v, want %v", got, want)
			}
			if got, want := z, tt.wantZ; got != want {
				t.Errorf("z = %v, want %v", got, want)
			}
			if got, want := p, tt.wantP; got != want {
				t.Errorf("p = %v, want %v", got, want)
			}
		})
	}

	// Extreme but defined: all finite, p tiny but not negative.
	for _, tt := range [][4]int64{{0, 10, 10, 10}, {0, 1e12, 1e12, 1e12}, {1, 1e15, 2, 1e15}} {
		z, p, ok := ZTest(tt[0], tt[1], tt[2], tt[3])
		if !ok || !finite(z) || !finite(p) || p < 0 || p > 1 {
			t.Errorf("ZTest%v = %v, %v, %v; want finite z and p in [0,1]", tt, z, p, ok)
		}
	}
}

// TestZTestApplicable pins the rule n·p̂ ≥ 5 and n·(1 − p̂) ≥ 5 for both
// arms, p̂ pooled, at and just past its edges.
func TestZTestApplicable(t *testing.T) {
	tests := []struct {
		name           string
		c1, n1, c2, n2 int64
		want           bool
	}{
		{"1 against 3 impressions", 3, 3, 0, 1, false},
		{"2 against 2 impressions", 2, 2, 0, 2, false},
		{"exactly 5 expected in every cell", 5, 10, 5, 10, true},
		{"4.5 expected conversions", 4, 10, 5, 10, false},
		{"4.5 expected failures", 6, 10, 5, 10, false},
		// p̂ = 15/150 = 0.1 is inexact in binary; 50·p̂ must still be 5.
		{"small arm exactly at the edge", 10, 100, 5, 50, true},
		{"small arm below the edge", 10, 100, 2, 20, false},
		{"no conversions anywhere", 0, 1000, 0, 1000, false},
		{"only conversions", 1000, 1000, 500, 500, false},
		{"large and balanced", 100, 1000, 150, 1000, true},
		{"no impressions", 0, 0, 5, 100, false},
		{"invalid counts", 11, 10, 5, 100, false},
		{"huge counts do not overflow", 1e12, 4e12, 1e12, 4e12, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ZTestApplicable(tt.c1, tt.n1, tt.c2, tt.n2); got != tt.want {
				t.Errorf("ZTestApplicable(%d, %d, %d, %d) = %v, want %v", tt.c1, tt.n1, tt.c2, tt.n2, got, tt.want)
			}
			if got := ZTestApplicable(tt.c2, tt.n2, tt.c1, tt.n1); got != tt.want {
				t.Errorf("ZTestApplicable swapped = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAnalyzeSmallSamples checks that no engine decides a pair below the
// z-test's rule: at 1 impression against 3 (3 conversions against 0) the
// z-test alone gives p = 0.0455, which used to declare a winner.
func TestAnalyzeSmallSamples(t *testing.T) {
	if _, p, _ := ZTest(3, 3, 0, 1); p >= Alpha {
		t.Fatalf("fixture: raw p = %v, want below %v so the rule is what stops it", p, Alpha)
	}
	cases := []struct {
		name string
		arms []Arm
	}{
		{"1 against 3 impressions", []Arm{
			{ID: 1, Name: "A", Impressions: 1, Conversions: 0, Allocation: 1, Control: true},
			{ID: 2, Name: "B", Impressions: 3, Conversions: 3, Allocation: 1},
		}},
		{"2 against 2 impressions", []Arm{
			{ID: 1, Name: "A", Impressions: 2, Conversions: 0, Allocation: 1, Control: true},
			{ID: 2, Name: "B", Impressions: 2, Conversions: 2, Allocation: 1},
		}},
		{"40 against 4, all against none", []Arm{
			{ID: 1, Name: "A", Impressions: 40, Conversions: 0, Allocation: 1, Control: true},
			{ID: 2, Name: "B", Impressions: 4, Conversions: 4, Allocation: 1},
		}},
	}
	for _, tc := range cases {
		for _, engine := range []Engine{EngineFrequentist, EngineSequential, EngineBayesian} {
			t.Run(tc.name+"/"+string(engine), func(t *testing.T) {
				r := AnalyzeWith(tc.arms, engine)
				wantNil(t, "PValue", r.PValue)
				wantNil(t, "ConfidenceLevel", r.ConfidenceLevel)
				wantNil(t, "WinnerID", r.WinnerID)
				wantNil(t, "WinnerConfidence", r.WinnerConfidence)
				wantNil(t, "B.PValue", r.Arms[1].PValue)
				if r.Significant {
					t.Error("Significant = true, want false")
				}
				if r.Arms[1].Applicable {
					t.Error("B.Applicable = true, want false")
				}
				// The Bayesian comparison is still shown; it decides nothing.
				if r.Arms[1].Bayes == nil {
					t.Error("Bayes = nil, want the comparison shown")
				}
			})
		}
	}
}

// TestWilson checks against Newcombe (1998), Table I, method 3 (score
// interval without continuity correction), 95% (testdata/stats_tables.json).
func TestWilson(t *testing.T) {
	for _, tt := range fixture.Stats(t).Wilson.Rows {
		lo, hi, ok := Wilson(tt.C, tt.N, Z95)
		if !ok {
			t.Fatalf("Wilson(%d, %d) ok = false", tt.C, tt.N)
		}
		if got, want := round(lo, 4), tt.Lower; got != want {
			t.Errorf("Wilson(%d, %d) lower = %.6f, want %.4f", tt.C, tt.N, lo, want)
		}
		if got, want := round(hi, 4), tt.Upper; got != want {
			t.Errorf("Wilson(%d, %d) upper = %.6f, want %.4f", tt.C, tt.N, hi, want)
		}
	}
}

func TestWilsonEdgeCases(t *testing.T) {
	// At c = 0 and c = n the Wilson interval has closed forms:
	// [0, z²/(n+z²)] and [n/(n+z²), 1].
	z2 := Z95 * Z95
	tests := []struct {
		name                 string
		c, n                 int64
		z                    float64
		wantLower, wantUpper float64
		wantOK               bool
	}{
		{"no trials", 0, 0, Z95, 0, 0, false},
		{"negative count", -1, 10, Z95, 0, 0, false},
		{"count above trials", 11, 10, Z95, 0, 0, false},
		{"NaN z", 1, 10, math.NaN(), 0, 0, false},
		{"zero successes", 0, 1000, Z95, 0, z2 / (1000 + z2), true},
		{"all successes", 500, 500, Z95, 500 / (500 + z2), 1, true},
		{"negative z is |z|", 81, 263, -Z95, 0.2552885198782742, 0.36620957698280004, true},
		{"z = 0 collapses to p̂", 1, 4, 0, 0.25, 0.25, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, ok := Wilson(tt.c, tt.n, tt.z)
			if got, want := ok, tt.wantOK; got != want {
				t.Fatalf("ok = %v, want %v", got, want)
			}
			if got, want := lo, tt.wantLower; !near(got, want, 1e-12) {
				t.Errorf("lower = %.15g, want %.15g", got, want)
			}
			if got, want := hi, tt.wantUpper; !near(got, want, 1e-12) {
				t.Errorf("upper = %.15g, want %.15g", got, want)
			}
		})
	}
}

func TestChiSquareSFTable(t *testing.T) {
	// Critical values as printed in standard tables, and to full precision
	// (testdata/stats_tables.json).
	for _, tt := range fixture.Stats(t).ChiSquare.Rows {
		if got, want := ChiSquareSF(tt.X, tt.DF), tt.P; !near(got, want, tt.Tol) {
			t.Errorf("ChiSquareSF(%v, %d) = %.12f, want %v", tt.X, tt.DF, got, want)
		}
	}
}

// TestChiSquareSFClosedForms compares against the closed forms the
// chi-square survival function has for small df, over both branches of
// gammaQ (series for x/2 < df/2+1, continued fraction beyond) and deep into
// the tail, where relative precision is what matters.
func TestChiSquareSFClosedForms(t *testing.T) {
	closed := map[int]func(x float64) float64{
		1: func(x float64) float64 { return math.Erfc(math.Sqrt(x / 2)) },
		2: func(x float64) float64 { return math.Exp(-x / 2) },
		3: func(x float64) float64 {
			return math.Erfc(math.Sqrt(x/2)) + math.Sqrt(2*x/math.Pi)*math.Exp(-x/2)
		},
		4: func(x float64) float64 { return math.Exp(-x/2) * (1 + x/2) },
		6: func(x float64) float64 { return math.Exp(-x/2) * (1 + x/2 + x*x/8) },
	}
	for df, f := range closed {
		for _, x := range []float64{1e-6, 0.01, 0.5, 1, 2.9, 3.1, 5, 10, 30, 100, 300, 1000} {
			if got, want := ChiSquareSF(x, df), f(x); !relNear(got, want, 1e-12) {
				t.Errorf("ChiSquareSF(%v, %d) = %.17g, want %.17g", x, df, got, want)
			}
		}
	}
}

func TestChiSquareSFEdgeCases(t *testing.T) {
	tests := []struct {
		x    float64
		df   int
		want float64
	}{
		{0, 1, 1},
		{-3, 5, 1},
		{math.Inf(1), 3, 0},
		{1e6, 2, 0},
		{0, 0, 0},
		{-1, 0, 1},
		{5, -2, 0},
	}
	for _, tt := range tests {
		if got, want := ChiSquareSF(tt.x, tt.df), tt.want; got != want {
			t.Errorf("ChiSquareSF(%v, %d) = %v, want %v", tt.x, tt.df, got, want)
		}
	}
}

// TestGammaQ checks the incomplete gamma function against identities that
// do not use it: Q(1, x) = e⁻ˣ, and for integer n, Q(n, x) is the Poisson
// probability of fewer than n events with mean x, e⁻ˣ Σ_{k<n} xᵏ/k!.
func TestGammaQ(t *testing.T) {
	poissonCDF := func(n int, x float64) float64 {
		term, sum := 1.0, 1.0
		for k := 1; k < n; k++ {
			term *= x / float64(k)
			sum += term
		}
		return math.Exp(-x) * sum
	}
	tests := []struct {
		a, x float64
		want float64
	}{
		{1, 0.1, math.Exp(-0.1)},
		{1, 7, math.Exp(-7)},
		{50, 30, poissonCDF(50, 30)},
		{50, 50, poissonCDF(50, 50)},
		{50, 70, poissonCDF(50, 70)},
		{120, 100, poissonCDF(120, 100)},
		{120, 160, poissonCDF(120, 160)},
	}
	for _, tt := range tests {
		if got, want := gammaQ(tt.a, tt.x), tt.want; !relNear(got, want, 1e-11) {
			t.Errorf("gammaQ(%v, %v) = %.17g, want %.17g", tt.a, tt.x, got, want)
		}
	}
	if got := gammaQ(0, 1); !math.IsNaN(got) {
		t.Errorf("gammaQ(0, 1) = %v, want NaN", got)
	}
}

func TestChiSquareGOF(t *testing.T) {
	tests := []struct {
		name     string
		observed []int64
		shares   []float64
		wantStat float64
		wantDF   int
		wantP    float64
		tolP     float64
		wantOK   bool
	}{
		{
			// Mendel's dihybrid cross, the classic textbook GOF example:
			// 315/108/101/32 peas against 9:3:3:1 gives X² = 0.470 on 3 df,
			// p ≈ 0.925. Shares deliberately left unnormalised.
			name:     "Mendel 9:3:3:1",
			observed: []int64{315, 108, 101, 32},
			shares:   []float64{9, 3, 3, 1},
			wantStat: 0.4700239808153477, wantDF: 3, wantP: 0.9254, tolP: 5e-5, wantOK: true,
		},
		{
			// SRM: 9000 impressions meant to split 50/50. X² =
			// 2·500²/4500 = 111.1…; P(χ²₁ > X²) = erfc(√(X²/2)).
			name:     "SRM 5000 vs 4000",
			observed: []int64{5000, 4000},
			shares:   []float64{0.5, 0.5},
			wantStat: 1000.0 / 9, wantDF: 1, wantP: math.Erfc(math.Sqrt(1000.0 / 9 / 2)), tolP: 1e-35, wantOK: true,
		},
		{
			name:     "perfect fit",
			observed: []int64{600, 300, 100},
			shares:   []float64{60, 30, 10},
			wantStat: 0, wantDF: 2, wantP: 1, tolP: 0, wantOK: true,
		},
		{
			name:     "zero share without observations is skipped",
			observed: []int64{5000, 4000, 0},
			shares:   []float64{1, 1, 0},
			wantStat: 1000.0 / 9, wantDF: 1, wantP: math.Erfc(math.Sqrt(1000.0 / 9 / 2)), tolP: 1e-35, wantOK: true,
		},
		{
			name:     "observations in a zero-share category are impossible",
			observed: []int64{500, 500, 1},
			shares:   []float64{1, 1, 0},
			wantStat: 2 * 0.5 * 0.5 / 500.5, wantDF: 1, wantP: 0, tolP: 0, wantOK: true,
		},
		{
			name:     "single positive share",
			observed: []int64{700, 0},
			shares:   []float64{1, 0},
			wantStat: 0, wantDF: 0, wantP: 1, tolP: 0, wantOK: true,
		},
		{"no observations", []int64{0, 0}, []float64{1, 1}, 0, 0, 0, 0, false},
		{"length mismatch", []int64{1, 2}, []float64{1}, 0, 0, 0, 0, false},
		{"empty", nil, nil, 0, 0, 0, 0, false},
		{"all shares zero", []int64{1, 2}, []float64{0, 0}, 0, 0, 0, 0, false},
		{"negative share", []int64{1, 2}, []float64{-1, 2}, 0, 0, 0, 0, false},
		{"NaN share", []int64{1, 2}, []float64{math.NaN(), 2}, 0, 0, 0, 0, false},
		{"infinite share", []int64{1, 2}, []float64{math.Inf(1), 2}, 0, 0, 0, 0, false},
		{"negative count", []int64{-1, 2}, []float64{1, 1}, 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stat, df, p, ok := ChiSquareGOF(tt.observed, tt.shares)
			if got, want := ok, tt.wantOK; got != want {
				t.Fatalf("ok = %v, want %v", got, want)
			}
			if got, want := stat, tt.wantStat; !relNear(got, want, 1e-12) {
				t.Errorf("stat = %.17g, want %.17g", got, want)
			}
			if got, want := df, tt.wantDF; got != want {
				t.Errorf("df = %d, want %d", got, want)
			}
			if got, want := p, tt.wantP; !near(got, want, tt.tolP) {
				t.Errorf("p = %.17g, want %.17g", got, want)
			}
		})
	}
}

func TestHolm(t *testing.T) {
	tests := []struct {
		name string
		p    []float64
		want []float64
	}{
		{
			// The four-hypothesis example of the Wikipedia article
			// "Holm–Bonferroni method": raw 0.01, 0.04, 0.03, 0.005 at
			// α = 0.05 rejects H1 and H4 only. Adjusted (as R's
			// p.adjust(method = "holm")): sorted 0.005·4, 0.01·3, 0.03·2,
			// max(0.04·1, 0.06).
			name: "Wikipedia example",
			p:    []float64{0.01, 0.04, 0.03, 0.005},
			want: []float64{0.03, 0.06, 0.06, 0.02},
		},
		{"single test is unchanged", []float64{0.04}, []float64{0.04}},
		{"capped at 1", []float64{0.5, 0.6}, []float64{1, 1}},
		{"monotone running max", []float64{0.02, 0.021, 0.9}, []float64{0.06, 0.06, 0.9}},
		{"ties keep both", []float64{0.01, 0.01}, []float64{0.02, 0.02}},
		{"NaN is no evidence", []float64{math.NaN(), 0.01}, []float64{1, 0.02}},
		{"empty", []float64{}, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.p...)
			got := Holm(tt.p)
			if got, want := len(got), len(tt.want); got != want {
				t.Fatalf("len = %d, want %d", got, want)
			}
			for i := range got {
				if got, want := got[i], tt.want[i]; !near(got, want, 1e-15) {
					t.Errorf("adjusted[%d] = %v, want %v", i, got, want)
				}
			}
			for i := range in {
				if a, b := in[i], tt.p[i]; a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
					t.Errorf("input[%d] modified: %v -> %v", i, a, b)
				}
			}
		})
	}
}

func TestCohensH(t *testing.T) {
	tests := []struct {
		p1, p2, want float64
	}{
		{0.5, 0.4, 0.2013579},
		{0.4, 0.5, -0.2013579},
		{0.15, 0.10, 0.1518977},
		{0.3, 0.3, 0},
		{1, 0, math.Pi},
		{1.0000000001, 0, math.Pi}, // clamped, not NaN
	}
	for _, tt := range tests {
		if got, want := CohensH(tt.p1, tt.p2), tt.want; !near(got, want, 5e-8) {
			t.Errorf("CohensH(%v, %v) = %.8f, want %.7f", tt.p1, tt.p2, got, want)
		}
	}
}

func TestAnalyze(t *testing.T) {
	z2 := Z95 * Z95
	tests := []struct {
		name  string
		arms  []Arm
		check func(t *testing.T, r Result)
	}{
		{
			name: "no arms",
			arms: nil,
			check: func(t *testing.T, r Result) {
				if got, want := len(r.Arms), 0; got != want {
					t.Errorf("len(Arms) = %d, want %d", got, want)
				}
				wantNil(t, "PValue", r.PValue)
				wantNil(t, "SRMPValue", r.SRMPValue)
				if got, want := r.SufficientData, false; got != want {
					t.Errorf("SufficientData = %v, want %v", got, want)
				}
			},
		},
		{
			name: "zero impressions everywhere",
			arms: []Arm{
				{ID: 1, Name: "A", Allocation: 50, Control: true},
				{ID: 2, Name: "B", Allocation: 50},
			},
			check: func(t *testing.T, r Result) {
				if got, want := r.TotalImpressions, int64(0); got != want {
					t.Errorf("TotalImpressions = %d, want %d", got, want)
				}
				if got, want := r.AverageConversionRate, 0.0; got != want {
					t.Errorf("AverageConversionRate = %v, want %v", got, want)
				}
				wantNil(t, "PValue", r.PValue)
				wantNil(t, "ConfidenceLevel", r.ConfidenceLevel)
				wantNil(t, "WinnerID", r.WinnerID)
				wantNil(t, "SRMPValue", r.SRMPValue)
				wantNil(t, "EffectSize", r.EffectSize)
				for _, a := range r.Arms {
					wantNil(t, a.Name+".Uplift", a.Uplift)
					wantNil(t, a.Name+".PValue", a.PValue)
					wantNil(t, a.Name+".Lower", a.Lower)
					wantNil(t, a.Name+".Upper", a.Upper)
					if got, want := a.ConversionRate, 0.0; got != want {
						t.Errorf("%s.ConversionRate = %v, want %v", a.Name, got, want)
					}
				}
			},
		},
		{
			name: "zero conversions",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Allocation: 0.5, Control: true},
				{ID: 2, Name: "B", Impressions: 1000, Allocation: 0.5},
			},
			// No conversions anywhere: n·p̂ = 0 < 5, so the z-test does
			// not apply and there is no p-value at all.
			check: func(t *testing.T, r Result) {
				wantNil(t, "PValue", r.PValue)
				wantNil(t, "ConfidenceLevel", r.ConfidenceLevel)
				wantNil(t, "B.PValue", r.Arms[1].PValue)
				wantNil(t, "B.Uplift (control rate 0)", r.Arms[1].Uplift)
				wantNil(t, "WinnerID", r.WinnerID)
				wantFloat(t, "A.Lower", r.Arms[0].Lower, 0, 0)
				wantFloat(t, "A.Upper", r.Arms[0].Upper, 100*z2/(1000+z2), 1e-12)
				wantFloat(t, "SRMPValue", r.SRMPValue, 1, 0)
				if got, want := r.Significant, false; got != want {
					t.Errorf("Significant = %v, want %v", got, want)
				}
			},
		},
		{
			name: "one arm converts every impression",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 500, Conversions: 500, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				wantID(t, r.WinnerID, 2)
				wantFloat(t, "B.ConversionRate", &r.Arms[1].ConversionRate, 100, 0)
				wantFloat(t, "B.Uplift", r.Arms[1].Uplift, 900, 1e-9)
				wantFloat(t, "B.Upper", r.Arms[1].Upper, 100, 0)
				wantFloat(t, "B.Lower", r.Arms[1].Lower, 100*500/(500+z2), 1e-12)
				// |h| = 2·asin(1) − 2·asin(√0.1) = π − 0.6435011
				wantFloat(t, "EffectSize", r.EffectSize, math.Pi-2*math.Asin(math.Sqrt(0.1)), 1e-12)
				if got, want := r.SRMDetected, true; got != want {
					t.Errorf("SRMDetected = %v, want %v (1000 vs 500 at 1:1)", got, want)
				}
			},
		},
		{
			name: "both arms convert every impression",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 300, Conversions: 300, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 300, Conversions: 300, Allocation: 1},
			},
			// n·(1 − p̂) = 0 < 5: the z-test does not apply.
			check: func(t *testing.T, r Result) {
				wantNil(t, "PValue", r.PValue)
				wantNil(t, "B.PValue", r.Arms[1].PValue)
				wantFloat(t, "B.Uplift", r.Arms[1].Uplift, 0, 0)
				wantNil(t, "WinnerID", r.WinnerID)
			},
		},
		{
			// 100/1000 vs 150/1000: p̂ = 0.125, SE = √(0.125·0.875·0.002) =
			// 0.0147902, z = 3.3806170, p = 0.000723233.
			name: "clear winner",
			arms: []Arm{
				{ID: 10, Name: "Control", Impressions: 1000, Conversions: 100, Allocation: 50, Control: true},
				{ID: 20, Name: "Variant B", Impressions: 1000, Conversions: 150, Allocation: 50},
			},
			check: func(t *testing.T, r Result) {
				wantFloat(t, "PValue", r.PValue, 0.000723233, 1e-9)
				wantFloat(t, "B.PValue", r.Arms[1].PValue, 0.000723233, 1e-9)
				wantFloat(t, "ConfidenceLevel", r.ConfidenceLevel, 99.9276767, 1e-6)
				if got, want := r.Significant, true; got != want {
					t.Errorf("Significant = %v, want %v", got, want)
				}
				wantID(t, r.WinnerID, 20)
				wantFloat(t, "B.Uplift", r.Arms[1].Uplift, 50, 1e-9)
				wantNil(t, "Control.Uplift", r.Arms[0].Uplift)
				wantNil(t, "Control.PValue", r.Arms[0].PValue)
				wantFloat(t, "EffectSize", r.EffectSize, 0.1518977, 5e-8)
				wantFloat(t, "AverageConversionRate", &r.AverageConversionRate, 12.5, 1e-12)
				if got, want := r.TotalConversions, int64(250); got != want {
					t.Errorf("TotalConversions = %d, want %d", got, want)
				}
				wantFloat(t, "SRMPValue", r.SRMPValue, 1, 0)
				if got, want := r.SufficientData, true; got != want {
					t.Errorf("SufficientData = %v, want %v", got, want)
				}
			},
		},
		{
			name: "no winner",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 1000, Conversions: 105, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				wantFloat(t, "PValue", r.PValue, 0.7124129, 1e-7)
				if got, want := r.Significant, false; got != want {
					t.Errorf("Significant = %v, want %v", got, want)
				}
				wantNil(t, "WinnerID", r.WinnerID)
				wantNil(t, "EffectSize", r.EffectSize)
				wantFloat(t, "B.Uplift", r.Arms[1].Uplift, 5, 1e-9)
			},
		},
		{
			name: "control significantly better wins",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 150, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 1000, Conversions: 100, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				wantID(t, r.WinnerID, 1)
				wantFloat(t, "B.Uplift", r.Arms[1].Uplift, -100.0/3, 1e-9)
			},
		},
		{
			// Raw p 0.0417 and 0.0301 would each pass at 5%, but Holm
			// multiplies the smaller by 2: 0.0602, so nothing is significant.
			name: "Holm removes a spurious winner",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 1000, Conversions: 129, Allocation: 1},
				{ID: 3, Name: "C", Impressions: 1000, Conversions: 131, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				wantFloat(t, "B.PValue", r.Arms[1].PValue, 0.0416994, 1e-7)
				wantFloat(t, "C.PValue", r.Arms[2].PValue, 0.0301027, 1e-7)
				wantFloat(t, "PValue", r.PValue, 2*0.0301027, 2e-7)
				if got, want := r.Significant, false; got != want {
					t.Errorf("Significant = %v, want %v", got, want)
				}
				wantNil(t, "WinnerID", r.WinnerID)
			},
		},
		{
			// C has the highest rate (25%) but only 12 impressions: with
			// p̂ = 103/1012, 12·p̂ = 1.2 < 5, so its z-test does not apply,
			// it has no p-value, takes no part in Holm's adjustment (B's p
			// is not doubled) and may not win; B (15%, p = 0.00072) does.
			name: "winner only among significant arms",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 1000, Conversions: 150, Allocation: 1},
				{ID: 3, Name: "C", Impressions: 12, Conversions: 3, Allocation: 0},
			},
			check: func(t *testing.T, r Result) {
				wantFloat(t, "PValue", r.PValue, 0.000723233, 1e-9)
				wantNil(t, "C.PValue", r.Arms[2].PValue)
				wantID(t, r.WinnerID, 2)
				// Best other arm by rate is C (0.25), not the control.
				wantFloat(t, "EffectSize", r.EffectSize, math.Abs(2*math.Asin(math.Sqrt(0.15))-2*math.Asin(math.Sqrt(0.25))), 1e-12)
				// C got traffic although its allocation is 0.
				wantFloat(t, "SRMPValue", r.SRMPValue, 0, 0)
				if got, want := r.SRMDetected, true; got != want {
					t.Errorf("SRMDetected = %v, want %v", got, want)
				}
			},
		},
		{
			name: "no arm marked: first is control",
			arms: []Arm{
				{ID: 7, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1},
				{ID: 8, Name: "B", Impressions: 1000, Conversions: 150, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				wantNil(t, "A.PValue", r.Arms[0].PValue)
				wantFloat(t, "B.PValue", r.Arms[1].PValue, 0.000723233, 1e-9)
				wantID(t, r.WinnerID, 8)
			},
		},
		{
			name: "control marked second",
			arms: []Arm{
				{ID: 1, Name: "B", Impressions: 1000, Conversions: 150, Allocation: 1},
				{ID: 2, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
			},
			check: func(t *testing.T, r Result) {
				wantNil(t, "A.PValue", r.Arms[1].PValue)
				wantFloat(t, "B.Uplift", r.Arms[0].Uplift, 50, 1e-9)
				wantID(t, r.WinnerID, 1)
			},
		},
		{
			name: "single arm",
			arms: []Arm{{ID: 1, Name: "A", Impressions: 2000, Conversions: 200, Allocation: 1}},
			check: func(t *testing.T, r Result) {
				wantNil(t, "PValue", r.PValue)
				wantNil(t, "SRMPValue", r.SRMPValue)
				wantFloat(t, "AverageConversionRate", &r.AverageConversionRate, 10, 1e-12)
				if got, want := r.SufficientData, true; got != want {
					t.Errorf("SufficientData = %v, want %v", got, want)
				}
			},
		},
		{
			name: "treatment without impressions",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				wantNil(t, "B.PValue", r.Arms[1].PValue)
				wantNil(t, "B.Uplift", r.Arms[1].Uplift)
				wantNil(t, "B.Lower", r.Arms[1].Lower)
				wantNil(t, "PValue", r.PValue)
				wantFloat(t, "SRMPValue", r.SRMPValue, math.Erfc(math.Sqrt(1000.0/2)), 1e-225)
			},
		},
		{
			name: "SRM detected",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 5000, Conversions: 500, Allocation: 50, Control: true},
				{ID: 2, Name: "B", Impressions: 4000, Conversions: 400, Allocation: 50},
			},
			check: func(t *testing.T, r Result) {
				wantFloat(t, "SRMPValue", r.SRMPValue, math.Erfc(math.Sqrt(1000.0/9/2)), 1e-35)
				if got, want := r.SRMDetected, true; got != want {
					t.Errorf("SRMDetected = %v, want %v", got, want)
				}
			},
		},
		{
			// X² = 2·5²/4995 = 0.01001, p = 0.92030.
			name: "SRM not detected",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 5000, Conversions: 500, Allocation: 50, Control: true},
				{ID: 2, Name: "B", Impressions: 4990, Conversions: 400, Allocation: 50},
			},
			check: func(t *testing.T, r Result) {
				wantFloat(t, "SRMPValue", r.SRMPValue, 0.9203, 5e-5)
				if got, want := r.SRMDetected, false; got != want {
					t.Errorf("SRMDetected = %v, want %v", got, want)
				}
			},
		},
		{
			name: "unequal allocation respected",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 8000, Conversions: 800, Allocation: 0.8, Control: true},
				{ID: 2, Name: "B", Impressions: 2000, Conversions: 200, Allocation: 0.2},
			},
			check: func(t *testing.T, r Result) {
				wantFloat(t, "SRMPValue", r.SRMPValue, 1, 0)
			},
		},
		{
			name: "no allocation known",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 8000, Conversions: 800, Control: true},
				{ID: 2, Name: "B", Impressions: 2000, Conversions: 200},
			},
			check: func(t *testing.T, r Result) {
				wantNil(t, "SRMPValue", r.SRMPValue)
				if got, want := r.SRMDetected, false; got != want {
					t.Errorf("SRMDetected = %v, want %v", got, want)
				}
			},
		},
		{
			name: "sufficient data at the thresholds",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 1000, Conversions: 100, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				if got, want := r.SufficientData, true; got != want {
					t.Errorf("SufficientData = %v, want %v", got, want)
				}
			},
		},
		{
			name: "insufficient impressions",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 100, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 999, Conversions: 100, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				if got, want := r.SufficientData, false; got != want {
					t.Errorf("SufficientData = %v, want %v", got, want)
				}
			},
		},
		{
			name: "insufficient conversions",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: 1000, Conversions: 99, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 5000, Conversions: 500, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				if got, want := r.SufficientData, false; got != want {
					t.Errorf("SufficientData = %v, want %v", got, want)
				}
			},
		},
		{
			name: "invalid counts are sanitised",
			arms: []Arm{
				{ID: 1, Name: "A", Impressions: -5, Conversions: 3, Allocation: 1, Control: true},
				{ID: 2, Name: "B", Impressions: 10, Conversions: 20, Allocation: 1},
			},
			check: func(t *testing.T, r Result) {
				if got, want := r.Arms[0].Impressions, int64(0); got != want {
					t.Errorf("A.Impressions = %d, want %d", got, want)
				}
				if got, want := r.Arms[0].Conversions, int64(0); got != want {
					t.Errorf("A.Conversions = %d, want %d", got, want)
				}
				if got, want := r.Arms[1].Conversions, int64(10); got != want {
					t.Errorf("B.Conversions = %d, want %d", got, want)
				}
				wantFloat(t, "B.ConversionRate", &r.Arms[1].ConversionRate, 100, 0)
				wantFloat(t, "AverageConversionRate", &r.AverageConversionRate, 100, 0)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Analyze(tt.arms)
			if got, want := len(r.Arms), len(tt.arms); got != want {
				t.Fatalf("len(Arms) = %d, want %d", got, want)
			}
			for i, a := range tt.arms {
				if got, want := r.Arms[i].ID, a.ID; got != want {
					t.Errorf("Arms[%d].ID = %d, want %d", i, got, want)
				}
			}
			assertFinite(t, reflect.ValueOf(r), "Result")
			tt.check(t, r)
		})
	}
}

// TestAnalyzeRandomIsFinite throws many random campaigns, biased towards
// edge cases (zeros, all-converted, single arms, odd allocations), at
// Analyze and checks that nothing non-finite comes out and the basic
// invariants hold.
func TestAnalyzeRandomIsFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() int64 {
		switch rng.IntN(5) {
		case 0:
			return 0
		case 1:
			return int64(rng.IntN(3))
		case 2:
			return int64(rng.IntN(100))
		default:
			return rng.Int64N(1_000_000)
		}
	}
	for iter := range 3000 {
		arms := make([]Arm, 1+rng.IntN(5))
		for i := range arms {
			n := pick()
			var c int64
			switch rng.IntN(4) {
			case 0:
				c = 0
			case 1:
				c = n
			default:
				if n > 0 {
					c = rng.Int64N(n + 1)
				}
			}
			arms[i] = Arm{
				ID:          int64(i + 1),
				Impressions: n,
				Conversions: c,
				Allocation:  []float64{0, 1, 0.5, 33.3, 1e-9}[rng.IntN(5)],
				Control:     rng.IntN(4) == 0,
			}
		}
		r := Analyze(arms)
		assertFinite(t, reflect.ValueOf(r), "Result")
		for i, a := range r.Arms {
			if a.Lower != nil && (*a.Lower > a.ConversionRate+1e-9 || *a.Upper < a.ConversionRate-1e-9 || *a.Lower < 0 || *a.Upper > 100) {
				t.Errorf("iter %d arm %d: interval [%v, %v] does not contain rate %v within [0,100]", iter, i, *a.Lower, *a.Upper, a.ConversionRate)
			}
			if a.PValue != nil && (*a.PValue < 0 || *a.PValue > 1) {
				t.Errorf("iter %d arm %d: p = %v outside [0,1]", iter, i, *a.PValue)
			}
		}
		if r.PValue != nil && (*r.PValue < 0 || *r.PValue > 1) {
			t.Errorf("iter %d: campaign p = %v outside [0,1]", iter, *r.PValue)
		}
		if (r.WinnerID != nil) != r.Significant {
			t.Errorf("iter %d: WinnerID set = %v but Significant = %v", iter, r.WinnerID != nil, r.Significant)
		}
		if t.Failed() {
			t.Fatalf("arms: %+v", arms)
		}
	}
}

func TestInterpretation(t *testing.T) {
	tests := []struct {
		name                  string
		winner                string
		winnerRate, otherRate float64
		confidence            float64
		want                  string
	}{
		{
			"typical", "Variant B", 12.34, 10.06, 99.21,
			`"Variant B" converted at 12.3% versus 10.1% for the next best variant; we are 99.2% confident the difference is real.`,
		},
		{
			"close rates get more decimals", "Blue button", 10.12, 10.08, 97,
			`"Blue button" converted at 10.12% versus 10.08% for the next best variant; we are 97.0% confident the difference is real.`,
		},
		{
			"tiny rates do not print as zero", "Control", 0.04, 0.02, 96.5,
			`"Control" converted at 0.04% versus 0.02% for the next best variant; we are 96.5% confident the difference is real.`,
		},
		{
			"confidence to one decimal", "Variant B", 15, 10, 99.9277,
			`"Variant B" converted at 15.0% versus 10.0% for the next best variant; we are 99.9% confident the difference is real.`,
		},
		{
			"above 99.95 reads as more than 99.9", "Variant B", 100, 10, 99.99999,
			`"Variant B" converted at 100.0% versus 10.0% for the next best variant; we are more than 99.9% confident the difference is real.`,
		},
		{
			"non-finite inputs", "X", math.NaN(), math.Inf(1), math.NaN(),
			`"X" converted at 0.0% versus 0.0% for the next best variant; we are 0.0% confident the difference is real.`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := Interpretation(tt.winner, tt.winnerRate, tt.otherRate, tt.confidence), tt.want; got != want {
				t.Errorf("Interpretation() =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func BenchmarkAnalyze(b *testing.B) {
	arms := []Arm{
		{ID: 1, Name: "Control", Impressions: 120_000, Conversions: 12_000, Allocation: 1, Control: true},
		{ID: 2, Name: "Variant B", Impressions: 119_500, Conversions: 12_600, Allocation: 1},
		{ID: 3, Name: "Variant C", Impressions: 120_300, Conversions: 11_800, Allocation: 1},
	}
	for b.Loop() {
		_ = Analyze(arms)
	}
}

// assertFinite walks every float64 reachable from v (fields, pointers,
// slices) and fails on NaN or ±Inf.
func assertFinite(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); !finite(f) {
			t.Errorf("%s = %v, want finite", path, f)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			assertFinite(t, v.Elem(), "*"+path)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			assertFinite(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			assertFinite(t, v.Index(i), path+"["+strconv.Itoa(i)+"]")
		}
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func round(v float64, decimals int) float64 {
	s := math.Pow(10, float64(decimals))
	return math.Round(v*s) / s
}

func wantNil[T any](t *testing.T, name string, p *T) {
	t.Helper()
	if p != nil {
		t.Errorf("%s = %v, want nil", name, *p)
	}
}

func wantFloat(t *testing.T, name string, p *float64, want, tol float64) {
	t.Helper()
	if p == nil {
		t.Errorf("%s = nil, want %v", name, want)
		return
	}
	if got := *p; !near(got, want, tol) {
		t.Errorf("%s = %.12g, want %.12g (±%g)", name, got, want, tol)
	}
}

func wantID(t *testing.T, got *int64, want int64) {
	t.Helper()
	if got == nil {
		t.Errorf("WinnerID = nil, want %d", want)
		return
	}
	if *got != want {
		t.Errorf("WinnerID = %d, want %d", *got, want)
	}
}
