package dashboard_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"service/store"
)

func TestPart2PagesNeedSignInCSRFAndTheirApp(t *testing.T) {
	e := newEnv(t).withUser()
	w := e.world2()
	t.Run("SignIn", func(t *testing.T) {
		b := e.browser()
		for _, r := range routes2(w.a.ID, w.campaignA.ID, w.audA.ID) {
			p := b.do(r.method, r.path, url.Values{"name": {"x"}})
			if r.method == "GET" && (p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/signin?next=")) {
				t.Errorf("%s %s: status=%d, want sign-in redirect", r.method, r.path, p.status)
			}
			if r.method == "POST" && p.status != http.StatusUnauthorized {
				t.Errorf("%s %s: status=%d, want 401", r.method, r.path, p.status)
			}
		}
	})
	b := e.signedIn()
	t.Run("CSRF", func(t *testing.T) {
		for _, r := range routes2(w.a.ID, w.campaignA.ID, w.audA.ID) {
			if r.method != "POST" {
				continue
			}
			for _, tok := range []string{"", "wrong"} {
				p := b.do("POST", r.path, url.Values{"csrf": {tok}, "name": {"x"}, "to": {"active"}, "status": {"archived"}, "allowedOrigins": {"https://x.example"}})
				if p.status != http.StatusForbidden {
					t.Errorf("POST %s csrf=%q: status=%d, want 403", r.path, tok, p.status)
				}
			}
		}
		if c, _ := e.db.FindCampaignByID(e.ctx, w.a.ID, w.campaignA.ID); c.Status != "draft" || c.Name != "ca" {
			t.Fatalf("refused form changed the campaign: %+v", c)
		}
		if a, _ := e.db.FindAudienceByID(e.ctx, w.a.ID, w.audA.ID); a.Status != "active" || a.Name != "aa" {
			t.Fatalf("refused form changed the audience: %+v", a)
		}
	})
	t.Run("AnotherAppsIDIs404", func(t *testing.T) {
		for _, r := range routes2(w.a.ID, w.campaignB.ID, w.audB.ID) {
			if !strings.Contains(r.path, "/campaigns/") && !strings.Contains(r.path, "/audiences/") || strings.HasSuffix(r.path, "/new") {
				continue
			}
			var p page
			if r.method == "GET" {
				p = b.get(r.path)
			} else {
				p = b.post(r.path, url.Values{"name": {"x"}, "to": {"active"}, "status": {"archived"}})
			}
			if p.status != http.StatusNotFound {
				t.Errorf("%s %s: status=%d, want 404", r.method, r.path, p.status)
			}
		}
		for _, r := range routes2(999, w.campaignA.ID, w.audA.ID) {
			var p page
			if r.method == "GET" {
				p = b.get(r.path)
			} else {
				p = b.post(r.path, nil)
			}
			if p.status != http.StatusNotFound {
				t.Errorf("%s %s: status=%d, want 404", r.method, r.path, p.status)
			}
		}
		if c, _ := e.db.FindCampaignByID(e.ctx, w.b.ID, w.campaignB.ID); c.Status != "draft" || c.Name != "cb" {
			t.Fatalf("B's campaign changed through A: %+v", c)
		}
		if a, _ := e.db.FindAudienceByID(e.ctx, w.b.ID, w.audB.ID); a.Status != "active" || a.Name != "ab" {
			t.Fatalf("B's audience changed through A: %+v", a)
		}
	})
	t.Run("EveryPageRenders", func(t *testing.T) {
		for _, r := range routes2(w.a.ID, w.campaignA.ID, w.audA.ID) {
			if r.method == "GET" {
				if p := b.get(r.path); p.status != http.StatusOK && !(strings.Contains(r.path, "/users") && p.status == http.StatusNotFound) {
					t.Errorf("GET %s: status=%d\n%s", r.path, p.status, p.body)
				}
			}
		}
	})
}

