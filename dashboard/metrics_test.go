package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"service/store"
)

// metric creates a metric from its API body.
func (e *env) metric(appID int64, body string) *store.Metric {
	e.t.Helper()
	var in store.MetricInput
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		e.t.Fatal(err)
	}
	m, err := e.db.CreateMetric(e.ctx, appID, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// withMetrics sets a draft campaign's metrics.
func (e *env) withMetrics(appID int64, c *store.Campaign, secondary, guardrails []int64) {
	e.t.Helper()
	raw, _ := json.Marshal(map[string][]int64{"secondary": secondary, "guardrails": guardrails})
	if _, err := e.db.UpdateCampaign(e.ctx, appID, c.ID, store.CampaignInput{Metrics: raw}); err != nil {
		e.t.Fatal(err)
	}
}

func metricFormOf() url.Values {
	return url.Values{"key": {"revenue"}, "name": {"Revenue per user"}, "description": {"What a user pays"}, "type": {"sum"},
		"eventId": {"purchase"}, "property": {"amount"}, "windowHours": {""}, "direction": {"increase"}, "cap": {"1000"}}
}

func TestMetricPages(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	base := fmt.Sprintf("/apps/%d/metrics", app.ID)

	p := b.get(base)
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `href="`+base+`" aria-current="page" class="current">Metrics</a>`, "No metrics yet.", `href="`+base+`/new"`)
	wantContains(t, b.get(base+"/new"), `name="key"`, `<option value="sum">sum</option>`, `<option value="decrease">decreases</option>`)

	e.metric(app.ID, `{"key":"taken","name":"Taken","type":"count","eventId":"click"}`)
	for _, tc := range []struct {
		name          string
		set           map[string]string
		field, reason string
	}{
		{"KeyShape", map[string]string{"key": "Revenue!"}, "key", "must be 1 to 64 characters of a-z, 0-9, _, . and -"},
		{"KeyTaken", map[string]string{"key": "taken"}, "key", "is already the key of metric"},
		{"NameRequired", map[string]string{"name": " "}, "name", "is required"},
		{"TypeKnown", map[string]string{"type": "median"}, "type", "must be one of conversion, count, sum"},
		{"SumNeedsProperty", map[string]string{"property": ""}, "property", "is required for a sum metric"},
		{"WindowInRange", map[string]string{"windowHours": "0"}, "windowHours", "must be null or a number from 0.001 to 8760"},
		{"WindowANumber", map[string]string{"windowHours": "a day"}, "windowHours", "must be empty or a number from 0.001 to 8760"},
		{"CapPositive", map[string]string{"cap": "-3"}, "cap", "must be null or a number greater than 0"},
		{"CapANumber", map[string]string{"cap": "NaN"}, "cap", "must be empty or a number greater than 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := metricFormOf()
			for k, v := range tc.set {
				f.Set(k, v)
			}
			p := b.post(base, f)
			wantStatus(t, p, http.StatusUnprocessableEntity)
			if !errBeside(p.body, tc.field, tc.reason) {
				t.Fatalf("no %q beside %s:\n%s", tc.reason, tc.field, p.body)
			}
		})
	}
	if list, _, _ := e.db.FindMetrics(e.ctx, app.ID, store.ListOptions{Limit: 10, Page: 1}); len(list) != 1 {
		t.Fatalf("a refused form created a metric: %d metrics", len(list))
	}

	p = b.post(base, metricFormOf())
	wantStatus(t, p, http.StatusSeeOther)
	loc := p.header.Get("Location")
	id, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(loc, base+"/"), "?notice=metric_created"), 10, 64)
	if err != nil {
		t.Fatalf("Location %q", loc)
	}
	m, err := e.db.FindMetricByID(e.ctx, app.ID, id)
	if err != nil || m.Key != "revenue" || m.Type != "sum" || m.Property == nil || *m.Property != "amount" || m.Cap == nil || *m.Cap != 1000 || m.WindowHours != nil {
		t.Fatalf("stored %+v, %v", m, err)
	}
	page := fmt.Sprintf("%s/%d", base, id)

	t.Run("PropertyOnlyForSums", func(t *testing.T) {
		f := metricFormOf()
		f.Set("key", "signed")
		f.Set("type", "conversion")
		wantStatus(t, b.post(base, f), http.StatusSeeOther)
		list, _, _ := e.db.FindMetrics(e.ctx, app.ID, store.ListOptions{Limit: 1, Page: 1})
		if list[0].Key != "signed" || list[0].Property != nil {
			t.Fatalf("conversion metric stored with %+v", list[0])
		}
	})

	t.Run("EditWhileUnused", func(t *testing.T) {
		f := metricFormOf()
		f.Set("windowHours", "24")
		f.Set("direction", "decrease")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		m, _ := e.db.FindMetricByID(e.ctx, app.ID, id)
		if m.WindowHours == nil || *m.WindowHours != 24 || m.Direction != "decrease" {
			t.Fatalf("after edit: %+v", m)
		}
		wantContains(t, b.get(page), `name="windowHours" value="24"`, `<option value="decrease" selected>`, "No campaign uses this metric.")
	})

	c := e.campaign(app.ID, "Checkout", "buy")
	e.withMetrics(app.ID, c, nil, []int64{id})

	t.Run("ListNamesCampaigns", func(t *testing.T) {
		p := b.get(base)
		row := part(t, p.body, fmt.Sprintf(`data-metric="%d"`, id), "</tr>")
		for _, want := range []string{`>Revenue per user</a>`, "the sum of purchase’s amount per user, within 24 h of their first visit, capped at 1000",
			fmt.Sprintf(`href="/apps/%d/campaigns/%d">Checkout</a>`, app.ID, c.ID), `s-draft">draft</span>`, "guardrail"} {
			if !strings.Contains(row, want) {
				t.Fatalf("row lacks %q:\n%s", want, row)
			}
		}
	})

	t.Run("DeleteRefusedNamesCampaigns", func(t *testing.T) {
		p := b.post(page+"/delete", nil)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantContains(t, p, "This metric cannot be deleted", `id="used-by"`, `>Checkout</a> <span class="badge s-draft">draft</span>`)
		if _, err := e.db.FindMetricByID(e.ctx, app.ID, id); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OnlyNameAndDescriptionWhileRunning", func(t *testing.T) {
		e.start(app.ID, c.ID)
		p := b.get(page)
		wantContains(t, p, `id="frozen"`, `<input value="revenue" disabled>`, `<input value="sum" disabled>`, `s-active">active</span>`)
		if strings.Contains(p.body, `name="key"`) || strings.Contains(p.body, `name="cap"`) {
			t.Fatal("a metric in use offers fields that define its values")
		}
		// A crafted post changes only what may change.
		f := metricFormOf()
		f.Set("name", "Revenue")
		f.Set("key", "rev2")
		f.Set("cap", "5")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		m, _ := e.db.FindMetricByID(e.ctx, app.ID, id)
		if m.Name != "Revenue" || m.Key != "revenue" || *m.Cap != 1000 {
			t.Fatalf("after a crafted post: %+v", m)
		}
		f.Set("name", "")
		p = b.post(page, f)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "name", "is required") {
			t.Fatalf("no refusal beside name:\n%s", p.body)
		}
	})

	t.Run("DeleteUnused", func(t *testing.T) {
		other := e.metric(app.ID, `{"key":"spare","name":"Spare","type":"count","eventId":"x"}`)
		p := fmt.Sprintf("%s/%d/delete", base, other.ID)
		wantContains(t, b.get(p), `action="`+p+`"`, "Delete the metric <strong>Spare</strong>")
		r := b.post(p, nil)
		wantStatus(t, r, http.StatusSeeOther)
		if r.header.Get("Location") != base+"?notice=metric_deleted" {
			t.Fatalf("Location %q", r.header.Get("Location"))
		}
		if _, err := e.db.FindMetricByID(e.ctx, app.ID, other.ID); store.ErrorCode(err) != store.ENOTFOUND {
			t.Fatalf("after delete: %v", err)
		}
	})

	t.Run("ViewerReads", func(t *testing.T) {
		email := "viewer@example.com"
		if _, err := e.db.CreateDashboardUser(e.ctx, email, testPassword, false); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.GrantRole(e.ctx, email, app.ID, store.MemberViewer); err != nil {
			t.Fatal(err)
		}
		v := e.browser()
		if p := v.signIn(email, testPassword); p.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", p.status)
		}
		p := v.get(base)
		wantStatus(t, p, http.StatusOK)
		wantContains(t, p, ">Revenue</a>")
		if strings.Contains(p.body, base+"/new") {
			t.Fatal("a viewer is offered New metric")
		}
		p = v.get(page)
		wantContains(t, p, `<fieldset class="card stack metric-form readonly" disabled>`)
		if strings.Contains(p.body, "/delete") {
			t.Fatal("a viewer is offered Delete")
		}
		wantStatus(t, v.post(page, metricFormOf()), http.StatusForbidden)
	})

	t.Run("AnotherAppsMetric", func(t *testing.T) {
		other := e.app("other")
		m := e.metric(other.ID, `{"key":"x","name":"X","type":"count","eventId":"x"}`)
		wantStatus(t, b.get(fmt.Sprintf("%s/%d", base, m.ID)), http.StatusNotFound)
		wantStatus(t, b.post(fmt.Sprintf("%s/%d/delete", base, m.ID), nil), http.StatusNotFound)
	})
}

