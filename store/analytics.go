package store

import (
	"context"
	"database/sql"
	"errors"
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
	var status, engine string
	err := db.read.QueryRowContext(ctx, `SELECT status, stats_engine FROM campaigns WHERE id = ? AND app_id = ?`, id, appID).Scan(&status, &engine)
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
	return a, nil
}

func ptrTo[T any](v T) *T { return &v }
