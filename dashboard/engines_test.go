package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"service/store"
)

// withEngine sets a draft campaign's statistics engine.
func (e *env) withEngine(appID int64, c *store.Campaign, engine string) {
	e.t.Helper()
	if _, err := e.db.UpdateCampaign(e.ctx, appID, c.ID, store.CampaignInput{StatsEngine: &engine}); err != nil {
		e.t.Fatal(err)
	}
}

func TestCampaignEditorStatsEngine(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c1 := e.published(app.ID, "one", `[{"type":"text","content":"one"}]`)
	c2 := e.published(app.ID, "two", `[{"type":"text","content":"two"}]`)
	base := fmt.Sprintf("/apps/%d/campaigns", app.ID)
	// The new form offers the three engines, frequentist chosen, each
	// with what it means.
	p := b.get(base + "/new")
	wantContains(t, p, `<select name="statsEngine"><option value="frequentist" selected>`, `<option value="sequential">`,
		`<option value="bayesian">`, "Safe to check daily", "95% chance to beat the control", "Decide once, at the planned end")

	t.Run("UnknownEngineRefusedBesideTheField", func(t *testing.T) {
		f := campaignFormOf(c1.ID, c2.ID)
		f.Set("statsEngine", "<b>magic</b>")
		p := b.post(base, f)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "statsEngine", "must be frequentist, sequential or bayesian") {
			t.Fatalf("no refusal beside statsEngine:\n%s", p.body)
		}
		if strings.Contains(p.body, "<b>magic") {
			t.Fatal("posted engine shown unescaped")
		}
	})

	f := campaignFormOf(c1.ID, c2.ID)
	f.Set("statsEngine", "sequential")
	wantStatus(t, b.post(base, f), http.StatusSeeOther)
	list, _, _ := e.db.FindCampaigns(e.ctx, app.ID, "", store.ListOptions{Limit: 10, Page: 1})
	if len(list) != 1 || list[0].StatsEngine != "sequential" {
		t.Fatalf("campaigns=%+v", list)
	}
	c := list[0]
	page := fmt.Sprintf("%s/%d", base, c.ID)
	wantContains(t, b.get(page), `<option value="sequential" selected>`)

	t.Run("DraftChangesIt", func(t *testing.T) {
		f.Set("statsEngine", "bayesian")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		if got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID); got.StatsEngine != "bayesian" {
			t.Fatalf("engine=%s", got.StatsEngine)
		}
	})

	t.Run("LockedOnceStarted", func(t *testing.T) {
		wantStatus(t, b.post(page+"/status", url.Values{"to": {"active"}}), http.StatusSeeOther)
		p := b.get(page)
		if strings.Contains(p.body, `name="statsEngine"`) {
			t.Fatal("an active campaign offers the engine")
		}
		wantContains(t, p, `value="Bayesian (chance to beat control)" disabled`, "cannot change now")
		// A crafted post of the engine changes only what may change.
		f.Set("statsEngine", "frequentist")
		f.Set("name", "Still bayesian")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID)
		if got.StatsEngine != "bayesian" || got.Name != "Still bayesian" {
			t.Fatalf("after a crafted post: %+v", got)
		}
		// The store the form mirrors refuses it outright, naming the field.
		eng := "frequentist"
		_, err := e.db.UpdateCampaign(e.ctx, app.ID, c.ID, store.CampaignInput{StatsEngine: &eng})
		if se, ok := err.(*store.Error); !ok || !strings.Contains(fmt.Sprint(se.Details), "statsEngine") {
			t.Fatalf("store accepted statsEngine after the start: %v", err)
		}
	})
}

// The banner speaks the deciding engine's language, and the page says
// which engine decides.
func TestResultsFollowTheEngine(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	results := func(c *store.Campaign) page {
		p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c.ID))
		wantStatus(t, p, http.StatusOK)
		return page{body: htmlUnescape(p.body)}
	}
	// rates converts users at 10% in the control and 40% in the variant,
	// or the other way round.
	rates := func(better int) func(v, n int) bool {
		return func(v, n int) bool {
			if v == better {
				return n%5 < 2
			}
			return n%10 == 0
		}
	}
	for _, tc := range []struct {
		engine, wantDecides string
		better              int
		want                []string
	}{
		{"sequential", `Sequential · safe to check daily <span class="badge s-active">decides</span>`, 1,
			[]string{"V1 wins.", "the always-valid test is significant with", "holds even though the results were checked along the way"}},
		{"bayesian", `Bayesian · chance to win <span class="badge s-active">decides</span>`, 1,
			[]string{"V1 wins.", "has a > 99.9% chance to beat control (risk if it is in fact worse: < 0.001 pts of conversion rate)."}},
		{"bayesian", `Bayesian · chance to win <span class="badge s-active">decides</span>`, 0,
			[]string{"Control wins.", "has a > 99.9% chance to beat V1: keep the control."}},
	} {
		// One goal per campaign: the users are the same in every one.
		goal := fmt.Sprintf("buy-%s-%d", tc.engine, tc.better)
		t.Run(goal, func(t *testing.T) {
			c := e.campaign(app.ID, tc.engine, goal)
			e.withEngine(app.ID, c, tc.engine)
			e.start(app.ID, c.ID)
			e.traffic(app.ID, c, 400, rates(tc.better))
			p := results(c)
			wantContains(t, p, append(tc.want, `id="engine" data-value="`+tc.engine+`"`, tc.wantDecides)...)
			if strings.Contains(p.body, `Fixed-horizon test <span class="badge`) || strings.Contains(p.body, "significant with") != (tc.engine != "bayesian") {
				t.Fatalf("the banner or the tables speak for another engine:\n%s", p.body)
			}
		})
	}
	t.Run("ListSpeaksOfChances", func(t *testing.T) {
		p := b.get(fmt.Sprintf("/apps/%d/campaigns", app.ID))
		if !regexp.MustCompile(`V1 wins, \+[0-9.]+% uplift, &gt; 99.9% chance to beat control`).MatchString(strings.ReplaceAll(p.body, "&#43;", "+")) {
			t.Fatalf("no chance in the list's result line:\n%s", p.body)
		}
	})
	t.Run("NoWinnerYet", func(t *testing.T) {
		for engine, want := range map[string]string{
			"bayesian":   "No variant has a 95% chance to beat the control, or to lose to it. Closest: V1, with a ",
			"sequential": "under the always-valid test (p = ",
		} {
			c := e.campaign(app.ID, "close "+engine, "close-"+engine)
			e.withEngine(app.ID, c, engine)
			e.start(app.ID, c.ID)
			e.traffic(app.ID, c, 60, func(v, n int) bool { return n%4 == 0 || v == 1 && n%7 == 0 })
			p := results(c)
			wantContains(t, p, "No winner yet.", want)
		}
	})
}
