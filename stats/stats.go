// Package stats holds the statistics behind A/B-test campaign analytics:
// a pooled two-proportion z-test, Wilson score intervals, Holm-Bonferroni
// adjustment for comparing several treatments against one control, a
// chi-square goodness-of-fit test for sample ratio mismatch (SRM), Cohen's h
// as an effect size, and Analyze, which turns raw per-arm counts into a
// campaign report.
//
// Everything here is pure computation on numbers: no I/O, no globals, safe
// for concurrent use. Analyze never emits NaN or ±Inf, because its output is
// meant to be serialised to JSON (which cannot carry them) and shown to
// people who would not know what to make of them; where a quantity is
// undefined it is reported as a nil pointer instead.
package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Z95 is the standard normal quantile Φ⁻¹(0.975), the critical value of a
// two-sided 95% interval. The usual "1.96" is rounded; the full value keeps
// interval endpoints reproducible against published tables to 4 decimals.
const Z95 = 1.959963984540054

// Thresholds used by Analyze. They are constants rather than parameters so
// that every campaign is judged by the same yardstick.
const (
	// Alpha is the significance level for the (Holm-adjusted) treatment
	// comparisons.
	Alpha = 0.05
	// SRMAlpha is deliberately much stricter than Alpha: an SRM alarm tells
	// the user to distrust the whole experiment, so false alarms are costly,
	// and with realistic traffic a genuine assignment bug gives p-values far
	// below 0.001 anyway.
	SRMAlpha = 0.001
	// MinImpressions and MinConversions per arm are rules of thumb for when
	// the normal approximation behind the z-test and the interval is sound
	// and the test has useful power at typical conversion rates.
	MinImpressions = 1000
	MinConversions = 100
)

// NormalCDF returns Φ(z), the standard normal cumulative distribution
// function, from gonum's distuv.Normal. gonum evaluates it as ½·erfc(−z/√2)
// rather than ½(1+erf(z/√2)): for very negative z the latter subtracts two
// nearly equal numbers and loses every significant digit, while erfc keeps
// full relative precision in the tail (where small p-values live). NaN
// propagates.
func NormalCDF(z float64) float64 {
	return distuv.UnitNormal.CDF(z)
}

// TwoSidedP returns the two-sided p-value of a standard normal statistic z:
//
//	p = 2·(1 − Φ(|z|)) = 2·Φ(−|z|)
//
// It takes the lower tail Φ(−|z|), never 1 − Φ(|z|), which rounds to exactly
// 0 as soon as Φ(|z|) rounds to 1 (|z| ≳ 8.3). gonum's Normal.Survival is
// written as ½(1 − erf) and has that very flaw, so it is not used here.
// ±Inf gives 0; NaN propagates.
func TwoSidedP(z float64) float64 {
	return 2 * distuv.UnitNormal.CDF(-math.Abs(z))
}

// ZTest is the pooled two-proportion z-test of H₀: π₁ = π₂ for c1
// conversions out of n1 trials against c2 out of n2:
//
//	p̂ᵢ = cᵢ/nᵢ,   p̂ = (c1+c2)/(n1+n2)
//	z  = (p̂₁ − p̂₂) / √( p̂(1−p̂)(1/n1 + 1/n2) )
//	p  = 2·(1 − Φ(|z|))
//
// The variance is pooled because under H₀ both arms share one rate, and
// pooling makes z² identical to Pearson's chi-square on the 2×2 table, so
// this test agrees with the chi-square test a statistician would run.
//
// z is positive when arm 1 converts better than arm 2.
//
// ok is false when the test is undefined: n1 or n2 is not positive, or a
// count is negative or larger than its trials. When the pooled rate is 0 or
// 1 (no conversions at all, or nothing but conversions) the standard error
// is zero, but so is the difference — the data show no evidence of any
// difference — so the result is z = 0, p = 1, ok = true rather than 0/0.
// The result is never NaN or Inf.
func ZTest(c1, n1, c2, n2 int64) (z, p float64, ok bool) {
	if n1 <= 0 || n2 <= 0 || c1 < 0 || c2 < 0 || c1 > n1 || c2 > n2 {
		return 0, 0, false
	}
	pooled := float64(c1+c2) / float64(n1+n2)
	if c1+c2 == 0 || c1+c2 == n1+n2 {
		return 0, 1, true
	}
	p1 := float64(c1) / float64(n1)
	p2 := float64(c2) / float64(n2)
	se := math.Sqrt(pooled * (1 - pooled) * (1/float64(n1) + 1/float64(n2)))
	z = (p1 - p2) / se
	return z, TwoSidedP(z), true
}

