package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestZ95IsTheNormalQuantile pins the constant to gonum's quantile, so the
// two can never drift apart.
func TestZ95IsTheNormalQuantile(t *testing.T) {
	if got, want := Z95, distuv.UnitNormal.Quantile(0.975); !relNear(got, want, 1e-14) {
		t.Fatalf("Z95 = %.17g, want Φ⁻¹(0.975) = %.17g", got, want)
	}
}

func TestMixtureRho(t *testing.T) {
	// ρ² = (−2 ln α + ln(1 − 2 ln α))/N*, worked by hand for α = 0.05:
	// −2 ln 0.05 = 5.9914645471, ln 6.9914645471 = 1.9446900546, sum
	// 7.9361546017, so ρ = 0.0398400668.
	if got, want := MixtureRho(0.05, 5000), 0.0398400668; !relNear(got, want, 1e-8) {
		t.Fatalf("MixtureRho(0.05, 5000) = %.10g, want %.10g", got, want)
	}
}

// TestSequentialGrowthBook reproduces the published expectations of
// GrowthBook's reference implementation (gbstats
// tests/frequentist/test_tests.py, TestSequentialTTest), which uses the same
// normal-mixture confidence sequence.
func TestSequentialGrowthBook(t *testing.T) {
	t.Run("proportions, relative, default tuning", func(t *testing.T) {
		// test_sequential_test_runs_prop: 1396/3000 against 2422/3461,
		// expected 0.50386, ci (0.40098, 0.60675), stddev 0.03386.
		r, ok := Sequential(2422, 3461, 1396, 3000, 0.05, SequentialTuning)
		if !ok || r.Uplift == nil {
			t.Fatalf("Sequential ok=%v uplift=%v", ok, r.Uplift)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"uplift", *r.Uplift, 0.50386},
			{"lower", *r.UpliftLower, 0.40098},
			{"upper", *r.UpliftUpper, 0.60675},
		} {
			if !near(c.got, c.want, 5e-6) {
				t.Errorf("%s = %.6f, want %.5f", c.name, c.got, c.want)
			}
		}
		if r.PValue != 0 && r.PValue > 1e-10 {
			t.Errorf("PValue = %g, want ~0 (GrowthBook rounds to 0.0)", r.PValue)
		}
	})
	t.Run("sample means, relative, tuning 1000", func(t *testing.T) {
		// test_sequential_test_runs: expected 0.50336, ci (-0.55844, 1.56516),
		// stddev 0.33341, pValue 1. The relative delta-method variance is
		// computed here from the sums, as gbstats does.
		type stat struct{ sum, sumSq, n float64 }
		a := stat{1396.87, 52377.9767, 3000}
		b := stat{2422.7, 134698.29, 3461}
		mean := func(s stat) float64 { return s.sum / s.n }
		variance := func(s stat) float64 { return (s.sumSq - s.sum*s.sum/s.n) / (s.n - 1) }
		ma, mb := mean(a), mean(b)
		est := mb/ma - 1
		se := math.Sqrt(variance(b)/(ma*ma*b.n) + variance(a)*mb*mb/(ma*ma*ma*ma*a.n))
		n := a.n + b.n
		rho := MixtureRho(0.05, 1000)
		half := MixtureHalfwidth(se, n, rho, 0.05)
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"estimate", est, 0.50336},
			{"stddev", se, 0.33341},
			{"lower", est - half, -0.55844},
			{"upper", est + half, 1.56516},
			{"pValue", math.Min(1, 1/MixtureEValue(est, se, n, rho)), 1},
		} {
			if !near(c.got, c.want, 5e-6) {
				t.Errorf("%s = %.6f, want %.5f", c.name, c.got, c.want)
			}
		}
	})
}

