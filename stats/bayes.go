package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// PriorAlpha and PriorBeta are the Beta prior on every arm's conversion
// rate: Beta(1, 1), the uniform distribution, which claims nothing about
// the rate before data arrive and is outweighed by the first few dozen
// impressions. With c conversions out of n the posterior is
// Beta(1 + c, 1 + n − c).
const (
	PriorAlpha = 1
	PriorBeta  = 1
)

// BayesThreshold is the posterior probability of beating the control from
// which the Bayesian engine calls a treatment better (and, at 1 −
// BayesThreshold, worse).
const BayesThreshold = 0.95

// exactTermsLimit bounds the number of terms summed by the closed form of
// ProbGreater. Each term costs a logarithm and an exponential; beyond this
// (tens of thousands of conversions in both arms) the posteriors are nearly
// normal and quadrature reaches the same answer faster.
const exactTermsLimit = 20000

// quadIntervals is the number of Simpson intervals across ±quadSpan
// standard deviations of the narrower posterior.
const (
	quadIntervals = 200
	quadSpan      = 10
)

// ProbGreater returns P(X > Y) for independent X ~ Beta(a1, b1) and
// Y ~ Beta(a2, b2).
//
// When a1 or a2 is a whole number no larger than exactTermsLimit it uses
// Evan Miller's closed form ("Formulas for Bayesian A/B Testing", 2014),
// summed in log space with log-beta so that no term overflows:
//
//	P(X > Y) = Σ_{i=0}^{a1−1} B(a2+i, b1+b2) / ((b1+i)·B(1+i, b1)·B(a2, b2))
//
// or, summing over the smaller of a1 and a2, 1 − (the same with X and Y
// exchanged). Otherwise it integrates
//
//	P(X > Y) = ∫ f(x) · F_Y(x) dx      (or ∫ f_Y(y) · (1 − F_X(y)) dy)
//
// over ±10 standard deviations of the narrower of the two densities with
// composite Simpson's rule, so that the other's CDF is smooth on the grid;
// tests hold it to the closed form within 1e-6.
//
// Non-positive or non-finite parameters give NaN.
func ProbGreater(a1, b1, a2, b2 float64) float64 {
	for _, v := range []float64{a1, b1, a2, b2} {
		if !(v > 0) || math.IsInf(v, 0) {
			return math.NaN()
		}
	}
	whole := func(v float64) bool { return v == math.Trunc(v) && v <= exactTermsLimit }
	switch {
	case whole(a1) && (!whole(a2) || a1 <= a2):
		return clamp01(millerSum(a1, b1, a2, b2))
	case whole(a2):
		return clamp01(1 - millerSum(a2, b2, a1, b1))
	}
	return clamp01(probGreaterQuad(a1, b1, a2, b2))
}

// millerSum is Evan Miller's sum for P(X > Y), X ~ Beta(a1, b1) with a1 a
// whole number, Y ~ Beta(a2, b2). Rather than three log-beta calls a term,
// it takes term 0 from log-beta,
//
//	log t₀ = log B(a2, b1+b2) − log B(a2, b2)        (B(1, b1) = 1/b1)
//
// and steps by the ratio of consecutive terms,
//
//	tᵢ₊₁/tᵢ = (a2+i)(b1+i) / ((a2+b1+b2+i)(1+i))
//
// in linear arithmetic on numbers kept near 1 and a separate log scale,
// rescaled whenever they drift far from 1: early terms can be far below
// the smallest double while later ones dominate. The rounding error this
// accumulates stays near 1e-12 relative over exactTermsLimit steps.
func millerSum(a1, b1, a2, b2 float64) float64 {
	const big, logBig = 0x1p500, 500 * math.Ln2
	scale := mathext.Lbeta(a2, b1+b2) - mathext.Lbeta(a2, b2)
	t, sum := 1.0, 0.0
	for i := 0.0; i < a1; i++ {
		sum += t
		t *= (a2 + i) * (b1 + i) / ((a2 + b1 + b2 + i) * (1 + i))
		switch {
		case t > big || sum > big:
			t, sum, scale = t/big, sum/big, scale+logBig
		case t < 1/big && sum < 1/big:
			t, sum, scale = t*big, sum*big, scale-logBig
		}
	}
	return sum * math.Exp(scale)
}

// probGreaterQuad integrates P(X > Y) numerically (see ProbGreater).
func probGreaterQuad(a1, b1, a2, b2 float64) float64 {
	x := distuv.Beta{Alpha: a1, Beta: b1}
	y := distuv.Beta{Alpha: a2, Beta: b2}
	if x.StdDev() <= y.StdDev() {
		// Over X's density: P(X > Y) = ∫ f_X(t) F_Y(t) dt.
		return simpson(x, func(t float64) float64 { return y.CDF(t) })
	}
	// Over Y's density: P(X > Y) = ∫ f_Y(t) (1 − F_X(t)) dt.
	return simpson(y, func(t float64) float64 { return x.Survival(t) })
}