// ZTestApplicable reports whether the normal approximation behind ZTest
// holds for c1 of n1 against c2 of n2: with p̂ the pooled rate, both arms
// need n·p̂ ≥ 5 and n·(1 − p̂) ≥ 5 (the textbook rule for a 2×2 table, the
// same as every expected cell count of Pearson's chi-square being at least
// 5). Below it the z-statistic is far from normal, and a "significant"
// p-value at 1 impression against 3 says nothing. The comparison is done on
// integer products, so a pair exactly at the edge is never lost to
// rounding. Invalid counts (see ZTest) are not applicable.
func ZTestApplicable(c1, n1, c2, n2 int64) bool {
	if n1 <= 0 || n2 <= 0 || c1 < 0 || c2 < 0 || c1 > n1 || c2 > n2 {
		return false
	}
	// n·p̂ ≥ 5 ⇔ n·(c1+c2) ≥ 5·(n1+n2); float64 keeps the products exact
	// below 2⁵³ and cannot overflow where int64 would.
	conv, fail, total := float64(c1+c2), float64(n1+n2-c1-c2), 5*float64(n1+n2)
	for _, n := range []float64{float64(n1), float64(n2)} {
		if n*conv < total || n*fail < total {
			return false
		}
	}
	return true
}

// Wilson returns the Wilson score interval for the proportion c/n at normal
// quantile z (use Z95 for 95%), as fractions in [0, 1]:
//
//	p̂      = c/n
//	centre = (p̂ + z²/2n) / (1 + z²/n)
//	half   = z/(1 + z²/n) · √( p̂(1−p̂)/n + z²/4n² )
//	[lower, upper] = centre ∓ half
//
// Wilson is used instead of the textbook Wald interval p̂ ± z√(p̂(1−p̂)/n)
// because conversion rates are often small: Wald then collapses to a width
// of zero at c = 0, dips below 0, and badly undercovers, whereas Wilson stays
// inside [0, 1] and keeps close to its nominal coverage (Newcombe 1998).
//
// ok is false when n ≤ 0, c is outside [0, n], or z is not finite. A
// negative z is treated as |z|. The bounds are clamped to [0, 1] and the
// endpoint at c = 0 (or c = n) is exactly 0 (or 1) so rounding never
// reports an impossible rate such as 1e-19 or 1.0000000000000002.
func Wilson(c, n int64, z float64) (lower, upper float64, ok bool) {
	if n <= 0 || c < 0 || c > n || math.IsNaN(z) || math.IsInf(z, 0) {
		return 0, 0, false
	}
	z = math.Abs(z)
	nf := float64(n)
	ph := float64(c) / nf
	z2 := z * z
	denom := 1 + z2/nf
	centre := (ph + z2/(2*nf)) / denom
	half := z / denom * math.Sqrt(ph*(1-ph)/nf+z2/(4*nf*nf))
	lower = clamp01(centre - half)
	upper = clamp01(centre + half)
	if c == 0 {
		lower = 0
	}
	if c == n {
		upper = 1
	}
	return lower, upper, true
}

