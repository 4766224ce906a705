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
	var status string
	err := db.read.QueryRowContext(ctx, `SELECT status FROM campaigns WHERE id = ? AND app_id = ?`, id, appID).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("campaign")
	} else if err != nil {
		return nil, err
	}
	vs, err := findVariants(db.reader(ctx), id)
	if err != nil {
		return nil, err
	}
	r := analyze(vs)
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
		a.Variants[i] = v
		if r.WinnerID != nil && *r.WinnerID == arm.ID {
			w := v
			a.WinningVariant = &w
		}
	}
	return a, nil
}
