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