// Holm returns Holm–Bonferroni step-down adjusted p-values, in the same
// order as the input. With the m p-values sorted ascending,
// p₍₁₎ ≤ … ≤ p₍ₘ₎,
//
//	p̃₍ᵢ₎ = min(1, max_{j ≤ i} (m − j + 1)·p₍ⱼ₎)
//
// Rejecting every hypothesis whose adjusted p is below α controls the
// family-wise error rate at α, which matters as soon as a campaign has more
// than one treatment: with k treatments each tested at 5%, the chance of at
// least one false "winner" approaches 1 − 0.95ᵏ. Holm is uniformly more
// powerful than plain Bonferroni and needs no independence assumption. The
// running maximum keeps the adjusted values monotone in the raw ones, so a
// smaller raw p never gets a larger adjusted p.
//
// NaN inputs are treated as 1 (no evidence) and values are clamped to
// [0, 1]. The input is not modified. Ties keep input order.
func Holm(p []float64) []float64 {
	m := len(p)
	adj := make([]float64, m)
	if m == 0 {
		return adj
	}
	vals := make([]float64, m)
	idx := make([]int, m)
	for i, v := range p {
		if math.IsNaN(v) {
			v = 1
		}
		vals[i] = clamp01(v)
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] < vals[idx[b]] })
	running := 0.0
	for rank, i := range idx {
		v := math.Min(1, float64(m-rank)*vals[i])
		running = math.Max(running, v)
		adj[i] = running
	}
	return adj
}

// ChiSquareGOF is Pearson's chi-square goodness-of-fit test of observed
// counts Oᵢ against expected shares sᵢ (any non-negative weights; they are
// normalised, so 50/50, 0.5/0.5 and 1/1 are the same):
//
//	N   = Σ Oᵢ,   Eᵢ = N·sᵢ/Σsⱼ
//	X²  = Σ (Oᵢ − Eᵢ)²/Eᵢ      over categories with sᵢ > 0
//	df  = k − 1,               k = number of categories with sᵢ > 0
//	p   = ChiSquareSF(X², df)
//
// A category with zero share cannot enter the sum (Eᵢ = 0). If it has no
// observations it carries no information and is skipped. If it does have
// observations the hypothesised distribution is impossible — certainly
// wrong — so p = 0; stat is then still the sum over the positive-share
// categories, so that it stays finite.
//
// When only one category has a positive share, df = 0 and the model predicts
// everything lands there: p = 1 unless a zero-share category has counts.
//
// ok is false when the slices are empty or of different lengths, a count is
// negative, a share is negative or not finite, all shares are zero, or there
// are no observations at all (N = 0 says nothing about proportions).
func ChiSquareGOF(observed []int64, expectedShares []float64) (stat float64, df int, p float64, ok bool) {
	if len(observed) == 0 || len(observed) != len(expectedShares) {
		return 0, 0, 0, false
	}
	var total int64
	shareSum := 0.0
	for i, o := range observed {
		s := expectedShares[i]
		if o < 0 || s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return 0, 0, 0, false
		}
		total += o
		shareSum += s
	}
	if total <= 0 || shareSum <= 0 || math.IsInf(shareSum, 0) {
		return 0, 0, 0, false
	}
	n := float64(total)
	k := 0
	impossible := false
	for i, o := range observed {
		s := expectedShares[i]
		if s == 0 {
			if o > 0 {
				impossible = true
			}
			continue
		}
		k++
		e := n * s / shareSum
		d := float64(o) - e
		stat += d * d / e
	}
	df = k - 1
	switch {
	case impossible:
		p = 0
	case df == 0:
		// All observations fall in the only allowed category: a perfect fit.
		stat, p = 0, 1
	default:
		p = ChiSquareSF(stat, df)
	}
	return stat, df, p, true
}

// ChiSquareSF returns the survival function P(X > x) of a chi-square
// distribution with df degrees of freedom, i.e. the p-value of a chi-square
// statistic x, from gonum's distuv.ChiSquared:
//
//	P(X > x) = Q(df/2, x/2)
//
// where Q is the regularised upper incomplete gamma function (see gammaQ).
//
// x ≤ 0 gives 1, +Inf gives 0, NaN propagates. df ≤ 0 is treated as the
// degenerate distribution with all its mass at 0, which is what a
// chi-square with no free cells is: 1 for x < 0 and 0 for x ≥ 0.
func ChiSquareSF(x float64, df int) float64 {
	if math.IsNaN(x) {
		return x
	}
	if df <= 0 {
		if x < 0 {
			return 1
		}
		return 0
	}
	if x <= 0 {
		return 1
	}
	return distuv.ChiSquared{K: float64(df)}.Survival(x)
}

