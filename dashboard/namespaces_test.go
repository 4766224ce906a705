package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"service/store"
)

// TestCampaignEditorNamespace picks a namespace and a range in the editor,
// shows what is free in the app's namespaces, and refuses a bad range
// beside the field.
func TestCampaignEditorNamespace(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c1 := e.published(app.ID, "one", `[{"type":"text","content":"one"}]`)
	c2 := e.published(app.ID, "two", `[{"type":"text","content":"two"}]`)
	running := e.campaign(app.ID, "Running <b>", "purchase")
	if _, err := e.db.UpdateCampaign(e.ctx, app.ID, running.ID, store.CampaignInput{Namespace: json.RawMessage(`{"id":"checkout","range":[0,0.5]}`)}); err != nil {
		t.Fatal(err)
	}
	e.start(app.ID, running.ID)
	base := fmt.Sprintf("/apps/%d/campaigns", app.ID)
	p := b.get(base + "/new")
	wantContains(t, p, `name="namespaceId"`, `<option value="checkout">`, `data-namespace="checkout"`,
		`data-k="free" data-value="0.5">50% free`, `[0.5, 1)`, `<svg class="ns-bar"`, `Running &lt;b&gt; (active): 0 – 0.5`,
		`name="cupedLookbackDays"`)

	t.Run("BadRangeBesideTheField", func(t *testing.T) {
		f := campaignFormOf(c1.ID, c2.ID)
		f.Set("namespaceId", "checkout")
		f.Set("namespaceStart", "0.7")
		f.Set("namespaceEnd", "0.2")
		p := b.post(base, f)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "namespaceEnd", "must satisfy 0 &lt;= start &lt; end &lt;= 1") {
			t.Fatalf("no refusal beside the range:\n%s", p.body)
		}
	})

	f := campaignFormOf(c1.ID, c2.ID)
	f.Set("namespaceId", "checkout")
	f.Set("namespaceStart", "0.5")
	f.Set("namespaceEnd", "")
	f.Set("cupedLookbackDays", "30")
	wantStatus(t, b.post(base, f), http.StatusSeeOther)
	list, _, err := e.db.FindCampaigns(e.ctx, app.ID, store.CampaignDraft, store.ListOptions{Limit: 10, Page: 1})
	if err != nil || len(list) != 1 {
		t.Fatalf("drafts %v, %v", list, err)
	}
	c := list[0]
	if c.Namespace == nil || *c.Namespace != (store.Namespace{ID: "checkout", Range: [2]float64{0.5, 1}}) || c.CupedLookbackDays != 30 {
		t.Fatalf("saved namespace %+v, lookback %d", c.Namespace, c.CupedLookbackDays)
	}
	page := fmt.Sprintf("%s/%d", base, c.ID)
	wantContains(t, b.get(page), `name="namespaceId" value="checkout"`, `name="namespaceStart" value="0.5"`, `name="namespaceEnd" value="1"`, `name="cupedLookbackDays" value="30"`)

	t.Run("EditOntoAHeldRangeRefused", func(t *testing.T) {
		f.Set("namespaceStart", "0.25")
		f.Set("namespaceEnd", "0.75")
		p := b.post(page, f)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "namespaceEnd", "overlaps the range of an active or paused campaign") {
			t.Fatalf("no refusal beside the range:\n%s", p.body)
		}
	})

	t.Run("LockedOnceStarted", func(t *testing.T) {
		e.start(app.ID, c.ID)
		p := b.get(page)
		if strings.Contains(p.body, `name="namespaceId"`) || strings.Contains(p.body, `name="cupedLookbackDays"`) {
			t.Fatal("a running campaign offers its namespace or lookback")
		}
		wantContains(t, p, `value="checkout" disabled`, `value="30" disabled`)
	})
}

// TestResultsCupedLine checks the results page's CUPED line: labelled,
// with the variance it removed, beside the fixed-horizon table and never
// the one that decides.
func TestResultsCupedLine(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	// Users with a purchase history, who buy again.
	for u := 0; u < 90; u += 3 {
		for range 2 {
			if _, err := e.db.LogEvent(e.ctx, app.ID, &store.EventInput{EventID: "buy", UserID: fmt.Sprintf("u%d", u)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := e.campaign(app.ID, "Cuped", "buy")
	off := e.campaign(app.ID, "Off", "buy")
	if _, err := e.db.UpdateCampaign(e.ctx, app.ID, off.ID, store.CampaignInput{CupedLookbackDays: json.RawMessage(`0`)}); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*store.Campaign{c, off} {
		e.start(app.ID, x.ID)
		e.traffic(app.ID, x, 90, func(int, int) bool { return false })
	}
	for u := 0; u < 90; u++ {
		if u%3 == 0 || u%7 == 0 {
			if _, err := e.db.LogEvent(e.ctx, app.ID, &store.EventInput{EventID: "buy", UserID: fmt.Sprintf("u%d", u)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, err := e.db.CampaignAnalytics(e.ctx, app.ID, c.ID)
	if err != nil || a.Cuped == nil || a.Cuped.VarianceReduction < 0.1 {
		t.Fatalf("analytics cuped %+v, %v: want a real reduction", a.Cuped, err)
	}
	p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c.ID))
	wantStatus(t, p, http.StatusOK)
	removed := fmt.Sprintf("CUPED removed %.0f%% of the variance", a.Cuped.VarianceReduction*100)
	wantContains(t, p, `id="cuped"`, "CUPED · fixed-horizon test with variance reduction", "it never decides the winner", removed,
		fmt.Sprintf(`data-cuped="%d"`, a.Variants[1].VariantID), `data-k="cupedPValue"`)
	if strings.Index(p.body, `id="results"`) > strings.Index(p.body, `id="cuped"`) {
		t.Error("the CUPED line comes before the fixed-horizon table")
	}
	p = b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, off.ID))
	if strings.Contains(p.body, `id="cuped"`) || strings.Contains(p.body, "cuped") {
		t.Error("a campaign with CUPED off shows a CUPED line or lists it as a further analysis")
	}
}
