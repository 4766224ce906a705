package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"service/stats"
)

// Analytics is the full statistical report of a campaign.
type Analytics struct {
	CampaignID              int64             `json:"campaignId"`
	Status                  string            `json:"status"`
	TotalImpressions        int64             `json:"totalImpressions"`
	TotalConversions        int64             `json:"totalConversions"`
	AverageConversionRate   float64           `json:"averageConversionRate"`
	StatisticalSignificance bool              `json:"statisticalSignificance"`
	PValue                  *float64          `json:"pValue"`
	ConfidenceLevel         *float64          `json:"confidenceLevel"`
	WinningVariantID        *int64            `json:"winningVariantId"`
	WinningVariant          *VariantStats     `json:"winningVariant"`
	Variants                []VariantStats    `json:"variants"`
	SampleRatioMismatch     SampleRatioResult `json:"sampleRatioMismatch"`
	SufficientData          bool              `json:"sufficientData"`
	// StatsEngine is the campaign's engine, the one that decided
	// statisticalSignificance and winningVariantId.
	StatsEngine string `json:"statsEngine"`
	// Cuped is the variance-reduced comparison, beside the engine's and
	// never deciding the winner; nil when CUPED is off or a variant has
	// fewer than 2 users.
	Cuped *CupedSummary `json:"cuped"`
	// Metrics are the campaign's secondary metrics and guardrails, each
	// in its own units; empty when it has none.
	Metrics []MetricResult `json:"metrics"`
}

// CupedSummary is the campaign-wide part of the CUPED analysis.
type CupedSummary struct {
	LookbackDays int     `json:"lookbackDays"`
	Theta        float64 `json:"theta"`
	// VarianceReduction is the share (0 to 1) of the outcome's variance
	// that the covariate removed.
	VarianceReduction float64 `json:"varianceReduction"`
}

// VariantCuped is a variant's CUPED numbers: the adjusted conversion rate
// and uplift in percent, the difference from the control and its 95%
// interval in percentage points. The comparison is nil for the control.
type VariantCuped struct {
	AdjustedConversionRate float64    `json:"adjustedConversionRate"`
	Difference             *float64   `json:"difference,omitempty"`
	DifferenceInterval     *[]float64 `json:"differenceInterval,omitempty"`
	Uplift                 *float64   `json:"uplift,omitempty"`
	PValue                 *float64   `json:"pValue,omitempty"`
	control                bool
}

// MarshalJSON writes a treatment's uplift as null when it is undefined,
// and leaves the comparison out for the control.
func (v VariantCuped) MarshalJSON() ([]byte, error) {
	if v.control {
		return json.Marshal(struct {
			AdjustedConversionRate float64 `json:"adjustedConversionRate"`
		}{v.AdjustedConversionRate})
	}
	return json.Marshal(struct {
		AdjustedConversionRate float64    `json:"adjustedConversionRate"`
		Difference             *float64   `json:"difference"`
		DifferenceInterval     *[]float64 `json:"differenceInterval"`
		Uplift                 *float64   `json:"uplift"`
		PValue                 *float64   `json:"pValue"`
	}{v.AdjustedConversionRate, v.Difference, v.DifferenceInterval, v.Uplift, v.PValue})
}

// VariantStats are one variant's numbers.
type VariantStats struct {
	VariantID          int64     `json:"variantId"`
	VariantName        string    `json:"variantName"`
	IsControl          bool      `json:"isControl"`
	TrafficAllocation  float64   `json:"trafficAllocation"`
	Impressions        int64     `json:"impressions"`
	Conversions        int64     `json:"conversions"`
	ConversionRate     float64   `json:"conversionRate"`
	Uplift             *float64  `json:"uplift"`
	PValue             *float64  `json:"pValue"`
	ConfidenceInterval *Interval `json:"confidenceInterval"`
	LowerBound         *float64  `json:"lowerBound"`
	UpperBound         *float64  `json:"upperBound"`
	// Sequential and Bayesian compare a treatment with the control; both
	// are null for the control and when either arm has no impressions.
	Sequential *SequentialStats `json:"sequential"`
	Bayesian   *BayesianStats   `json:"bayesian"`
	// Cuped is nil when the campaign's cuped is.
	Cuped *VariantCuped `json:"cuped"`
}

// SequentialStats is the always-valid (mSPRT) comparison with the control.
// Differences are in percentage points, uplifts in percent.
type SequentialStats struct {
	PValue                   float64   `json:"pValue"`
	Difference               float64   `json:"difference"`
	ConfidenceSequence       Interval  `json:"confidenceSequence"`
	Uplift                   *float64  `json:"uplift"`
	UpliftConfidenceSequence *Interval `json:"upliftConfidenceSequence"`
}

// BayesianStats is the Beta-posterior comparison with the control.
// chanceToBeatControl is a probability (0 to 1); losses are in percentage
// points of conversion rate; the credible interval is of the uplift, in
// percent.
type BayesianStats struct {
	ChanceToBeatControl float64  `json:"chanceToBeatControl"`
	ExpectedLoss        float64  `json:"expectedLoss"`
	ControlExpectedLoss float64  `json:"controlExpectedLoss"`
	CredibleInterval    Interval `json:"credibleInterval"`
}