// gammaQ is the regularised upper incomplete gamma function
//
//	Q(a, x) = Γ(a, x)/Γ(a) = 1/Γ(a) · ∫ₓ^∞ tᵃ⁻¹ e⁻ᵗ dt,   a > 0, x ≥ 0
//
// from gonum's mathext, which evaluates Q directly in the tail (rather than
// 1 − P) and so keeps full relative precision for tiny p-values. The guards
// pin the edges gonum leaves to its own conventions.
//
// a ≤ 0 or NaN arguments give NaN; x ≤ 0 gives 1 and x = +Inf gives 0.
func gammaQ(a, x float64) float64 {
	switch {
	case math.IsNaN(a) || math.IsNaN(x) || a <= 0:
		return math.NaN()
	case x <= 0:
		return 1
	case math.IsInf(x, 1):
		return 0
	}
	return clamp01(mathext.GammaIncRegComp(a, x))
}

// CohensH returns Cohen's h effect size between two proportions:
//
//	h = 2·asin(√p1) − 2·asin(√p2)
//
// The arcsine transform stabilises the variance of a proportion, so the same
// h means "equally detectable" anywhere on [0, 1] — unlike the raw
// difference, where 1%→2% is a far bigger effect than 50%→51%. Cohen's rough
// guide: |h| ≈ 0.2 small, 0.5 medium, 0.8 large.
//
// The sign is positive when p1 > p2; callers wanting a magnitude take
// math.Abs. Inputs are clamped to [0, 1] so a rate that rounding pushed a hair
// past 1 does not yield NaN; NaN inputs propagate.
func CohensH(p1, p2 float64) float64 {
	return 2*math.Asin(math.Sqrt(clamp01(p1))) - 2*math.Asin(math.Sqrt(clamp01(p2)))
}

// Arm is one variant of a campaign as counted so far.
type Arm struct {
	ID          int64
	Name        string
	Impressions int64
	Conversions int64
	// Allocation is the arm's intended share of traffic, in any unit
	// (fractions, percents or weights); only ratios between arms matter.
	Allocation float64
	Control    bool
}

// ArmResult is the analysis of one arm. Percentages are on a 0–100 scale.
// Pointers are nil where the value is undefined, never NaN.
type ArmResult struct {
	ID          int64
	Name        string
	Impressions int64
	Conversions int64
	// ConversionRate is Conversions/Impressions·100, or 0 with no impressions.
	ConversionRate float64
	// Uplift is the relative change against the control,
	// (rate − controlRate)/controlRate·100. Nil for the control, for an arm
	// without impressions, and when the control's rate is 0 (any change from
	// zero is an infinite relative change).
	Uplift *float64
	// PValue is the raw (unadjusted) two-sided pooled z-test p-value against
	// the control. Nil for the control, when the test is undefined (either
	// arm has no impressions) and when it does not apply (Applicable).
	PValue *float64
	// Applicable reports that ZTestApplicable holds for this treatment and
	// the control. A treatment where it does not takes no part in the Holm
	// adjustment and is never decided, by any engine. False for the control.
	Applicable bool
	// Lower and Upper bound the 95% Wilson interval of the conversion rate.
	// Nil when the arm has no impressions.
	Lower *float64
	Upper *float64
	// Sequential is the always-valid comparison with the control (mSPRT at
	// level Alpha, tuning SequentialTuning). Nil for the control and when
	// undefined.
	Sequential *SequentialResult
	// Bayes is the Bayesian comparison with the control. Nil for the
	// control and when either arm has no impressions.
	Bayes *BayesResult
}

