package store

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"service/stats"
)

// TestWinnerDeclaredByEngine completes the same campaign (500 of 5,000
// against 580 of 5,000) under each engine: the engine decides whether a
// winner is declared and with what confidence.
func TestWinnerDeclaredByEngine(t *testing.T) {
	ctx := context.Background()
	_, pFixed, _ := stats.ZTest(580, 5000, 500, 5000)
	bay, _ := stats.Bayesian(580, 5000, 500, 5000)
	for _, tc := range []struct {
		engine     string
		winner     bool
		confidence float64
	}{
		{"frequentist", true, (1 - pFixed) * 100},
		{"sequential", false, 0},
		{"bayesian", true, bay.ChanceToBeatControl * 100},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			e := newCampaignTestEnv(t)
			id := e.create(nil, campaignTestAt(time.Hour), "draft")
			c, err := e.db.UpdateCampaign(ctx, e.app, id, CampaignInput{StatsEngine: &tc.engine})
			if err != nil || c.StatsEngine != tc.engine {
				t.Fatalf("UpdateCampaign: %+v, %v", c, err)
			}
			if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignActive); err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.write.Exec(`UPDATE campaign_variants SET impressions = 5000, conversions = CASE WHEN is_control THEN 500 ELSE 580 END WHERE campaign_id = ?`, id); err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignCompleted); err != nil {
				t.Fatal(err)
			}
			ds := e.deliveries()[1:] // after campaign.started
			if !tc.winner {
				if len(ds) != 1 || !strings.Contains(ds[0].payload, `"statisticalSignificance":false,"winningVariant":null`) {
					t.Fatalf("deliveries %+v, want campaign.completed without a winner only", ds)
				}
				return
			}
			if len(ds) != 2 || ds[1].event != EventWinnerDeclared {
				t.Fatalf("deliveries %+v, want completed then winner_declared", ds)
			}
			var w struct {
				Winner          string  `json:"winner"`
				PValue          float64 `json:"pValue"`
				ConfidenceLevel float64 `json:"confidenceLevel"`
			}
			if err := json.Unmarshal([]byte(ds[1].payload), &w); err != nil {
				t.Fatal(err)
			}
			if w.Winner != "Variant B" || math.Abs(w.ConfidenceLevel-tc.confidence) > 1e-9 || math.Abs(w.PValue-pFixed) > 1e-12 {
				t.Fatalf("winner payload %s, want confidenceLevel %v, pValue %v", ds[1].payload, tc.confidence, pFixed)
			}
		})
	}
}

// TestNoWinnerBelowTheTestRule completes a campaign at 1 impression
// against 3 (0 conversions against 3) under each engine. The z-test's raw
// p is 0.046 there, but the pair is far below n·p̂ ≥ 5, so no engine may
// call it: campaign.completed says there is no winner and
// campaign.winner_declared is not sent.
func TestNoWinnerBelowTheTestRule(t *testing.T) {
	ctx := context.Background()
	for _, engine := range []string{"frequentist", "sequential", "bayesian"} {
		t.Run(engine, func(t *testing.T) {
			e := newCampaignTestEnv(t)
			id := e.create(nil, campaignTestAt(time.Hour), "draft")
			if _, err := e.db.UpdateCampaign(ctx, e.app, id, CampaignInput{StatsEngine: &engine}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignActive); err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.write.Exec(`UPDATE campaign_variants SET impressions = CASE WHEN is_control THEN 1 ELSE 3 END, conversions = CASE WHEN is_control THEN 0 ELSE 3 END WHERE campaign_id = ?`, id); err != nil {
				t.Fatal(err)
			}
			a, err := e.db.CampaignAnalytics(ctx, e.app, id)
			if err != nil {
				t.Fatal(err)
			}
			if a.PValue != nil || a.ConfidenceLevel != nil || a.StatisticalSignificance || a.WinningVariantID != nil || a.WinningVariant != nil || a.Variants[1].PValue != nil {
				t.Fatalf("analytics pValue=%v significant=%v winner=%v variant pValue=%v, want all null/false", a.PValue, a.StatisticalSignificance, a.WinningVariantID, a.Variants[1].PValue)
			}
			if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignCompleted); err != nil {
				t.Fatal(err)
			}
			ds := e.deliveries()[1:] // after campaign.started
			if len(ds) != 1 || ds[0].event != EventCampaignCompleted || !strings.Contains(ds[0].payload, `"statisticalSignificance":false,"winningVariant":null`) {
				t.Fatalf("deliveries %+v, want campaign.completed without a winner only", ds)
			}
		})
	}
}
