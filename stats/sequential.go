package stats

import "math"

// SequentialTuning is N*, the total sample size (both arms together) at
// which the confidence sequence is tightest, and so the default from which
// the mixing variance is derived (see MixtureRho). 5,000 is GrowthBook's
// default "sequential tuning parameter": narrow enough early on for typical
// web traffic, and the sequence widens only slowly (like √(log n / n))
// beyond it.
const SequentialTuning = 5000

// MixtureRho returns ρ, the standard deviation of the normal mixing
// distribution N(0, ρ²) placed on the standardised effect θ/σ by the mixture
// sequential probability ratio test (mSPRT). ρ is chosen so that the
// two-sided confidence sequence at level 1−α has its smallest width at
// n = tuning (Howard et al. 2021, eq. 3.6; the same choice as GrowthBook's
// sequential testing):
//
//	ρ² = (−2·ln α + ln(1 − 2·ln α)) / N*
//
// On the scale of the raw difference the mixing variance is τ² = ρ²·σ²,
// where σ² is the per-observation variance of the difference (see
// Sequential). For α = 0.05 and N* = 5,000, ρ ≈ 0.03984.
func MixtureRho(alpha, tuning float64) float64 {
	l := -2 * math.Log(alpha)
	return math.Sqrt((l + math.Log(l+1)) / tuning)
}

// MixtureEValue returns Λₙ, the normal-mixture likelihood ratio of Johari et
// al. (2017) for H₀: θ = 0 after n observations whose estimate is est with
// standard error se:
//
//	S² = n·est²/se²           (the squared standardised sum, (Σ xᵢ/σ)²)
//	Λₙ = exp(ρ²·S² / (2(nρ² + 1))) / √(nρ² + 1)
//
// Under H₀, Λₙ is a non-negative martingale with mean 1, so by Ville's
// inequality P(∃n: Λₙ ≥ 1/α) ≤ α: rejecting as soon as Λₙ ≥ 1/α, at any
// look and as often as one likes, keeps the false-positive rate at α.
// The result is +Inf when it overflows (overwhelming evidence).
func MixtureEValue(est, se, n, rho float64) float64 {
	s2 := n * est * est / (se * se)
	v := n*rho*rho + 1
	return math.Exp(rho*rho*s2/(2*v)) / math.Sqrt(v)
}

// MixtureHalfwidth returns the half-width of the normal-mixture confidence
// sequence for a difference estimated with standard error se after n
// observations in total (Waudby-Smith et al. 2023, the asymptotic
// confidence sequence GrowthBook uses):
//
//	σ² = se²·n
//	half = σ·√( 2(nρ² + 1)·ln(√(nρ² + 1)/α) / (nρ)² )
//
// est ± half covers the true difference at every n simultaneously with
// probability at least 1−α. It is the set of θ that the mSPRT of H₀: θ' = θ
// would not reject, so 0 lies outside it exactly when 1/Λₙ ≤ α.
func MixtureHalfwidth(se, n, rho, alpha float64) float64 {
	s2 := se * se * n
	v := n*rho*rho + 1
	return math.Sqrt(s2) * math.Sqrt(2*v*math.Log(math.Sqrt(v)/alpha)/((n*rho)*(n*rho)))
}

// SequentialResult is the always-valid comparison of a treatment with the
// control. Differences and their bounds are fractions (0.01 = one
// percentage point); uplift bounds are relative (0.1 = +10%).
type SequentialResult struct {
	// PValue is the always-valid p-value at the present counts,
	// min(1, 1/Λₙ). Keeping its running minimum over successive looks
	// (SequentialMonitor) gives the monotone p-value process of Johari et
	// al.; either way, the chance that it ever drops below α under H₀ is
	// at most α.
	PValue float64
	// Difference is p̂_T − p̂_C; DiffLower and DiffUpper bound it by the
	// confidence sequence at level 1 − Alpha, within [−1, 1].
	Difference, DiffLower, DiffUpper float64
	// Uplift is p̂_T/p̂_C − 1 and UpliftLower/UpliftUpper its confidence
	// sequence, with the delta-method variance GrowthBook uses for
	// relative effects; UpliftLower is at least −1. Nil when the
	// control's rate is 0.
	Uplift, UpliftLower, UpliftUpper *float64
}