// Result is the analysis of a whole campaign.
type Result struct {
	// Engine is the engine that decided Significant and WinnerID.
	Engine           Engine
	TotalImpressions int64
	TotalConversions int64
	// AverageConversionRate is TotalConversions/TotalImpressions·100 (the
	// pooled rate, so large arms weigh more), or 0 with no impressions.
	AverageConversionRate float64
	// PValue is the smallest Holm-adjusted treatment p-value: the evidence
	// that at least one treatment differs from the control, after paying
	// for having looked at several. It is the always-valid p-value under
	// EngineSequential and the fixed-horizon one otherwise. Nil when no
	// treatment could be tested.
	PValue *float64
	// Significant reports that the engine decided at least one treatment:
	// PValue < Alpha, or for EngineBayesian a chance to beat the control of
	// at least BayesThreshold or at most 1 − BayesThreshold.
	Significant bool
	// ConfidenceLevel is (1 − PValue)·100. Nil with PValue.
	ConfidenceLevel *float64
	// WinnerID is set only when Significant; see AnalyzeWith.
	WinnerID *int64
	// WinnerConfidence is the engine's confidence in the winner, in
	// percent: ConfidenceLevel, or for EngineBayesian the posterior
	// probability that the winner beats the arm it was decided against.
	// Nil without a winner.
	WinnerConfidence *float64
	// Arms are the per-arm results, in input order.
	Arms []ArmResult
	// SRMPValue is the chi-square goodness-of-fit p-value of the observed
	// impressions against the arms' Allocation shares. Nil when there are
	// fewer than two arms, no impressions, or no usable allocation (e.g. all
	// zero, or negative).
	SRMPValue *float64
	// SRMDetected reports SRMPValue < SRMAlpha.
	SRMDetected bool
	// SufficientData reports that every arm has at least MinImpressions
	// impressions and MinConversions conversions.
	SufficientData bool
	// EffectSize is |Cohen's h| between the winner's rate and the best rate
	// among the other arms with impressions. Nil without a winner.
	EffectSize *float64
}

// Engine names the statistics that decide a campaign's significance and
// winner. Every engine's numbers are computed and reported; the engine
// only chooses which of them decides.
type Engine string

// The engines.
const (
	// EngineFrequentist decides by the fixed-horizon pooled z-test,
	// Holm-adjusted (the default).
	EngineFrequentist Engine = "frequentist"
	// EngineSequential decides by the always-valid mSPRT p-values,
	// Holm-adjusted, so looking at the results every day is safe.
	EngineSequential Engine = "sequential"
	// EngineBayesian decides by the posterior probability of beating the
	// control: a treatment is decided when it is at least BayesThreshold,
	// or at most 1 − BayesThreshold.
	EngineBayesian Engine = "bayesian"
)

// Valid reports whether e is one of the engines.
func (e Engine) Valid() bool {
	return e == EngineFrequentist || e == EngineSequential || e == EngineBayesian
}

// Analyze computes a campaign's analytics from per-arm counts, decided by
// the frequentist engine. See AnalyzeWith.
func Analyze(arms []Arm) Result {
	return AnalyzeWith(arms, EngineFrequentist)
}

