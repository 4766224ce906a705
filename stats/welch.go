package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Moments are a sample kept as sums, so that it can grow one value at a
// time without keeping the values: N values, their sum S and the sum of
// their squares Q.
type Moments struct {
	N    int64
	S, Q float64
}

// Mean returns S/N; ok is false without values.
func (m Moments) Mean() (mean float64, ok bool) {
	if m.N < 1 {
		return 0, false
	}
	return m.S / float64(m.N), true
}

// Variance returns the sample variance (Q − S²/N)/(N − 1); ok is false
// below two values. Rounding in Q − S²/N can leave a tiny negative number
// where the values are all equal: it is reported as 0.
func (m Moments) Variance() (v float64, ok bool) {
	if m.N < 2 {
		return 0, false
	}
	n := float64(m.N)
	return math.Max(0, (m.Q-m.S*m.S/n)/(n-1)), true
}

// WelchResult compares a treatment's mean with the control's.
type WelchResult struct {
	// Difference is mean(treatment) − mean(control).
	Difference float64
	// SE is the standard error of Difference, √(vₜ/nₜ + v_c/n_c).
	SE float64
	// DF is the Welch–Satterthwaite degrees of freedom.
	DF float64
	// PValue is the two-sided p-value of Welch's t-test, and Lower and
	// Upper bound the 95% interval of Difference. All three are nil when a
	// side has fewer than two values or SE is 0.
	PValue       *float64
	Lower, Upper *float64
	// Uplift is Difference/mean(control), nil when that mean is 0 or when
	// PValue is nil.
	Uplift *float64
}

// Welch is Welch's unequal-variances t-test of treatment t against control
// c, exactly as scipy.stats.ttest_ind(t, c, equal_var=False) computes it,
// and its 95% confidence interval:
//
//	d  = mₜ − m_c
//	se = √(vₜ/nₜ + v_c/n_c)
//	df = se⁴ / ((vₜ/nₜ)²/(nₜ−1) + (v_c/n_c)²/(n_c−1))
//	p  = 2·(1 − F_t(|d/se|; df))
//	interval = d ± t₀.₉₇₅(df)·se
//
// ok is false when either side has no values (no mean to compare); with
// one value on a side, or se = 0, the result has Difference but no
// PValue, interval or uplift. The tail is taken as F_t(−|t|), never
// 1 − F_t(|t|), so small p-values keep their digits.
func Welch(t, c Moments) (r WelchResult, ok bool) {
	mt, okT := t.Mean()
	mc, okC := c.Mean()
	if !okT || !okC {
		return r, false
	}
	r.Difference = mt - mc
	vt, okT := t.Variance()
	vc, okC := c.Variance()
	if !okT || !okC {
		return r, true
	}
	at, ac := vt/float64(t.N), vc/float64(c.N)
	r.SE = math.Sqrt(at + ac)
	if r.SE == 0 || math.IsNaN(r.SE) || math.IsInf(r.SE, 0) {
		r.SE = 0
		return r, true
	}
	r.DF = (at + ac) * (at + ac) / (at*at/float64(t.N-1) + ac*ac/float64(c.N-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: r.DF}
	p := math.Min(1, 2*dist.CDF(-math.Abs(r.Difference/r.SE)))
	q := dist.Quantile(0.975)
	r.PValue = ptr(p)
	r.Lower, r.Upper = ptr(r.Difference-q*r.SE), ptr(r.Difference+q*r.SE)
	if mc != 0 {
		r.Uplift = ptr(r.Difference / mc * 100)
	}
	return r, true
}

// Regressed reports whether an always-valid comparison says that the
// treatment is worse than the control: the 95% confidence sequence of the
// mixture SPRT (the sequential engine's test, at level Alpha with
// SequentialTuning), for d and se over n = nₜ + n_c values, lies wholly
// below 0 when higher is better (increase), or wholly above 0 when lower
// is better. Without a standard error nothing is regressed.
func Regressed(d, se float64, n int64, increase bool) bool {
	if se <= 0 || n < 1 || math.IsNaN(se) || math.IsNaN(d) {
		return false
	}
	half := MixtureHalfwidth(se, float64(n), MixtureRho(Alpha, SequentialTuning), Alpha)
	if increase {
		return d+half < 0
	}
	return d-half > 0
}
