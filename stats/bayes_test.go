package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestProbGreaterClosedForms checks Evan Miller's sum on cases integrable
// by hand: P(Beta(a,1) > Beta(1,1)) = ∫ a·xᵃ⁻¹·x dx = a/(a+1), and
// P(Beta(1,b) > Beta(1,1)) = 1/(b+1); equal posteriors give ½.
func TestProbGreaterClosedForms(t *testing.T) {
	for _, c := range []struct{ a1, b1, a2, b2, want float64 }{
		{1, 1, 1, 1, 0.5},
		{2, 1, 1, 1, 2.0 / 3},
		{9, 1, 1, 1, 0.9},
		{1, 3, 1, 1, 0.25},
		{1, 1, 2, 1, 1.0 / 3},
		{37, 512, 37, 512, 0.5},
	} {
		if got := ProbGreater(c.a1, c.b1, c.a2, c.b2); !near(got, c.want, 1e-12) {
			t.Errorf("ProbGreater(%v, %v, %v, %v) = %.15f, want %.15f", c.a1, c.b1, c.a2, c.b2, got, c.want)
		}
	}
	if got := ProbGreater(0, 1, 1, 1); !math.IsNaN(got) {
		t.Errorf("ProbGreater(0, ...) = %v, want NaN", got)
	}
}

// bayesRef are values computed independently with mpmath at 30 digits by
// adaptive quadrature of the posterior integrals (not with the formulas
// under test):
//
//	P     = ∫ f_C(x)·(1 − I_x(αT, βT)) dx
//	lossT = ∫ f_C(x)·(x·I_x(αT, βT) − E[p_T]·I_x(αT+1, βT)) dx
//	lossC = lossT + E[p_T] − E[p_C]
var bayesRef = []struct {
	cT, nT, cC, nC     int64
	p, lossT, lossCtrl float64
}{
	{10, 100, 5, 100, 0.904268211857696, 0.00174099566647703, 0.0507606035096143},
	{120, 1000, 100, 1000, 0.92318343897356, 0.000484613926356444, 0.0204446937666758},
	{3, 40, 0, 35, 0.925166725166725, 0.00191880191880192, 0.0701298701298701},
	{520, 5000, 480, 5000, 0.908700642344362, 0.000254798529422689, 0.00825159980891089},
	{0, 10, 0, 10, 0.5, 0.0398550724637681, 0.0398550724637681},
}

func TestBayesianReference(t *testing.T) {
	for _, c := range bayesRef {
		r, ok := Bayesian(c.cT, c.nT, c.cC, c.nC)
		if !ok {
			t.Fatalf("Bayesian(%d/%d vs %d/%d) undefined", c.cT, c.nT, c.cC, c.nC)
		}
		if !near(r.ChanceToBeatControl, c.p, 1e-10) {
			t.Errorf("%d/%d vs %d/%d: chance = %.15f, want %.15f", c.cT, c.nT, c.cC, c.nC, r.ChanceToBeatControl, c.p)
		}
		if !relNear(r.ExpectedLoss, c.lossT, 1e-8) {
			t.Errorf("%d/%d vs %d/%d: loss = %.15g, want %.15g", c.cT, c.nT, c.cC, c.nC, r.ExpectedLoss, c.lossT)
		}
		if !relNear(r.ControlExpectedLoss, c.lossCtrl, 1e-8) {
			t.Errorf("%d/%d vs %d/%d: control loss = %.15g, want %.15g", c.cT, c.nT, c.cC, c.nC, r.ControlExpectedLoss, c.lossCtrl)
		}
	}
}

