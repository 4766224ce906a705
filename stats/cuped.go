package stats

import (
	"math"
	"math/big"
)

// CUPED (Deng, Xu, Kohavi and Walker, 2013) removes from each user's
// outcome Y the part its pre-experiment covariate X predicts:
//
//	θ  = Σ(Xᵢ−X̄)(Yᵢ−Ȳ) / Σ(Xᵢ−X̄)²     over all users of all arms (0 when
//	                                      the denominator is 0)
//	Zᵢ = Yᵢ − θXᵢ
//	adjᵥ = Ȳᵥ − θ(X̄ᵥ − X̄)               an arm's adjusted rate
//	sᵥ² = Σ_{i∈v}(Zᵢ − Z̄ᵥ)² / (nᵥ − 1)
//
// and a treatment t is compared with the control c by d = adjₜ − adj_c,
// se = √(sₜ²/nₜ + s_c²/n_c), a two-sided normal p-value and d ± Z95·se.
// Because θ is one number for every arm and X is measured before
// assignment, adjᵥ estimates the same difference as the raw rates, with
// the variance X explains taken out.
//
// Everything is computed from per-arm sums (n, ΣX, ΣX², ΣY, ΣXY) that a
// store keeps as users are assigned and convert. The centred sums are
// formed exactly in integers (n·Σ(X−X̄)² = nΣX² − (ΣX)², and so on), so
// no precision is lost to cancellation however large the sums grow.

// CupedArm is one arm's CUPED sums. Y is 0 or 1, so ΣY² = ΣY.
type CupedArm struct {
	N, SumX, SumXX, SumY, SumXY int64
	Control                     bool
}

// CupedArmResult is one arm's adjusted numbers; rates and differences are
// proportions. The comparison fields are nil for the control.
type CupedArmResult struct {
	AdjustedRate float64
	Difference   *float64
	Lower, Upper *float64
	// Uplift is Difference / the control's adjusted rate; nil when that
	// rate is 0.
	Uplift *float64
	PValue *float64
}

// CupedResult is the CUPED analysis of a campaign.
type CupedResult struct {
	Theta float64
	// VarianceReduction is 1 − Σ(Zᵢ−Z̄)²/Σ(Yᵢ−Ȳ)², the share of the
	// outcome's variance that X removed (0 when Y does not vary).
	VarianceReduction float64
	Arms              []CupedArmResult
}

// centred returns n·Σ(a−ā)(b−b̄) = n·Σab − Σa·Σb, exactly.
func centred(n, sumA, sumB, sumAB int64) *big.Int {
	r := new(big.Int).Mul(big.NewInt(n), big.NewInt(sumAB))
	return r.Sub(r, new(big.Int).Mul(big.NewInt(sumA), big.NewInt(sumB)))
}

// ratio returns a/b as a float64, rounded once.
func ratio(a, b *big.Int) float64 {
	f, _ := new(big.Rat).SetFrac(a, b).Float64()
	return f
}

func bigFloat(a *big.Int) float64 {
	f, _ := new(big.Float).SetInt(a).Float64()
	return f
}

// Cuped analyses arms, exactly one of them the control. ok is false when
// CUPED is undefined: an arm has fewer than 2 users (its variance needs
// two), or there is not exactly one control.
func Cuped(arms []CupedArm) (r CupedResult, ok bool) {
	control := -1
	var n, sx, sxx, sy, sxy int64
	for i, a := range arms {
		if a.N < 2 {
			return r, false
		}
		if a.Control {
			if control >= 0 {
				return r, false
			}
			control = i
		}
		n, sx, sxx, sy, sxy = n+a.N, sx+a.SumX, sxx+a.SumXX, sy+a.SumY, sxy+a.SumXY
	}
	if control < 0 {
		return r, false
	}
	cxx := centred(n, sx, sx, sxx)
	cxy := centred(n, sx, sy, sxy)
	cyy := centred(n, sy, sy, sy)
	if cxx.Sign() != 0 {
		r.Theta = ratio(cxy, cxx)
	}
	// With θ = Sxy/Sxx, Σ(Z−Z̄)² = Syy − Sxy²/Sxx, so the reduction is
	// Sxy²/(Sxx·Syy): the squared correlation of X and Y.
	if cxx.Sign() != 0 && cyy.Sign() != 0 {
		num := new(big.Int).Mul(cxy, cxy)
		r.VarianceReduction = ratio(num, new(big.Int).Mul(cxx, cyy))
	}
	xbar := float64(sx) / float64(n)
	r.Arms = make([]CupedArmResult, len(arms))
	s2 := make([]float64, len(arms))
	for i, a := range arms {
		nv := float64(a.N)
		r.Arms[i].AdjustedRate = float64(a.SumY)/nv - r.Theta*(float64(a.SumX)/nv-xbar)
		// n·Σ(Z−Z̄)² = n·Syy − 2θ·n·Sxy + θ²·n·Sxx within the arm.
		zz := (bigFloat(centred(a.N, a.SumY, a.SumY, a.SumY)) - 2*r.Theta*bigFloat(centred(a.N, a.SumX, a.SumY, a.SumXY)) +
			r.Theta*r.Theta*bigFloat(centred(a.N, a.SumX, a.SumX, a.SumXX))) / nv
		s2[i] = max(zz, 0) / (nv - 1)
	}
	c := r.Arms[control]
	for i := range arms {
		if i == control {
			continue
		}
		d := r.Arms[i].AdjustedRate - c.AdjustedRate
		se := math.Sqrt(s2[i]/float64(arms[i].N) + s2[control]/float64(arms[control].N))
		p := 1.0
		if se > 0 {
			p = TwoSidedP(d / se)
		} else if d != 0 {
			p = 0 // no variance left, and a difference: certain
		}
		a := &r.Arms[i]
		a.Difference, a.PValue = ptr(d), ptr(p)
		// A difference of two rates lies within ±1; the normal interval of
		// a few users reaches past that, and is cut there, as the
		// sequential one is.
		a.Lower, a.Upper = ptr(max(d-Z95*se, -1)), ptr(min(d+Z95*se, 1))
		if c.AdjustedRate != 0 {
			a.Uplift = ptr(d / c.AdjustedRate)
		}
	}
	return r, true
}