func TestCampaignEditorMetrics(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c1 := e.published(app.ID, "one", `[{"type":"text","content":"one"}]`)
	c2 := e.published(app.ID, "two", `[{"type":"text","content":"two"}]`)
	signed := e.metric(app.ID, `{"key":"signed","name":"Signed up","type":"conversion","eventId":"signup"}`)
	rev := e.metric(app.ID, `{"key":"rev","name":"Revenue","type":"sum","eventId":"buy","property":"amount"}`)
	foreign := e.metric(e.app("other").ID, `{"key":"x","name":"X","type":"count","eventId":"x"}`)
	base := fmt.Sprintf("/apps/%d/campaigns", app.ID)
	box := func(role string, id int64) string { return fmt.Sprintf(`name="metrics.%s" value="%d"`, role, id) }

	wantContains(t, b.get(base+"/new"), box("secondary", signed.ID), box("guardrails", rev.ID), "whether a user logged signup")

	for _, tc := range []struct {
		name                  string
		secondary, guardrails []string
		reason                string
	}{
		{"BothRoles", []string{fmt.Sprint(rev.ID)}, []string{fmt.Sprint(rev.ID)}, "[0] names a metric already listed at metrics.secondary[0]"},
		{"AnotherApps", []string{fmt.Sprint(foreign.ID)}, nil, "[0] no such metric in this app"},
		{"NotAnID", []string{"x"}, nil, "[0] must be a metric of this app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := campaignFormOf(c1.ID, c2.ID)
			f["metrics.secondary"], f["metrics.guardrails"] = tc.secondary, tc.guardrails
			p := b.post(base, f)
			wantStatus(t, p, http.StatusUnprocessableEntity)
			i := strings.Index(p.body, `id="campaign-metrics"`)
			if i < 0 || !strings.Contains(p.body[i:], `<p class="ferr">`+tc.reason) {
				t.Fatalf("no %q in the metrics picker:\n%s", tc.reason, p.body)
			}
		})
	}

	f := campaignFormOf(c1.ID, c2.ID)
	f["metrics.secondary"], f["metrics.guardrails"] = []string{fmt.Sprint(signed.ID)}, []string{fmt.Sprint(rev.ID)}
	wantStatus(t, b.post(base, f), http.StatusSeeOther)
	list, _, _ := e.db.FindCampaigns(e.ctx, app.ID, "", store.ListOptions{Limit: 10, Page: 1})
	if len(list) != 1 || fmt.Sprint(list[0].Metrics.Secondary) != fmt.Sprint([]int64{signed.ID}) || fmt.Sprint(list[0].Metrics.Guardrails) != fmt.Sprint([]int64{rev.ID}) {
		t.Fatalf("campaigns %+v", list)
	}
	c := list[0]
	page := fmt.Sprintf("%s/%d", base, c.ID)
	wantContains(t, b.get(page), box("secondary", signed.ID)+` aria-label="Signed up: secondary metric" checked`,
		box("guardrails", rev.ID)+` aria-label="Revenue: guardrail" checked`)

	t.Run("GuardrailAction", func(t *testing.T) {
		wantContains(t, b.get(page), `<option value="alert" selected>`)
		f.Set("guardrailAction", "pause")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		if got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID); got.GuardrailAction != store.GuardrailPause {
			t.Fatalf("guardrailAction %q, want pause", got.GuardrailAction)
		}
		wantContains(t, b.get(page), `<option value="pause" selected>`)
		f.Set("guardrailAction", "stop")
		p := b.post(page, f)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantContains(t, p, "must be alert or pause")
		f.Set("guardrailAction", "pause")
	})

	t.Run("DraftChangesThem", func(t *testing.T) {
		f["metrics.guardrails"] = nil
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID)
		if len(got.Metrics.Guardrails) != 0 || len(got.Metrics.Secondary) != 1 {
			t.Fatalf("metrics %+v", got.Metrics)
		}
		f["metrics.guardrails"] = []string{fmt.Sprint(rev.ID)}
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
	})

	t.Run("ReadOnlyOnceStarted", func(t *testing.T) {
		e.start(app.ID, c.ID)
		p := b.get(page)
		if strings.Contains(p.body, `name="metrics.`) {
			t.Fatal("an active campaign offers the metrics")
		}
		wantContains(t, p, `id="chosen-metrics"`, fmt.Sprintf(`<li data-metric="%d"><a href="/apps/%d/metrics/%d">Signed up</a> <span class="badge">secondary</span>`, signed.ID, app.ID, signed.ID),
			fmt.Sprintf(`<a href="/apps/%d/metrics/%d">Revenue</a> <span class="badge">guardrail</span>`, app.ID, rev.ID), "they cannot change now",
			`When a guardrail gets worse: the campaign is paused`)
		// A crafted post changes only what may change.
		f["metrics.secondary"], f["metrics.guardrails"] = nil, []string{fmt.Sprint(signed.ID)}
		f.Set("name", "Renamed")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		got, _ := e.db.FindCampaignByID(e.ctx, app.ID, c.ID)
		if got.Name != "Renamed" || fmt.Sprint(got.Metrics.Secondary) != fmt.Sprint([]int64{signed.ID}) || fmt.Sprint(got.Metrics.Guardrails) != fmt.Sprint([]int64{rev.ID}) {
			t.Fatalf("after a crafted post: %q %+v", got.Name, got.Metrics)
		}
	})
}