// TestSequentialMatchesMSPRT checks the e-value against Johari et al.'s
// mSPRT for a normal mean written in their own form: with observations of
// variance σ², mixing N(0, τ²) on the raw effect and n observations of mean
// x̄,
//
//	Λₙ = √(σ²/(σ² + nτ²)) · exp(n²τ²x̄² / (2σ²(σ² + nτ²)))
//
// and τ² = ρ²σ².
func TestSequentialMatchesMSPRT(t *testing.T) {
	for _, c := range []struct{ est, sigma, n, rho float64 }{
		{0.01, 0.5, 1000, 0.04}, {-0.02, 0.3, 20000, 0.04}, {0.003, 0.45, 150000, 0.01}, {0, 0.4, 10, 0.5},
	} {
		tau2 := c.rho * c.rho * c.sigma * c.sigma
		s2 := c.sigma * c.sigma
		want := math.Sqrt(s2/(s2+c.n*tau2)) * math.Exp(c.n*c.n*tau2*c.est*c.est/(2*s2*(s2+c.n*tau2)))
		se := c.sigma / math.Sqrt(c.n)
		if got := MixtureEValue(c.est, se, c.n, c.rho); !relNear(got, want, 1e-9) {
			t.Errorf("MixtureEValue%+v = %.12g, want %.12g", c, got, want)
		}
	}
}

// TestSequentialDualityOfPAndInterval: 0 lies outside the confidence
// sequence exactly when p ≤ α, the property that lets a reader trust
// either number.
func TestSequentialDualityOfPAndInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		nT, nC := 1+rng.Int64N(20000), 1+rng.Int64N(20000)
		pt, pc := rng.Float64()*0.3, rng.Float64()*0.3
		cT, cC := int64(float64(nT)*pt), int64(float64(nC)*pc)
		r, ok := Sequential(cT, nT, cC, nC, Alpha, SequentialTuning)
		if !ok {
			continue
		}
		excludes := r.DiffLower > 0 || r.DiffUpper < 0
		// Skip the measure-zero boundary where rounding decides.
		if math.Abs(r.PValue-Alpha) < 1e-9 {
			continue
		}
		if excludes != (r.PValue <= Alpha) {
			t.Fatalf("Sequential(%d/%d vs %d/%d): p=%g, interval [%g, %g]", cT, nT, cC, nC, r.PValue, r.DiffLower, r.DiffUpper)
		}
	}
}

func TestSequentialEdgeCases(t *testing.T) {
	if _, ok := Sequential(1, 0, 1, 10, Alpha, SequentialTuning); ok {
		t.Error("no trials: ok = true")
	}
	if _, ok := Sequential(11, 10, 1, 10, Alpha, SequentialTuning); ok {
		t.Error("conversions above trials: ok = true")
	}
	if _, ok := Sequential(0, 10, 10, 10, Alpha, SequentialTuning); ok {
		t.Error("zero variance with a difference: ok = true")
	}
	r, ok := Sequential(0, 1000, 0, 1000, Alpha, SequentialTuning)
	if !ok || r.PValue != 1 || r.DiffLower != 0 || r.DiffUpper != 0 || r.Uplift != nil {
		t.Errorf("no conversions: %+v ok=%v, want p=1, [0, 0], no uplift", r, ok)
	}
}

// TestSequentialPValueNeverIncreases follows a true effect (10% against 12%)
// day by day: the monitored p-value never goes up, the monitored interval
// never widens, and the effect is eventually detected.
func TestSequentialPValueNeverIncreases(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var m SequentialMonitor
	var cT, nT, cC, nC int64
	prevP, prevW := 2.0, math.Inf(1)
	detected := false
	for day := range 60 {
		for range 500 {
			nC++
			if rng.Float64() < 0.10 {
				cC++
			}
			nT++
			if rng.Float64() < 0.12 {
				cT++
			}
		}
		r, ok := Sequential(cT, nT, cC, nC, Alpha, SequentialTuning)
		if !ok {
			t.Fatalf("day %d: undefined", day)
		}
		got := m.Observe(r)
		if got.PValue > prevP {
			t.Fatalf("day %d: p rose from %g to %g", day, prevP, got.PValue)
		}
		if w := got.DiffUpper - got.DiffLower; w > prevW {
			t.Fatalf("day %d: interval widened from %g to %g", day, prevW, w)
		}
		prevP, prevW = got.PValue, got.DiffUpper-got.DiffLower
		detected = detected || got.PValue < Alpha
	}
	if !detected {
		t.Fatalf("a 10%% → 12%% effect over 30,000 users an arm was never detected (p=%g)", prevP)
	}
}

