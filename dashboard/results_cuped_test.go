package dashboard_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The results page's CUPED line shows only when the covariate took
// something out (θ ≠ 0): without any user's history, or with history that
// says nothing of conversions, it would only say "removed 0%". Its
// difference interval stays within ±100 points.
func TestResultsCupedLineShownOnlyWhenItHelps(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c := e.campaign(app.ID, "Cuped", "buy")
	e.start(app.ID, c.ID)
	page := fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c.ID)
	raw := e.sql()
	// sums are a variant's users n, conversions ΣY and covariate sums ΣX,
	// ΣX², ΣXY, written as users would have left them.
	type sums struct{ n, y, x, xx, xy int64 }
	set := func(arms ...sums) {
		t.Helper()
		for i, s := range arms {
			if _, err := raw.Exec(fmt.Sprintf(`UPDATE campaign_variants SET impressions = %d, conversions = %d, cuped_sum_x = %d, cuped_sum_xx = %d, cuped_sum_xy = %d WHERE id = %d`,
				s.n, s.y, s.x, s.xx, s.xy, c.Variants[i].ID)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tt := range []struct {
		name string
		arms []sums
	}{
		{"NoUserHasACovariate", []sums{{n: 10, y: 2}, {n: 10, y: 4}}},
		// Half the users of each variant bought before, half convert, and
		// the two are unrelated: n·ΣXY − ΣX·ΣY = 8·2 − 4·4 = 0, so θ = 0.
		{"ThetaZero", []sums{{n: 4, y: 2, x: 2, xx: 2, xy: 1}, {n: 4, y: 2, x: 2, xx: 2, xy: 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set(tt.arms...)
			a, err := e.db.CampaignAnalytics(e.ctx, app.ID, c.ID)
			if err != nil || a.Cuped == nil || a.Cuped.Theta != 0 {
				t.Fatalf("analytics cuped %+v, %v: want the API's line, with θ = 0", a.Cuped, err)
			}
			p := b.get(page)
			wantStatus(t, p, http.StatusOK)
			if strings.Contains(p.body, `id="cuped"`) || strings.Contains(p.body, "CUPED removed") || strings.Contains(p.body, "cuped") {
				t.Fatalf("the page shows a CUPED line that removed nothing:\n%s", p.body)
			}
		})
	}

	// Two users a side: the control's one buyer had bought before, both
	// treated users buy. θ = 1/3 and the interval, 0.667 ± 1.96·0.333,
	// would reach 132 points; it stops at 100.
	t.Run("IntervalClamped", func(t *testing.T) {
		set(sums{n: 2, y: 1, x: 1, xx: 1, xy: 1}, sums{n: 2, y: 2})
		a, err := e.db.CampaignAnalytics(e.ctx, app.ID, c.ID)
		if err != nil || a.Cuped == nil || a.Variants[1].Cuped == nil || a.Variants[1].Cuped.DifferenceInterval == nil {
			t.Fatalf("analytics %+v, %v", a, err)
		}
		if iv := *a.Variants[1].Cuped.DifferenceInterval; iv[1] != 100 || iv[0] <= -100 {
			t.Fatalf("API differenceInterval %v, want the upper end at 100", iv)
		}
		p := b.get(page)
		wantContains(t, p, `id="cuped"`, "CUPED removed", `to &#43;100.00)`)
		m := regexp.MustCompile(`data-k="cupedInterval" data-value="([^"]*)"`).FindStringSubmatch(p.body)
		if m == nil || !strings.HasSuffix(m[1], ",100") {
			t.Fatalf("cupedInterval %v, want it to end at 100:\n%s", m, p.body)
		}
	})
}
