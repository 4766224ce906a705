package stats

import "testing"

// TestAnalyzeWithEngines: the same counts, decided by each engine. The
// numbers in the comments are the ones each engine reports for them.
func TestAnalyzeWithEngines(t *testing.T) {
	arms := func(cB int64) []Arm {
		return []Arm{
			{ID: 1, Name: "A", Impressions: 5000, Conversions: 500, Allocation: 1, Control: true},
			{ID: 2, Name: "B", Impressions: 5000, Conversions: cB, Allocation: 1},
		}
	}
	const none = int64(0)
	tests := []struct {
		name   string
		cB     int64
		engine Engine
		winner int64 // 0: not significant
	}{
		// 580 against 500: z-test p = 0.00995, always-valid p = 0.180,
		// chance to beat control 0.99502.
		{"580 frequentist", 580, EngineFrequentist, 2},
		{"580 sequential", 580, EngineSequential, none},
		{"580 bayesian", 580, EngineBayesian, 2},
		// 560: p = 0.0513, always-valid 0.687, chance 0.97433.
		{"560 frequentist", 560, EngineFrequentist, none},
		{"560 sequential", 560, EngineSequential, none},
		{"560 bayesian", 560, EngineBayesian, 2},
		// 600: p = 0.00139, always-valid 0.0335, chance 0.99930.
		{"600 sequential", 600, EngineSequential, 2},
		// 440: worse; p = 0.0398, always-valid 0.562, chance 0.01992. The
		// control wins where the engine decides.
		{"440 frequentist", 440, EngineFrequentist, 1},
		{"440 sequential", 440, EngineSequential, none},
		{"440 bayesian", 440, EngineBayesian, 1},
		// 530: nobody decides (chance 0.838).
		{"530 bayesian", 530, EngineBayesian, none},
		{"unknown engine is frequentist", 580, Engine("magic"), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := AnalyzeWith(arms(tt.cB), tt.engine)
			if got, want := r.Significant, tt.winner != none; got != want {
				t.Fatalf("Significant = %v, want %v", got, want)
			}
			if tt.winner == none {
				wantNil(t, "WinnerID", r.WinnerID)
				wantNil(t, "WinnerConfidence", r.WinnerConfidence)
			} else if r.WinnerID == nil || *r.WinnerID != tt.winner {
				t.Fatalf("WinnerID = %v, want %d", r.WinnerID, tt.winner)
			}
			if r.Arms[0].Sequential != nil || r.Arms[0].Bayes != nil {
				t.Errorf("control has sequential/bayesian results")
			}
			if r.Arms[1].Sequential == nil || r.Arms[1].Bayes == nil {
				t.Fatalf("treatment lacks sequential/bayesian results")
			}
			switch tt.engine {
			case EngineSequential:
				wantFloat(t, "PValue", r.PValue, r.Arms[1].Sequential.PValue, 0)
			case EngineBayesian:
				// The p-value stays the frequentist one.
				wantFloat(t, "PValue", r.PValue, *r.Arms[1].PValue, 0)
				if tt.winner == 2 {
					wantFloat(t, "WinnerConfidence", r.WinnerConfidence, r.Arms[1].Bayes.ChanceToBeatControl*100, 1e-12)
				}
				if tt.winner == 1 {
					wantFloat(t, "WinnerConfidence", r.WinnerConfidence, (1-r.Arms[1].Bayes.ChanceToBeatControl)*100, 1e-12)
				}
			default:
				wantFloat(t, "PValue", r.PValue, *r.Arms[1].PValue, 0)
				if tt.winner != none {
					wantFloat(t, "WinnerConfidence", r.WinnerConfidence, *r.ConfidenceLevel, 0)
				}
			}
		})
	}
}

// TestAnalyzeIsFrequentist: Analyze is AnalyzeWith the default engine.
func TestAnalyzeIsFrequentist(t *testing.T) {
	arms := []Arm{
		{ID: 1, Impressions: 5000, Conversions: 500, Control: true},
		{ID: 2, Impressions: 5000, Conversions: 580},
	}
	if got, want := Analyze(arms).Engine, EngineFrequentist; got != want {
		t.Fatalf("Engine = %q, want %q", got, want)
	}
}