// Interval is a confidence interval in percent.
type Interval struct {
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
}

// SampleRatioResult is the chi-square check of impressions against the
// allocation.
type SampleRatioResult struct {
	PValue   *float64 `json:"pValue"`
	Detected bool     `json:"detected"`
}

// CampaignAnalytics computes the report from the per-variant counters: a
// handful of rows, whatever the size of the campaign.
func (db *DB) CampaignAnalytics(ctx context.Context, appID, id int64) (*Analytics, error) {
	// The metrics' sums count every acknowledged event.
	if err := db.ApplyMetricMoves(ctx); err != nil {
		return nil, err
	}
	var status, engine string
	var lookback int
	err := db.read.QueryRowContext(ctx, `SELECT status, stats_engine, cuped_lookback_days FROM campaigns WHERE id = ? AND app_id = ?`, id, appID).Scan(&status, &engine, &lookback)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("campaign")
	} else if err != nil {
		return nil, err
	}
	vs, err := findVariants(db.reader(ctx), id)
	if err != nil {
		return nil, err
	}
	r := analyze(vs, engine)
	a := &Analytics{
		CampaignID: id, Status: status,
		TotalImpressions: r.TotalImpressions, TotalConversions: r.TotalConversions,
		AverageConversionRate:   r.AverageConversionRate,
		StatisticalSignificance: r.Significant,
		PValue:                  r.PValue,
		ConfidenceLevel:         r.ConfidenceLevel,
		WinningVariantID:        r.WinnerID,
		Variants:                make([]VariantStats, len(r.Arms)),
		SampleRatioMismatch:     SampleRatioResult{PValue: r.SRMPValue, Detected: r.SRMDetected},
		SufficientData:          r.SufficientData,
		StatsEngine:             string(r.Engine),
	}
	for i, arm := range r.Arms {
		v := VariantStats{
			VariantID: arm.ID, VariantName: arm.Name, IsControl: vs[i].IsControl, TrafficAllocation: vs[i].TrafficAllocation,
			Impressions: arm.Impressions, Conversions: arm.Conversions, ConversionRate: arm.ConversionRate,
			Uplift: arm.Uplift, PValue: arm.PValue, LowerBound: arm.Lower, UpperBound: arm.Upper,
		}
		if arm.Lower != nil && arm.Upper != nil {
			v.ConfidenceInterval = &Interval{*arm.Lower, *arm.Upper}
		}
		if s := arm.Sequential; s != nil {
			v.Sequential = &SequentialStats{
				PValue:             s.PValue,
				Difference:         s.Difference * 100,
				ConfidenceSequence: Interval{s.DiffLower * 100, s.DiffUpper * 100},
			}
			if s.Uplift != nil {
				v.Sequential.Uplift = ptrTo(*s.Uplift * 100)
				v.Sequential.UpliftConfidenceSequence = &Interval{*s.UpliftLower * 100, *s.UpliftUpper * 100}
			}
		}
		if b := arm.Bayes; b != nil {
			v.Bayesian = &BayesianStats{
				ChanceToBeatControl: b.ChanceToBeatControl,
				ExpectedLoss:        b.ExpectedLoss * 100,
				ControlExpectedLoss: b.ControlExpectedLoss * 100,
				CredibleInterval:    Interval{b.UpliftLower * 100, b.UpliftUpper * 100},
			}
		}
		a.Variants[i] = v
		if r.WinnerID != nil && *r.WinnerID == arm.ID {
			w := v
			a.WinningVariant = &w
		}
	}
	addCuped(a, vs, lookback)
	if a.Metrics, err = campaignMetricResults(db.reader(ctx), id, vs); err != nil {
		return nil, err
	}
	return a, nil
}

// addCuped adds the CUPED analysis to a, from the variants' sums.
func addCuped(a *Analytics, vs []*Variant, lookback int) {
	if lookback == 0 {
		return
	}
	arms := make([]stats.CupedArm, len(vs))
	for i, v := range vs {
		arms[i] = stats.CupedArm{N: v.Impressions, SumX: v.sumX, SumXX: v.sumXX, SumY: v.Conversions, SumXY: v.sumXY, Control: v.IsControl}
	}
	r, ok := stats.Cuped(arms)
	if !ok {
		return
	}
	a.Cuped = &CupedSummary{LookbackDays: lookback, Theta: r.Theta, VarianceReduction: r.VarianceReduction}
	for i, arm := range r.Arms {
		c := &VariantCuped{AdjustedConversionRate: arm.AdjustedRate * 100, control: arm.Difference == nil}
		if !c.control {
			c.Difference = ptrTo(*arm.Difference * 100)
			c.DifferenceInterval = &[]float64{*arm.Lower * 100, *arm.Upper * 100}
			c.PValue = arm.PValue
			if arm.Uplift != nil {
				c.Uplift = ptrTo(*arm.Uplift * 100)
			}
		}
		a.Variants[i].Cuped = c
		if a.WinningVariant != nil && a.WinningVariant.VariantID == a.Variants[i].VariantID {
			a.WinningVariant.Cuped = c
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