// AnalyzeWith computes a campaign's analytics from per-arm counts.
//
// The control is the first arm marked Control, or the first arm if none is.
// Every other arm is a treatment and is compared with the control by ZTest,
// by Sequential and by Bayesian; all three are reported per arm.
//
// Only treatments for which ZTestApplicable holds take part in a decision:
// one below it has no PValue, is left out of the Holm adjustment and is
// never decided, whatever the engine (its sequential and Bayesian numbers
// are still reported). With no applicable treatment the campaign has no
// PValue, is not Significant and has no winner.
//
// The engine decides. Under EngineFrequentist and EngineSequential the
// treatments' p-values (fixed-horizon or always-valid) are Holm-adjusted
// together, because the campaign asks "is any variant different?", and
// asking that k times at 5% would find a spurious winner far more often
// than 5% of the time; the campaign is Significant when the smallest
// adjusted p is below Alpha, and PValue and ConfidenceLevel report that p.
// Under EngineBayesian a treatment is decided when its chance to beat the
// control is at least BayesThreshold or at most 1 − BayesThreshold, and the
// campaign is Significant when any treatment is decided; PValue and
// ConfidenceLevel stay the frequentist ones (there is no Bayesian p-value).
//
// The winner, when Significant, is the arm with the highest conversion rate
// among the control and the decided treatments (first in input order on
// ties). The control is a candidate because a treatment can be
// significantly worse, in which case the control is the one to keep;
// undecided treatments are not, because their higher rate may be noise.
// WinnerConfidence is the engine's confidence in it, in percent.
//
// Counts are sanitised before use — negatives become 0 and conversions are
// capped at impressions — and the sanitised values are reported, so the
// output is always internally consistent. It never produces NaN or Inf.
// An unknown engine is treated as EngineFrequentist.
func AnalyzeWith(arms []Arm, engine Engine) Result {
	if !engine.Valid() {
		engine = EngineFrequentist
	}
	res := Result{Engine: engine, Arms: make([]ArmResult, len(arms))}
	if len(arms) == 0 {
		return res
	}

	ctrl := 0
	for i, a := range arms {
		if a.Control {
			ctrl = i
			break
		}
	}

	impr := make([]int64, len(arms))
	conv := make([]int64, len(arms))
	for i, a := range arms {
		impr[i] = max(a.Impressions, 0)
		conv[i] = min(max(a.Conversions, 0), impr[i])
		res.TotalImpressions += impr[i]
		res.TotalConversions += conv[i]
	}
	if res.TotalImpressions > 0 {
		res.AverageConversionRate = float64(res.TotalConversions) / float64(res.TotalImpressions) * 100
	}

	rate := func(i int) float64 {
		if impr[i] == 0 {
			return 0
		}
		return float64(conv[i]) / float64(impr[i])
	}
	ctrlRate := rate(ctrl)

	// Raw p-values of the treatments that could be tested, and which arm
	// each belongs to, so the Holm adjustment covers exactly those.
	var testedP, seqP []float64
	var testedArm, seqArm []int
	res.SufficientData = true
	for i, a := range arms {
		ar := ArmResult{
			ID:             a.ID,
			Name:           a.Name,
			Impressions:    impr[i],
			Conversions:    conv[i],
			ConversionRate: rate(i) * 100,
		}
		if lo, hi, ok := Wilson(conv[i], impr[i], Z95); ok {
			ar.Lower, ar.Upper = ptr(lo*100), ptr(hi*100)
		}
		if i != ctrl {
			if impr[i] > 0 && ctrlRate > 0 {
				ar.Uplift = ptr((rate(i) - ctrlRate) / ctrlRate * 100)
			}
			ar.Applicable = ZTestApplicable(conv[i], impr[i], conv[ctrl], impr[ctrl])
			if _, p, ok := ZTest(conv[i], impr[i], conv[ctrl], impr[ctrl]); ok && ar.Applicable {
				ar.PValue = ptr(p)
				testedP = append(testedP, p)
				testedArm = append(testedArm, i)
			}
			// The always-valid test rests on the same normal approximation,
			// so below the rule its p-value is shown but decides nothing.
			if sr, ok := Sequential(conv[i], impr[i], conv[ctrl], impr[ctrl], Alpha, SequentialTuning); ok {
				ar.Sequential = &sr
				if ar.Applicable {
					seqP = append(seqP, sr.PValue)
					seqArm = append(seqArm, i)
				}
			}
			if br, ok := Bayesian(conv[i], impr[i], conv[ctrl], impr[ctrl]); ok {
				ar.Bayes = &br
			}
		}
		if impr[i] < MinImpressions || conv[i] < MinConversions {
			res.SufficientData = false
		}
		res.Arms[i] = ar
	}

	// decided lists the treatments the engine calls different from the
	// control; confidence is the engine's confidence in each, in percent.
	var decided []int
	confidence := map[int]float64{}
	switch engine {
	case EngineFrequentist, EngineSequential:
		ps, idx := testedP, testedArm
		if engine == EngineSequential {
			ps, idx = seqP, seqArm
		}
		if len(ps) > 0 {
			adj := Holm(ps)
			best := slices.Min(adj)
			res.PValue = ptr(best)
			res.ConfidenceLevel = ptr((1 - best) * 100)
			for j, i := range idx {
				if adj[j] < Alpha {
					decided = append(decided, i)
				}
			}
		}
	case EngineBayesian:
		if len(testedP) > 0 {
			best := slices.Min(Holm(testedP))
			res.PValue = ptr(best)
			res.ConfidenceLevel = ptr((1 - best) * 100)
		}
		for i, a := range res.Arms {
			if a.Bayes == nil || !a.Applicable {
				continue
			}
			switch c := a.Bayes.ChanceToBeatControl; {
			case c >= BayesThreshold:
				decided = append(decided, i)
				confidence[i] = c * 100
			case c <= 1-BayesThreshold:
				decided = append(decided, i)
				// The control beats this arm with probability 1 − c; when
				// it beats several, the weakest of those claims stands.
				if v, seen := confidence[ctrl]; !seen || (1-c)*100 < v {
					confidence[ctrl] = (1 - c) * 100
				}
			}
		}
	}
	res.Significant = len(decided) > 0

	if res.Significant {
		winner := ctrl
		for _, i := range decided {
			if rate(i) > rate(winner) || (rate(i) == rate(winner) && i < winner) {
				winner = i
			}
		}
		res.WinnerID = ptr(arms[winner].ID)
		if engine == EngineBayesian {
			res.WinnerConfidence = ptr(confidence[winner])
		} else {
			res.WinnerConfidence = res.ConfidenceLevel
		}

		other, found := 0.0, false
		for i := range arms {
			if i != winner && impr[i] > 0 && (!found || rate(i) > other) {
				other, found = rate(i), true
			}
		}
		if found {
			res.EffectSize = ptr(math.Abs(CohensH(rate(winner), other)))
		}
	}

	if len(arms) >= 2 && res.TotalImpressions > 0 {
		shares := make([]float64, len(arms))
		for i, a := range arms {
			shares[i] = a.Allocation
		}
		if _, _, p, ok := ChiSquareGOF(impr, shares); ok {
			res.SRMPValue = ptr(p)
			res.SRMDetected = p < SRMAlpha
		}
	}
	return res
}