// TestSequentialAAFalsePositiveRate simulates 1,000 A/A experiments of 30
// days with 200 users an arm a day at a 10% rate, peeking every day, and
// counts those ever declared significant. The fixed-horizon z-test peeked
// at the same way is counted too, to show the simulation does detect the
// problem the mSPRT solves. Every user is drawn from a seeded generator, so
// the run is deterministic.
func TestSequentialAAFalsePositiveRate(t *testing.T) {
	const (
		experiments = 1000
		days        = 30
		perDay      = 200
		rate        = 0.10
	)
	rng := rand.New(rand.NewPCG(2024, 16))
	binomial := func(n int) int64 {
		var c int64
		for range n {
			if rng.Float64() < rate {
				c++
			}
		}
		return c
	}
	seqFP, fixedFP := 0, 0
	for range experiments {
		var cA, cB, n int64
		seqHit, fixedHit := false, false
		for range days {
			cA += binomial(perDay)
			cB += binomial(perDay)
			n += perDay
			if r, ok := Sequential(cB, n, cA, n, Alpha, SequentialTuning); ok && r.PValue < Alpha {
				seqHit = true
			}
			if _, p, ok := ZTest(cB, n, cA, n); ok && p < Alpha {
				fixedHit = true
			}
		}
		if seqHit {
			seqFP++
		}
		if fixedHit {
			fixedFP++
		}
	}
	seqRate, fixedRate := float64(seqFP)/experiments, float64(fixedFP)/experiments
	t.Logf("A/A with daily peeking: mSPRT %.3f, fixed-horizon z-test %.3f", seqRate, fixedRate)
	if seqRate >= Alpha {
		t.Errorf("mSPRT false-positive rate %.3f, want < %.2f", seqRate, Alpha)
	}
	if fixedRate <= Alpha {
		t.Errorf("fixed-horizon peeking rate %.3f, want > %.2f (the simulation should show the peeking problem)", fixedRate, Alpha)
	}
}