func TestPart2PagesEscape(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c := e.campaign(app.ID, hostile, hostile)
	aud := e.audience(app.ID, hostile, `{"rules":[{"field":"`+strings.ReplaceAll(hostile, `"`, `\"`)+`","operator":"equals","value":"x"}]}`)
	if _, err := e.db.IdentifyUser(e.ctx, app.ID, hostile, map[string]any{hostile: hostile}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.LogEvent(e.ctx, app.ID, &store.EventInput{EventID: hostile, UserID: hostile, Metadata: []byte(`{"k":"` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}`)}); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/apps/%d", app.ID)
	for _, path := range []string{base + "/campaigns", fmt.Sprintf("%s/campaigns/%d", base, c.ID), fmt.Sprintf("%s/campaigns/%d/results", base, c.ID),
		fmt.Sprintf("%s/campaigns/%d/preview", base, c.ID), base + "/audiences", fmt.Sprintf("%s/audiences/%d", base, aud.ID),
		fmt.Sprintf("%s/audiences/%d/check?userId=%s", base, aud.ID, url.QueryEscape(hostile)), base + "/events",
		base + "/events?eventId=" + url.QueryEscape(hostile), base + "/users?userId=" + url.QueryEscape(hostile)} {
		p := b.get(path)
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<b>") {
			t.Errorf("%s: hostile markup reached the page unescaped", path)
		}
		if strings.Count(p.body, "</textarea>") != strings.Count(p.body, "<textarea") {
			t.Errorf("%s: a </textarea> escaped its textarea", path)
		}
		if !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: hostile text not shown escaped", path)
		}
	}
}

// campaignForm is a valid create form over two blocks.
func campaignFormOf(c1, c2 int64) url.Values {
	return url.Values{"name": {"Checkout test"}, "description": {"d"}, "startDate": {""}, "endDate": {"2099-01-31T12:00"},
		"timezone": {"Europe/Berlin"}, "goalEventId": {"purchase"}, "audienceId": {""}, "assignmentType": {"weighted"}, "control": {"0"},
		"variants[0].name": {"Control"}, "variants[0].contentViewId": {fmt.Sprint(c1)}, "variants[0].trafficAllocation": {"50"},
		"variants[1].name": {"Green"}, "variants[1].contentViewId": {fmt.Sprint(c2)}, "variants[1].trafficAllocation": {"50"},
		"action": {"save"}}
}

func TestCampaignEditor(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c1 := e.published(app.ID, "one", `[{"type":"text","content":"one"}]`)
	c2 := e.published(app.ID, "two", `[{"type":"text","content":"two"}]`)
	base := fmt.Sprintf("/apps/%d/campaigns", app.ID)
	wantContains(t, b.get(base+"/new"), `name="variants[1].contentViewId"`, ">one (published)</option>")

	for _, tc := range []struct {
		name          string
		set           map[string]string
		field, reason string
	}{
		{"NameRequired", map[string]string{"name": " "}, "name", "is required"},
		{"WeightsSum", map[string]string{"variants[1].trafficAllocation": "40"}, "", "trafficAllocation must sum to 100"},
		{"WeightNotANumber", map[string]string{"variants[1].trafficAllocation": "half"}, "variants[1].trafficAllocation", "must be a number"},
		{"ContentRequired", map[string]string{"variants[1].contentViewId": ""}, "variants[1].contentViewId", "is required"},
		{"ContentOfAnotherApp", map[string]string{"variants[1].contentViewId": "99999"}, "variants[1].contentViewId", "no such content view"},
		{"Timezone", map[string]string{"timezone": "Mars/Olympus"}, "timezone", "must be an IANA time zone"},
		{"EndBeforeStart", map[string]string{"startDate": "2099-02-01T00:00"}, "endDate", "must be after startDate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := campaignFormOf(c1.ID, c2.ID)
			for k, v := range tc.set {
				f.Set(k, v)
			}
			p := b.post(base, f)
			wantStatus(t, p, http.StatusUnprocessableEntity)
			if tc.field == "" {
				wantContains(t, p, tc.reason)
			} else if !errBeside(p.body, tc.field, tc.reason) {
				t.Fatalf("no %q beside %s:\n%s", tc.reason, tc.field, p.body)
			}
		})
	}
	list, _, _ := e.db.FindCampaigns(e.ctx, app.ID, "", store.ListOptions{Limit: 10, Page: 1})
	if len(list) != 0 {
		t.Fatalf("a refused form created %d campaigns", len(list))
	}

	t.Run("AddAndRemoveVariantRows", func(t *testing.T) {
		f := campaignFormOf(c1.ID, c2.ID)
		f.Set("action", "addvariant")
		p := b.post(base, f)
		wantStatus(t, p, http.StatusOK)
		wantContains(t, p, `name="variants[2].contentViewId"`, `value="Green"`)
		f.Set("action", "removevariant:0")
		p = b.post(base, f)
		wantContains(t, p, `name="variants[0].name" value="Green"`)
		if strings.Contains(p.body, `name="variants[1].name"`) {
			t.Fatal("row not removed")
		}
	})

	p := b.post(base, campaignFormOf(c1.ID, c2.ID))
	wantStatus(t, p, http.StatusSeeOther)
	list, _, _ = e.db.FindCampaigns(e.ctx, app.ID, "", store.ListOptions{Limit: 10, Page: 1})
	if len(list) != 1 {
		t.Fatalf("campaigns=%d", len(list))
	}
	c := list[0]
	if c.Name != "Checkout test" || c.Timezone != "Europe/Berlin" || *c.GoalEventID != "purchase" || len(c.Variants) != 2 ||
		c.Variants[1].Name != "Green" || c.Variants[1].ContentViewID != c2.ID || !c.Variants[0].IsControl ||
		c.EndDate.UTC().Format("2006-01-02T15:04") != "2099-01-31T11:00" {
		t.Fatalf("campaign=%+v end=%v", c, c.EndDate)
	}
	page := fmt.Sprintf("%s/%d", base, c.ID)
	if loc := p.header.Get("Location"); loc != page+"?notice=campaign_created" {
		t.Fatalf("Location=%q", loc)
	}
	// The form shows the end in the campaign's timezone.
	wantContains(t, b.get(page), `name="endDate" value="2099-01-31T12:00"`, "Start</button>")

	t.Run("DraftEditsEverything", func(t *testing.T) {
		f := campaignFormOf(c1.ID, c2.ID)
		f.Set("name", "Renamed")
		f.Set("control", "1")
		f.Set("variants[0].trafficAllocation", "30")
		f.Set("variants[1].trafficAllocation", "70")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID)
		if got.Name != "Renamed" || got.Variants[0].TrafficAllocation != 30 || !got.Variants[1].IsControl {
			t.Fatalf("%+v %+v", got, got.Variants[0])
		}
	})

	t.Run("ActiveLocksWhatTheStateLocks", func(t *testing.T) {
		wantStatus(t, b.post(page+"/status", url.Values{"to": {"active"}}), http.StatusSeeOther)
		p := b.get(page)
		wantContains(t, p, `name="name"`, `name="endDate"`, "Pause</button>", "Complete</button>")
		for _, locked := range []string{`name="startDate"`, `name="goalEventId"`, `name="variants[0].contentViewId"`, `name="timezone"`, "Start</button>", "Archive</button>"} {
			if strings.Contains(p.body, locked) {
				t.Errorf("active campaign offers %s", locked)
			}
		}
		// A crafted post of locked fields changes only what may change.
		f := campaignFormOf(c1.ID, c2.ID)
		f.Set("name", "Live")
		f.Set("goalEventId", "other")
		f.Set("variants[0].trafficAllocation", "90")
		f.Set("variants[1].trafficAllocation", "10")
		f.Set("endDate", "2099-01-31T12:00")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID)
		if got.Name != "Live" || *got.GoalEventID != "purchase" || got.Variants[0].TrafficAllocation != 30 {
			t.Fatalf("%+v", got)
		}
		// Moving the end earlier is refused beside the field.
		f.Set("endDate", "2098-01-01T00:00")
		p = b.post(page, f)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "endDate", "can only be moved later") {
			t.Fatalf("no refusal beside endDate:\n%s", p.body)
		}
	})
}

func TestCampaignLifecycleButtons(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c := e.campaign(app.ID, "life", "buy")
	page := fmt.Sprintf("/apps/%d/campaigns/%d", app.ID, c.ID)
	status := func() string {
		got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID)
		return got.Status
	}
	steps := []struct {
		to, want string
		offers   []string
	}{
		{"", "draft", []string{"Start", "Archive"}},
		{"active", "active", []string{"Pause", "Complete"}},
		{"paused", "paused", []string{"Resume", "Complete"}},
		{"active", "active", []string{"Pause", "Complete"}},
		{"completed", "completed", []string{"Archive"}},
		{"archived", "archived", []string{"Unarchive"}},
		{"unarchive", "completed", []string{"Archive"}},
	}
	all := []string{"Start", "Pause", "Resume", "Complete", "Archive", "Unarchive"}
	for _, s := range steps {
		if s.to != "" {
			p := b.post(page+"/status", url.Values{"to": {s.to}})
			wantStatus(t, p, http.StatusSeeOther)
		}
		if got := status(); got != s.want {
			t.Fatalf("after %q: status=%s, want %s", s.to, got, s.want)
		}
		p := b.get(page)
		for _, label := range all {
			offered := strings.Contains(p.body, ">"+label+"</button>")
			if offered != contains(s.offers, label) {
				t.Errorf("%s: button %s offered=%v", s.want, label, offered)
			}
		}
	}
	// Moves the state does not allow are refused with the store's reason.
	for _, to := range []string{"paused", "active", "draft", "bogus"} {
		p := b.post(page+"/status", url.Values{"to": {to}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !strings.Contains(p.body, "Refused") || status() != "completed" {
			t.Fatalf("to=%s: %s\n%s", to, status(), p.body)
		}
	}
	wantContains(t, b.post(page+"/status", url.Values{"to": {"paused"}}), "campaign cannot move from completed to paused")

	t.Run("StartWithoutEndDateShowsWhy", func(t *testing.T) {
		n := "no end"
		c1 := e.published(app.ID, "x", `[{"type":"text","content":"x"}]`)
		vs := []store.VariantInput{{ContentViewID: &c1.ID}, {ContentViewID: &c1.ID}}
		d, err := e.db.CreateCampaign(e.ctx, app.ID, 0, store.CampaignInput{Name: &n, Variants: &vs})
		if err != nil {
			t.Fatal(err)
		}
		p := b.post(fmt.Sprintf("/apps/%d/campaigns/%d/status", app.ID, d.ID), url.Values{"to": {"active"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantContains(t, p, "a campaign needs an endDate in the future to be active")
		if !errBeside(p.body, "endDate", "must be set and in the future") {
			t.Fatalf("no reason beside endDate:\n%s", p.body)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestCampaignListTabsSearchAndResultLine(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	aud := e.audience(app.ID, "Germans", defCountry)
	live := e.campaign(app.ID, "Spring sale", "buy")
	e.campaign(app.ID, "Autumn sale", "buy")
	audID := fmt.Sprint(aud.ID)
	if _, err := e.db.UpdateCampaign(e.ctx, app.ID, live.ID, store.CampaignInput{AudienceID: []byte(audID)}); err != nil {
		t.Fatal(err)
	}
	e.start(app.ID, live.ID)
	// Targeted campaign: users need the audience's attribute.
	for i := 0; i < 40; i++ {
		if _, err := e.db.IdentifyUser(e.ctx, app.ID, fmt.Sprintf("u%d", i), map[string]any{"country": "DE"}); err != nil {
			t.Fatal(err)
		}
	}
	e.traffic(app.ID, live, 40, func(v, n int) bool { return n%5 == 0 || v == 1 && n%2 == 0 })
	base := fmt.Sprintf("/apps/%d/campaigns", app.ID)
	p := b.get(base)
	wantContains(t, p, "Spring sale", "Autumn sale", "Germans", "No impressions yet")
	if !regexp.MustCompile(`V1 (wins, (\+|&#43;)[0-9.]+% uplift, (&gt; )?[0-9.]+% confidence|leads, (\+|&#43;)[0-9.]+% uplift, no clear difference yet)`).MatchString(p.body) {
		t.Fatalf("no one-line result:\n%s", p.body)
	}
	p = b.get(base + "?status=active")
	wantContains(t, p, "Spring sale")
	if strings.Contains(p.body, "Autumn sale") {
		t.Fatal("active tab lists a draft")
	}
	p = b.get(base + "?q=AUTUMN")
	wantContains(t, p, "Autumn sale")
	if strings.Contains(p.body, "Spring sale") {
		t.Fatal("search lists a campaign not named like it")
	}
	wantContains(t, b.get(base+"?q=nothing-like-it"), "named like “nothing-like-it”")
}

// Below significance neither the results page nor the campaign list turns
// p into a "confidence": p = 0.9 is no evidence, not "10% confidence".
func TestResultsNoClearDifference(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c := e.campaign(app.ID, "even", "purchase")
	e.start(app.ID, c.ID)
	e.traffic(app.ID, c, 200, func(v, n int) bool { return n%5 == 0 || v == 1 && n == 3 })
	var a store.Analytics
	e.api(app.ID, fmt.Sprintf("/campaigns/%d/analytics", c.ID), &a)
	if a.PValue == nil || *a.PValue < 0.5 || a.StatisticalSignificance {
		t.Fatalf("pValue=%v significant=%v: the case is meant to show no difference", a.PValue, a.StatisticalSignificance)
	}
	// "95% confidence sequence" names a kind of interval, not a claim.
	confidence := regexp.MustCompile(`[0-9.]+% confidence( sequence)?`)
	claims := func(body string) []string {
		var out []string
		for _, m := range confidence.FindAllString(body, -1) {
			if !strings.HasSuffix(m, " sequence") {
				out = append(out, m)
			}
		}
		return out
	}
	p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c.ID))
	wantContains(t, p, "No winner yet.", "There is no clear difference from the control yet (p = ", `<span class="muted">no clear difference yet</span>`)
	if m := claims(p.body); len(m) > 0 {
		t.Fatalf("results page says %q at p = %v", m, *a.PValue)
	}
	p = b.get(fmt.Sprintf("/apps/%d/campaigns", app.ID))
	wantContains(t, p, "uplift, no clear difference yet")
	if m := claims(p.body); len(m) > 0 {
		t.Fatalf("campaign list says %q at p = %v", m, *a.PValue)
	}
}

// The results page shows what GET /campaigns/{id}/analytics answers,
// number for number, and the banners that go with them.
func TestResultsPageMatchesAnalytics(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c := e.campaign(app.ID, "checkout", "purchase")
	e.start(app.ID, c.ID)
	got := e.traffic(app.ID, c, 400, func(v, n int) bool {
		if v == 0 {
			return n%10 == 0 // 10%
		}
		return n%5 < 2 // 40%
	})
	results := fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c.ID)
	p := b.get(results)
	wantStatus(t, p, http.StatusOK)

	var a store.Analytics
	e.api(app.ID, fmt.Sprintf("/campaigns/%d/analytics", c.ID), &a)
	if a.TotalImpressions != 400 || a.WinningVariantID == nil {
		t.Fatalf("analytics=%+v (split %v)", a, got)
	}
	wantContains(t, p, `id="engine" data-value="frequentist"`, `Fixed-horizon test <span class="badge s-active">decides</span>`)
	rows := strings.Split(between(p.body, `id="results"`, "</table>"), "<tr data-variant=")[1:]
	if len(rows) != len(a.Variants) {
		t.Fatalf("%d rows for %d variants", len(rows), len(a.Variants))
	}
	for i, v := range a.Variants {
		row := rows[i]
		if !strings.HasPrefix(row, fmt.Sprintf(`"%d"`, v.VariantID)) {
			t.Fatalf("row %d is not variant %d", i, v.VariantID)
		}
		shown := map[string]string{}
		for _, m := range dataValueRe.FindAllStringSubmatch(row, -1) {
			shown[m[1]] = m[2]
		}
		f := func(p *float64) string {
			if p == nil {
				return "null"
			}
			return strconv.FormatFloat(*p, 'g', -1, 64)
		}
		want := map[string]string{
			"impressions": fmt.Sprint(v.Impressions), "conversions": fmt.Sprint(v.Conversions),
			"conversionRate": f(&v.ConversionRate), "uplift": f(v.Uplift), "pValue": f(v.PValue),
			"interval": f(&v.ConfidenceInterval.Lower) + "," + f(&v.ConfidenceInterval.Upper),
		}
		if v.PValue != nil {
			want["confidence"] = f(ptr((1 - *v.PValue) * 100))
		} else {
			want["confidence"] = "null"
		}
		for k, w := range want {
			if shown[k] != w {
				t.Errorf("variant %s %s: page %q, API %q", v.VariantName, k, shown[k], w)
			}
		}
		wantContains(t, page{body: row}, fmt.Sprintf("%.2f%%", v.ConversionRate))
	}
	// The sequential and Bayesian figures, one row per treatment.
	compare := strings.Split(between(p.body, `id="compare"`, "</table>"), "<tr data-compare=")[1:]
	if len(compare) != len(a.Variants)-1 {
		t.Fatalf("%d comparison rows for %d variants", len(compare), len(a.Variants))
	}
	for i, v := range a.Variants[1:] {
		row := compare[i]
		if !strings.HasPrefix(row, fmt.Sprintf(`"%d"`, v.VariantID)) || v.Sequential == nil || v.Bayesian == nil {
			t.Fatalf("comparison row %d is not variant %d, or the API has no figures: %+v", i, v.VariantID, v)
		}
		shown := map[string]string{}
		for _, m := range dataValueRe.FindAllStringSubmatch(row, -1) {
			shown[m[1]] = m[2]
		}
		sq, by := v.Sequential, v.Bayesian
		want := map[string]string{
			"seqPValue": g(sq.PValue), "seqUplift": g(*sq.Uplift), "seqDifference": g(sq.Difference),
			"seqUpliftCS": g(sq.UpliftConfidenceSequence.Lower) + "," + g(sq.UpliftConfidenceSequence.Upper),
			"seqCS":       g(sq.ConfidenceSequence.Lower) + "," + g(sq.ConfidenceSequence.Upper),
			"chance":      g(by.ChanceToBeatControl), "expectedLoss": g(by.ExpectedLoss), "controlExpectedLoss": g(by.ControlExpectedLoss),
			"credible": g(by.CredibleInterval.Lower) + "," + g(by.CredibleInterval.Upper),
		}
		for k, w := range want {
			if shown[k] != w {
				t.Errorf("variant %s %s: page %q, API %q", v.VariantName, k, shown[k], w)
			}
		}
		// What a reader sees is those numbers rounded.
		wantContains(t, page{body: htmlUnescape(row)}, fmt.Sprintf("%+.2f%% <span", *sq.Uplift),
			fmt.Sprintf("(%+.2f%% to %+.2f%%)", sq.UpliftConfidenceSequence.Lower, sq.UpliftConfidenceSequence.Upper),
			fmt.Sprintf("%+.2f%% to %+.2f%%", by.CredibleInterval.Lower, by.CredibleInterval.Upper), fmt.Sprintf("%.3f pts", by.ControlExpectedLoss))
	}
	wantContains(t, p, "Safe to check daily", "Chance to beat control")
	if strings.Contains(p.body, "Further analyses") {
		t.Fatal("fields the page lays out are listed again under Further analyses")
	}
	wantContains(t, p, `id="verdict"`, a.WinningVariant.VariantName+" wins.", `id="notenough"`, "Not enough data yet",
		fmt.Sprintf("%d more impressions", 1000-a.Variants[0].Impressions), "<svg", "Conversion rate per variant", "Impressions per day")
	if strings.Contains(p.body, `id="srm"`) {
		t.Fatal("SRM warning on a 50/50 split")
	}

	t.Run("CSV", func(t *testing.T) {
		p := b.get(results + ".csv")
		wantStatus(t, p, http.StatusOK)
		if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
			t.Fatalf("Content-Type=%q", ct)
		}
		recs, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
		if err != nil || len(recs) != 3 || recs[0][6] != "impressions" || len(recs[0]) != 28 || recs[0][15] != "sequentialPValue" || recs[0][27] != "statsEngine" {
			t.Fatalf("%v %q", err, recs)
		}
		for i, v := range a.Variants {
			if recs[i+1][6] != fmt.Sprint(v.Impressions) || recs[i+1][7] != fmt.Sprint(v.Conversions) ||
				recs[i+1][8] != strconv.FormatFloat(v.ConversionRate, 'g', -1, 64) ||
				recs[i+1][14] != strconv.FormatBool(v.VariantID == *a.WinningVariantID) || recs[i+1][27] != "frequentist" {
				t.Fatalf("row %d: %q vs %+v", i, recs[i+1], v)
			}
			want := make([]string, 12) // the control has none: empty, as the API's null
			if sq, by := v.Sequential, v.Bayesian; sq != nil {
				want = []string{g(sq.PValue), g(sq.Difference), g(sq.ConfidenceSequence.Lower), g(sq.ConfidenceSequence.Upper),
					g(*sq.Uplift), g(sq.UpliftConfidenceSequence.Lower), g(sq.UpliftConfidenceSequence.Upper),
					g(by.ChanceToBeatControl), g(by.ExpectedLoss), g(by.ControlExpectedLoss), g(by.CredibleInterval.Lower), g(by.CredibleInterval.Upper)}
			}
			if got := recs[i+1][15:27]; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("variant %s engine columns: %q, API %q", v.VariantName, got, want)
			}
		}
	})

	t.Run("SampleRatioMismatch", func(t *testing.T) {
		// A split far from the weights: as if something assigned unevenly.
		if _, err := e.sql().Exec(`UPDATE campaign_variants SET traffic_allocation = CASE WHEN is_control THEN 90 ELSE 10 END WHERE campaign_id = ?`, c.ID); err != nil {
			t.Fatal(err)
		}
		p := b.get(results)
		wantContains(t, p, `id="srm"`, "Sample ratio mismatch")
	})

	t.Run("NoWinnerYet", func(t *testing.T) {
		c2 := e.campaign(app.ID, "quiet", "signup")
		p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c2.ID))
		wantContains(t, p, "No winner yet", "Not enough data yet", "1,000 more impressions and 100 more conversions")
	})
}

// g is a number as the page's data-value attributes and the CSV write it.
func g(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func TestCampaignPreview(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c := e.campaign(app.ID, "p", "")
	p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/preview", app.ID, c.ID))
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `<h2 class="pv-heading">Hello 0</h2>`, `<h2 class="pv-heading">Hello 1</h2>`, "Control", "V1", "50% of traffic")
}