// Interpretation returns one plain-English sentence for a marketer, e.g.
//
//	"Variant B" converted at 12.3% versus 10.1% for the next best variant; we are 99.2% confident the difference is real.
//
// Rates and the confidence level are percentages (0–100). Rates get one
// decimal, or more (up to four) when one decimal would print two different
// rates the same, or a non-zero rate as 0.0%, since "10.1% versus 10.1%"
// reads as a contradiction. Confidence gets one decimal but is never rounded up to
// 100%, which would claim certainty that no test gives; above 99.9% it
// reads "more than 99.9%". Non-finite inputs are treated as 0.
func Interpretation(winnerName string, winnerRate, otherRate, confidenceLevel float64) string {
	winnerRate, otherRate = finiteOr0(winnerRate), finiteOr0(otherRate)
	confidenceLevel = math.Min(math.Max(finiteOr0(confidenceLevel), 0), 100)

	decimals := 1
	for ; decimals < 4; decimals++ {
		w := fmt.Sprintf("%.*f", decimals, winnerRate)
		o := fmt.Sprintf("%.*f", decimals, otherRate)
		indistinct := w == o && winnerRate != otherRate
		if !indistinct && !roundsToZero(winnerRate, decimals) && !roundsToZero(otherRate, decimals) {
			break
		}
	}

	conf := fmt.Sprintf("%.1f%%", confidenceLevel)
	if confidenceLevel >= 99.95 {
		conf = "more than 99.9%"
	}
	return fmt.Sprintf("\"%s\" converted at %.*f%% versus %.*f%% for the next best variant; we are %s confident the difference is real.",
		winnerName, decimals, winnerRate, decimals, otherRate, conf)
}

// roundsToZero reports whether a non-zero v would print as zero.
func roundsToZero(v float64, decimals int) bool {
	return v != 0 && math.Abs(v) < 0.5*math.Pow(10, -float64(decimals))
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func clamp01(v float64) float64 {
	return math.Min(math.Max(v, 0), 1)
}

func ptr[T any](v T) *T { return &v }