// TestSequentialWithinPossibleValues: the difference's sequence stays in
// [−1, 1] and the uplift's above −1, which with a handful of users an arm
// the raw half-width (above 9) overshoots many times; where the raw bound
// is possible it is kept as it is.
func TestSequentialWithinPossibleValues(t *testing.T) {
	rho := MixtureRho(Alpha, SequentialTuning)
	for _, c := range []struct {
		name               string
		cT, nT, cC, nC     int64
		lowerRaw, upperRaw bool // whether the raw difference bounds are possible, so kept
		upliftLowerRaw     bool
	}{
		{"3 users an arm, 2 against 1", 2, 3, 1, 3, false, false, false},
		{"3 users an arm, 1 against 2", 1, 3, 2, 3, false, false, false},
		{"3 users an arm, 3 against 1", 3, 3, 1, 3, false, false, false},
		{"3 users an arm, 0 against 1", 0, 3, 1, 3, false, false, true}, // uplift exactly −1, no spread
		{"near +1: 99 of 100 against 1 of 100", 99, 100, 1, 100, true, false, false},
		{"near −1: 1 of 100 against 99 of 100", 1, 100, 99, 100, false, true, false},
		{"5,000 an arm", 580, 5000, 500, 5000, true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ok := Sequential(c.cT, c.nT, c.cC, c.nC, Alpha, SequentialTuning)
			if !ok {
				t.Fatal("undefined")
			}
			pt, pc := float64(c.cT)/float64(c.nT), float64(c.cC)/float64(c.nC)
			n := float64(c.nT + c.nC)
			half := MixtureHalfwidth(math.Sqrt(pt*(1-pt)/float64(c.nT)+pc*(1-pc)/float64(c.nC)), n, rho, Alpha)
			for _, b := range []struct {
				name      string
				got, raw  float64
				keep      bool
				bound     float64
				overshoot bool // raw beyond bound
			}{
				{"DiffLower", r.DiffLower, r.Difference - half, c.lowerRaw, -1, r.Difference-half < -1},
				{"DiffUpper", r.DiffUpper, r.Difference + half, c.upperRaw, 1, r.Difference+half > 1},
			} {
				if b.keep == b.overshoot {
					t.Fatalf("%s: the raw bound %g is not the case's (keep=%v)", b.name, b.raw, b.keep)
				}
				want := b.bound
				if b.keep {
					want = b.raw
				}
				if b.got != want {
					t.Errorf("%s = %g, want %g (raw %g)", b.name, b.got, want, b.raw)
				}
			}
			if c.cC == 0 {
				return
			}
			if r.Uplift == nil || r.UpliftLower == nil || r.UpliftUpper == nil {
				t.Fatalf("uplift %v [%v, %v]", r.Uplift, r.UpliftLower, r.UpliftUpper)
			}
			ser := math.Sqrt(pt*(1-pt)/(pc*pc*float64(c.nT)) + pc*(1-pc)*pt*pt/(pc*pc*pc*pc*float64(c.nC)))
			hu := MixtureHalfwidth(ser, n, rho, Alpha)
			rawLower := *r.Uplift - hu
			if c.upliftLowerRaw != (rawLower >= -1) {
				t.Fatalf("UpliftLower: the raw bound %g is not the case's", rawLower)
			}
			if want := max(rawLower, -1); *r.UpliftLower != want {
				t.Errorf("UpliftLower = %g, want %g", *r.UpliftLower, want)
			}
			// No bound exists above: a control at 1% can be beaten 99-fold.
			if want := *r.Uplift + hu; *r.UpliftUpper != want {
				t.Errorf("UpliftUpper = %g, want %g", *r.UpliftUpper, want)
			}
		})
	}
}

// TestSequentialBoundsHoldTheEstimate: for every count of up to 12 users an
// arm, the sequences lie within the possible values and hold the estimate,
// and 0 is outside the difference's exactly when p ≤ α, as without the
// intersection.
func TestSequentialBoundsHoldTheEstimate(t *testing.T) {
	for nT := int64(1); nT <= 12; nT++ {
		for nC := int64(1); nC <= 12; nC++ {
			for cT := int64(0); cT <= nT; cT++ {
				for cC := int64(0); cC <= nC; cC++ {
					r, ok := Sequential(cT, nT, cC, nC, Alpha, SequentialTuning)
					if !ok {
						continue
					}
					if r.DiffLower < -1 || r.DiffUpper > 1 || r.Difference < r.DiffLower || r.Difference > r.DiffUpper {
						t.Fatalf("%d/%d vs %d/%d: difference %g in [%g, %g]", cT, nT, cC, nC, r.Difference, r.DiffLower, r.DiffUpper)
					}
					if excludes := r.DiffLower > 0 || r.DiffUpper < 0; excludes != (r.PValue <= Alpha) {
						t.Fatalf("%d/%d vs %d/%d: p=%g, interval [%g, %g]", cT, nT, cC, nC, r.PValue, r.DiffLower, r.DiffUpper)
					}
					if r.Uplift != nil && (*r.UpliftLower < -1 || *r.Uplift < *r.UpliftLower || *r.Uplift > *r.UpliftUpper) {
						t.Fatalf("%d/%d vs %d/%d: uplift %g in [%g, %g]", cT, nT, cC, nC, *r.Uplift, *r.UpliftLower, *r.UpliftUpper)
					}
				}
			}
		}
	}
}