// The results page lays out each metric in its units, draws each
// treatment's difference interval, and names a regressed guardrail at the
// top; nothing of the metrics is left to "Further analyses".
func TestResultsShowMetrics(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	rev := e.metric(app.ID, `{"key":"rev","name":"Revenue per user","type":"sum","eventId":"pay","property":"amount"}`)
	signed := e.metric(app.ID, `{"key":"signed","name":"Signed up","type":"conversion","eventId":"signup"}`)
	c := e.campaign(app.ID, "Checkout", "buy")
	e.withMetrics(app.ID, c, []int64{signed.ID}, []int64{rev.ID})
	e.start(app.ID, c.ID)
	// The control's users pay 20 every other one; the treatment's pay 5
	// one in ten: revenue falls by about 9.5 per user.
	var events []*store.EventInput
	for u := 0; u < 400; u++ {
		user := fmt.Sprintf("u%d", u)
		raw, err := e.db.Variant(e.ctx, app.ID, c.ID, &store.VariantRequest{UserID: user}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ans struct {
			VariantID int64 `json:"variantId"`
		}
		json.Unmarshal(raw, &ans)
		control := ans.VariantID == c.Variants[0].ID
		if control && u%2 == 0 || !control && u%10 == 0 {
			amount := 20
			if !control {
				amount = 5
			}
			events = append(events, &store.EventInput{EventID: "pay", UserID: user, Metadata: json.RawMessage(fmt.Sprintf(`{"amount":%d}`, amount))})
		}
		if u%3 == 0 {
			events = append(events, &store.EventInput{EventID: "signup", UserID: user})
		}
	}
	if _, err := e.db.LogEvents(e.ctx, app.ID, events); err != nil {
		t.Fatal(err)
	}
	a, err := e.db.CampaignAnalytics(e.ctx, app.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Metrics) != 2 || a.Metrics[1].Role != store.RoleGuardrail || !a.Metrics[1].Variants[1].Regressed {
		t.Fatalf("the revenue guardrail did not regress: %+v", a.Metrics)
	}
	p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c.ID))
	wantStatus(t, p, http.StatusOK)
	body := htmlUnescape(p.body)

	banner := part(t, body, `id="guardrails"`, "</div>")
	if !strings.Contains(banner, fmt.Sprintf(`<a href="#metric-%d">Revenue per user</a>: V1 (-`, rev.ID)) {
		t.Fatalf("banner does not name the metric and the variant:\n%s", banner)
	}
	if strings.Index(body, `id="guardrails"`) > strings.Index(body, `id="verdict"`) {
		t.Fatal("the guardrail banner is not at the top")
	}
	if strings.Contains(body, "Further analyses") {
		t.Fatalf("metrics listed raw:\n%s", body)
	}
	for _, m := range a.Metrics {
		sec := part(t, body, fmt.Sprintf(`id="metric-%d"`, m.MetricID), "</section>")
		want := []string{fmt.Sprintf(`data-role="%s"`, m.Role), m.Name,
			fmt.Sprintf(`aria-label="%s: difference from the control with 95%% interval"`, m.Name)}
		if m.Role == store.RoleGuardrail {
			want = append(want, `<span class="badge s-failed">guardrail</span>`, `class="regressed"`, `<span class="badge s-failed">regressed</span>`, "· regressed</text>")
		} else {
			want = append(want, `<span class="badge">secondary</span>`)
		}
		for _, v := range m.Variants {
			want = append(want, fmt.Sprintf(`data-k="users" data-value="%d"`, v.Users), `data-k="mean" data-value="`+exactOf(v.Mean)+`"`)
			if v.DifferenceInterval != nil {
				iv := *v.DifferenceInterval
				want = append(want, `data-k="differenceInterval" data-value="`+exactOf(&iv[0])+","+exactOf(&iv[1])+`"`,
					`data-k="pValue" data-value="`+exactOf(v.PValue)+`"`, `data-k="uplift" data-value="`+exactOf(v.Uplift)+`"`)
			}
		}
		if m.Type == store.MetricConversion {
			// In the units of a conversion: a share of users, points apart.
			want = append(want, fmt.Sprintf(">%.2f%%</td>", *m.Variants[0].Mean*100), fmt.Sprintf("%+.2f pts", *m.Variants[1].Difference*100))
		} else {
			want = append(want, fmt.Sprintf(">%.2f</td>", *m.Variants[0].Mean))
		}
		if n := strings.Count(sec, `<svg xmlns="http://www.w3.org/2000/svg" class="chart `); n != 2 {
			t.Fatalf("%s: %d charts, want the wide and the narrow drawing", m.Name, n)
		}
		for _, w := range want {
			if !strings.Contains(sec, w) {
				t.Fatalf("%s lacks %q:\n%s", m.Name, w, sec)
			}
		}
	}

	t.Run("NoMetricsNoSections", func(t *testing.T) {
		plain := e.campaign(app.ID, "Plain", "buy")
		p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, plain.ID))
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.body, `id="guardrails"`) || strings.Contains(p.body, "metric-result") || strings.Contains(p.body, "Further analyses") {
			t.Fatalf("a campaign without metrics shows some:\n%s", p.body)
		}
	})
}

// exactOf is a number as the page's data-value attributes hold it.
func exactOf(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// part is the page from the first from up to the next end.
func part(t *testing.T, body, from, end string) string {
	t.Helper()
	i := strings.Index(body, from)
	if i < 0 {
		t.Fatalf("page lacks %q:\n%s", from, body)
	}
	j := strings.Index(body[i:], end)
	if j < 0 {
		t.Fatalf("no %q after %q", end, from)
	}
	return body[i : i+j]
}