// Sequential runs the mSPRT for the difference in proportions of a
// treatment (cT of nT) against the control (cC of nC) at level alpha with
// the mixing parameter MixtureRho(alpha, tuning):
//
//	d  = p̂_T − p̂_C
//	se = √( p̂_T(1−p̂_T)/nT + p̂_C(1−p̂_C)/nC )       (unpooled)
//	n  = nT + nC
//	p  = min(1, 1/Λₙ(d, se, n)),   [d − h, d + h] ∩ [−1, 1],  h = MixtureHalfwidth(se, n)
//
// and, for the relative uplift r = p̂_T/p̂_C − 1,
//
//	se_r² = p̂_T(1−p̂_T)/(p̂_C²·nT) + p̂_C(1−p̂_C)·p̂_T²/(p̂_C⁴·nC)
//	[r − h_r, r + h_r] ∩ [−1, ∞),   h_r = MixtureHalfwidth(se_r, n)
//
// ok is false when the test is undefined: an arm without trials, counts out
// of range, or a zero standard error with a non-zero difference (every
// observation in each arm identical, the two arms different). A zero
// standard error with no difference (say, no conversions anywhere) gives
// p = 1 and a sequence of zero width at 0, like ZTest's p = 1.
func Sequential(cT, nT, cC, nC int64, alpha, tuning float64) (r SequentialResult, ok bool) {
	if nT <= 0 || nC <= 0 || cT < 0 || cC < 0 || cT > nT || cC > nC || !(alpha > 0 && alpha < 1) || !(tuning > 0) {
		return r, false
	}
	pt := float64(cT) / float64(nT)
	pc := float64(cC) / float64(nC)
	n := float64(nT + nC)
	rho := MixtureRho(alpha, tuning)
	d := pt - pc
	se := math.Sqrt(pt*(1-pt)/float64(nT) + pc*(1-pc)/float64(nC))
	if se == 0 {
		if d != 0 {
			return r, false
		}
		return SequentialResult{PValue: 1}, true
	}
	half := MixtureHalfwidth(se, n, rho, alpha)
	// The sequences are intersected with the values the parameters can
	// take: a difference of two rates lies in [−1, 1], and an uplift is at
	// least −1 (a rate cannot fall below 0). Whenever a sequence holds the
	// true value, so does its intersection with the set the true value
	// lies in: the coverage is unchanged, and so is whether 0 is inside.
	// With a few users an arm the half-width alone exceeds 9 (±900
	// percentage points).
	r = SequentialResult{
		PValue:     math.Min(1, 1/MixtureEValue(d, se, n, rho)),
		Difference: d, DiffLower: max(d-half, -1), DiffUpper: min(d+half, 1),
	}
	if pc > 0 {
		u := pt/pc - 1
		ser := math.Sqrt(pt*(1-pt)/(pc*pc*float64(nT)) + pc*(1-pc)*pt*pt/(pc*pc*pc*pc*float64(nC)))
		hu := MixtureHalfwidth(ser, n, rho, alpha)
		r.Uplift, r.UpliftLower, r.UpliftUpper = ptr(u), ptr(max(u-hu, -1)), ptr(u+hu)
	}
	return r, true
}

// SequentialMonitor follows one treatment across successive looks and keeps
// the always-valid p-value as a running minimum and the confidence sequence
// of the difference as a running intersection, which is how Johari et al.
// define them: once the evidence has crossed a threshold it stays crossed,
// and the interval never widens. The zero value is ready to use.
type SequentialMonitor struct {
	seen   bool
	p      float64
	lo, hi float64
}

// Observe takes the result of the latest look and returns the monitored
// values so far: PValue is the minimum over all looks, DiffLower/DiffUpper
// the intersection (when the sequences stop overlapping, which happens with
// probability at most α, the latest interval is kept instead).
func (m *SequentialMonitor) Observe(r SequentialResult) SequentialResult {
	if !m.seen {
		m.seen, m.p, m.lo, m.hi = true, r.PValue, r.DiffLower, r.DiffUpper
	} else {
		m.p = math.Min(m.p, r.PValue)
		lo, hi := math.Max(m.lo, r.DiffLower), math.Min(m.hi, r.DiffUpper)
		if lo <= hi {
			m.lo, m.hi = lo, hi
		} else {
			m.lo, m.hi = r.DiffLower, r.DiffUpper
		}
	}
	r.PValue, r.DiffLower, r.DiffUpper = m.p, m.lo, m.hi
	return r
}