// TestProbGreaterQuadratureAgrees holds the numerical integration used for
// large counts to Evan Miller's exact sum where both are available (the
// brief's tolerance is 1e-4; the quadrature does far better), including
// lopsided arms where one posterior is much narrower than the other.
func TestProbGreaterQuadratureAgrees(t *testing.T) {
	for _, c := range []struct{ cT, nT, cC, nC int64 }{
		{10, 100, 5, 100}, {120, 1000, 100, 1000}, {4000, 40000, 3900, 40000},
		{4999, 50000, 4800, 48000}, {19000, 190000, 19500, 190000}, {300, 3000, 3100, 30000}, {2, 5000, 4000, 5000}, {0, 10, 0, 10},
	} {
		a1, b1 := 1+float64(c.cT), 1+float64(c.nT-c.cT)
		a2, b2 := 1+float64(c.cC), 1+float64(c.nC-c.cC)
		exact := ProbGreater(a1, b1, a2, b2)
		quad := probGreaterQuad(a1, b1, a2, b2)
		if !near(exact, quad, 1e-6) {
			t.Errorf("%+v: exact %.12f, quadrature %.12f", c, exact, quad)
		}
	}
	// Above the closed form's limit ProbGreater integrates; the normal
	// approximation is close there and must agree to 1e-3.
	a1, b1, a2, b2 := 60001.0, 540001.0, 58001.0, 542001.0
	got := ProbGreater(a1, b1, a2, b2)
	x, y := distuv.Beta{Alpha: a1, Beta: b1}, distuv.Beta{Alpha: a2, Beta: b2}
	approx := distuv.UnitNormal.CDF((x.Mean() - y.Mean()) / math.Hypot(x.StdDev(), y.StdDev()))
	if !near(got, approx, 1e-3) {
		t.Errorf("large counts: %.8f, normal approximation %.8f", got, approx)
	}
}

// TestBayesianUpliftInterval holds the log-normal credible interval of the
// uplift to a 100,000-draw Monte Carlo from the Beta posteriors (fixed
// seed): each endpoint within 4% of the interval's width from 20
// conversions an arm, within 1% from 200.
func TestBayesianUpliftInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const draws = 100_000
	for _, c := range []struct {
		cT, nT, cC, nC int64
		tol            float64
	}{
		{20, 200, 25, 210, 0.04},
		{30, 1000, 20, 1000, 0.04},
		{200, 2000, 180, 2000, 0.01},
		{1200, 10000, 1000, 10000, 0.01},
	} {
		r, ok := Bayesian(c.cT, c.nT, c.cC, c.nC)
		if !ok {
			t.Fatalf("%+v undefined", c)
		}
		bt := distuv.Beta{Alpha: 1 + float64(c.cT), Beta: 1 + float64(c.nT-c.cT), Src: rng}
		bc := distuv.Beta{Alpha: 1 + float64(c.cC), Beta: 1 + float64(c.nC-c.cC), Src: rng}
		u := make([]float64, draws)
		for i := range u {
			u[i] = bt.Rand()/bc.Rand() - 1
		}
		slices.Sort(u)
		lo, hi := u[int(0.025*draws)], u[int(0.975*draws)]
		w := hi - lo
		t.Logf("%+v: endpoint errors %.2f%% and %.2f%% of the width", c, 100*math.Abs(r.UpliftLower-lo)/w, 100*math.Abs(r.UpliftUpper-hi)/w)
		if !near(r.UpliftLower, lo, c.tol*w) || !near(r.UpliftUpper, hi, c.tol*w) {
			t.Errorf("%+v: interval [%.5f, %.5f], Monte Carlo [%.5f, %.5f]", c, r.UpliftLower, r.UpliftUpper, lo, hi)
		}
	}
}

func TestBayesianEdgeCases(t *testing.T) {
	if _, ok := Bayesian(1, 0, 1, 10); ok {
		t.Error("no trials: ok = true")
	}
	if _, ok := Bayesian(1, 10, 11, 10); ok {
		t.Error("conversions above trials: ok = true")
	}
	// Losses are never negative, even when cancellation would round them so.
	r, _ := Bayesian(5000, 10000, 10, 10000)
	if r.ExpectedLoss < 0 || r.ControlExpectedLoss < 0 || r.ChanceToBeatControl != 1 {
		t.Errorf("overwhelming win: %+v", r)
	}
}