// simpson integrates d's density times g over the bulk of d.
func simpson(d distuv.Beta, g func(float64) float64) float64 {
	m, s := d.Mean(), d.StdDev()
	lo, hi := math.Max(0, m-quadSpan*s), math.Min(1, m+quadSpan*s)
	h := (hi - lo) / quadIntervals
	f := func(t float64) float64 {
		if t <= 0 || t >= 1 {
			return 0
		}
		return math.Exp(d.LogProb(t)) * g(t)
	}
	sum := f(lo) + f(hi)
	for i := 1; i < quadIntervals; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	return sum * h / 3
}

// BayesResult is the Bayesian comparison of a treatment with the control
// under the Beta(1, 1) prior. Rates and losses are fractions; uplift bounds
// are relative (0.1 = +10%).
type BayesResult struct {
	// ChanceToBeatControl is P(p_T > p_C | data).
	ChanceToBeatControl float64
	// ExpectedLoss is the risk of shipping the treatment instead of the
	// control, E[max(p_C − p_T, 0)]: the conversion rate one expects to
	// give up by choosing it, averaged over the posterior.
	ExpectedLoss float64
	// ControlExpectedLoss is the risk of keeping the control instead of
	// this treatment, E[max(p_T − p_C, 0)].
	ControlExpectedLoss float64
	// UpliftLower and UpliftUpper bound the 95% credible interval of the
	// relative uplift p_T/p_C − 1 (see Bayesian).
	UpliftLower, UpliftUpper float64
}

// Bayesian compares a treatment (cT of nT) with the control (cC of nC)
// under independent Beta(1, 1) priors, so that p_T ~ Beta(αT, βT) with
// αT = 1 + cT, βT = 1 + nT − cT, and likewise for the control.
//
// Expected loss has a closed form in terms of ProbGreater (Stucchio 2015):
// since x·Beta(α, β) density = E[X]·Beta(α+1, β) density,
//
//	E[max(p_C − p_T, 0)] = E[p_C]·P(C⁺ > T) − E[p_T]·P(C > T⁺)
//
// where C⁺ ~ Beta(αC+1, βC) and T⁺ ~ Beta(αT+1, βT); the control's loss is
// that plus E[p_T] − E[p_C].
//
// The credible interval of the uplift treats log(p_T/p_C) as normal with
// its exact posterior mean and variance (ψ is the digamma function, ψ₁ the
// trigamma):
//
//	μ  = ψ(αT) − ψ(αT+βT) − ψ(αC) + ψ(αC+βC)
//	σ² = ψ₁(αT) − ψ₁(αT+βT) + ψ₁(αC) − ψ₁(αC+βC)
//	[exp(μ − z·σ) − 1, exp(μ + z·σ) − 1],   z = Φ⁻¹(0.975)
//
// which is deterministic and costs a handful of special-function calls
// (unlike Monte Carlo, it gives the same answer on every request). Tests
// hold its endpoints to a 100,000-draw Monte Carlo within 4% of the
// interval's width from 20 conversions an arm, and within 1% from 200
// (measured: at most 2.3% and 0.3%).
//
// ok is false when an arm has no trials or a count is out of range.
func Bayesian(cT, nT, cC, nC int64) (r BayesResult, ok bool) {
	if nT <= 0 || nC <= 0 || cT < 0 || cC < 0 || cT > nT || cC > nC {
		return r, false
	}
	aT, bT := PriorAlpha+float64(cT), PriorBeta+float64(nT-cT)
	aC, bC := PriorAlpha+float64(cC), PriorBeta+float64(nC-cC)
	mT, mC := aT/(aT+bT), aC/(aC+bC)

	r.ChanceToBeatControl = ProbGreater(aT, bT, aC, bC)
	loss := mC*ProbGreater(aC+1, bC, aT, bT) - mT*ProbGreater(aC, bC, aT+1, bT)
	r.ExpectedLoss = math.Max(0, loss)
	r.ControlExpectedLoss = math.Max(0, loss+mT-mC)

	trigamma := func(x float64) float64 { return mathext.Zeta(2, x) }
	mu := mathext.Digamma(aT) - mathext.Digamma(aT+bT) - mathext.Digamma(aC) + mathext.Digamma(aC+bC)
	sd := math.Sqrt(trigamma(aT) - trigamma(aT+bT) + trigamma(aC) - trigamma(aC+bC))
	r.UpliftLower = math.Expm1(mu - Z95*sd)
	r.UpliftUpper = math.Expm1(mu + Z95*sd)
	return r, true
}
