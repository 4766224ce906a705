package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"service/store"
)

func audienceForm() url.Values {
	return url.Values{"name": {"Active Germans"}, "description": {""}, "logic": {"AND"}, "action": {"save"},
		"rules[0].ruleType": {"attribute"}, "rules[0].field": {"country"}, "rules[0].operator": {"equals"},
		"rules[0].value": {"DE"}, "rules[0].valueType": {"string"},
		"rules[1].ruleType": {"event"}, "rules[1].eventId": {"login"}, "rules[1].operator": {"performed_within"},
		"rules[1].timeWindow.value": {"7"}, "rules[1].timeWindow.unit": {"days"}, "rules[1].comparison": {"at_least"}, "rules[1].count": {""}}
}

func TestAudienceBuilder(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	base := fmt.Sprintf("/apps/%d/audiences", app.ID)
	wantContains(t, b.get(base+"/new"), `name="rules[0].field"`, `<option value="not_exists">`)

	for _, tc := range []struct {
		name          string
		set           map[string]string
		field, reason string
	}{
		{"NameRequired", map[string]string{"name": ""}, "name", "is required"},
		{"FieldRequired", map[string]string{"rules[0].field": ""}, "rules[0].field", "is required"},
		{"NumberTyped", map[string]string{"rules[0].valueType": "number"}, "rules[0].value", "must be a number"},
		{"NaNIsNoNumber", map[string]string{"rules[0].valueType": "number", "rules[0].value": "NaN"}, "rules[0].value", "must be a number"},
		{"ListTyped", map[string]string{"rules[0].operator": "in", "rules[0].value": "1, x", "rules[0].valueType": "number"}, "rules[0].value", "“x” is not a number"},
		{"EventIDRequired", map[string]string{"rules[1].eventId": ""}, "rules[1].eventId", "is required"},
		{"WindowPositive", map[string]string{"rules[1].timeWindow.value": "-2"}, "rules[1].timeWindow.value", "must be a positive number"},
		{"WindowRequired", map[string]string{"rules[1].timeWindow.value": ""}, "rules[1].timeWindow.value", "is required"},
		{"CountRequired", map[string]string{"rules[1].operator": "performed_count"}, "rules[1].count", "is required for operator performed_count"},
		{"CountWhole", map[string]string{"rules[1].operator": "performed_count", "rules[1].count": "2.5"}, "rules[1].count", "must be a non-negative integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := audienceForm()
			for k, v := range tc.set {
				f.Set(k, v)
			}
			p := b.post(base, f)
			wantStatus(t, p, http.StatusUnprocessableEntity)
			// The window's two inputs share one line; its errors follow them.
			if !errBeside(p.body, tc.field, tc.reason) && !(strings.Contains(tc.field, "timeWindow") && errInRule(p.body, 1, tc.reason)) {
				t.Fatalf("no %q beside %s:\n%s", tc.reason, tc.field, p.body)
			}
		})
	}
	t.Run("AddAndRemoveRules", func(t *testing.T) {
		f := audienceForm()
		f.Set("action", "addevent")
		p := b.post(base, f)
		wantContains(t, p, `name="rules[2].eventId"`)
		f.Set("action", "removerule:0")
		p = b.post(base, f)
		wantContains(t, p, `name="rules[0].eventId" value="login"`)
		if strings.Contains(p.body, `name="rules[1]`) {
			t.Fatal("rule not removed")
		}
	})
	if list, _, _ := e.db.FindAudiences(e.ctx, app.ID, "", store.ListOptions{Limit: 5, Page: 1}); len(list) != 0 {
		t.Fatal("a refused form created an audience")
	}

	// Every operator and unit builds a definition the engine accepts.
	t.Run("EveryOperator", func(t *testing.T) {
		for _, op := range []string{"equals", "not_equals", "contains", "not_contains", "starts_with", "ends_with", "greater_than",
			"greater_than_or_equal", "less_than", "less_than_or_equal", "in", "not_in", "exists", "not_exists"} {
			f := audienceForm()
			f.Set("name", "op "+op)
			f.Set("rules[0].operator", op)
			f.Set("logic", "OR")
			if p := b.post(base, f); p.status != http.StatusSeeOther {
				t.Errorf("attribute %s: %d\n%s", op, p.status, p.body)
			}
		}
		for _, op := range []string{"has_performed", "has_not_performed", "performed_within", "not_performed_within", "performed_count"} {
			for _, unit := range []string{"minutes", "hours", "days", "weeks"} {
				f := audienceForm()
				f.Set("name", "ev "+op+" "+unit)
				f.Set("rules[1].operator", op)
				f.Set("rules[1].timeWindow.unit", unit)
				f.Set("rules[1].count", "3")
				f.Set("rules[1].comparison", "exactly")
				if p := b.post(base, f); p.status != http.StatusSeeOther {
					t.Errorf("event %s %s: %d\n%s", op, unit, p.status, p.body)
				}
			}
		}
	})

	f := audienceForm()
	f.Set("name", "Germans who log in")
	p := b.post(base, f)
	wantStatus(t, p, http.StatusSeeOther)
	list, _, _ := e.db.FindAudiences(e.ctx, app.ID, "", store.ListOptions{Limit: 100, Page: 1})
	var a *store.Audience
	for _, x := range list {
		if x.Name == "Germans who log in" {
			a = x
		}
	}
	var def map[string]any
	json.Unmarshal(a.Definition, &def)
	if def["logic"] != "AND" || len(def["rules"].([]any)) != 2 || a.LastCalculatedAt == nil {
		t.Fatalf("%s %+v", a.Definition, a)
	}
	page := fmt.Sprintf("%s/%d", base, a.ID)

	// The builder reads the stored definition back into its rows.
	wantContains(t, b.get(page), `name="rules[0].field" value="country"`, `name="rules[1].timeWindow.value" value="7"`, `<strong id="customer-count">0</strong>`)

	// One matching user, one who fails the event rule, one unknown.
	e.db.IdentifyUser(e.ctx, app.ID, "hans", map[string]any{"country": "DE"})
	e.db.IdentifyUser(e.ctx, app.ID, "greta", map[string]any{"country": "DE"})
	e.db.LogEvent(e.ctx, app.ID, &store.EventInput{EventID: "login", UserID: "hans"})
	t.Run("CheckAUser", func(t *testing.T) {
		p := b.get(page + "/check?userId=hans")
		wantStatus(t, p, http.StatusOK)
		wantContains(t, p, `id="check-result" class="notice"`, "<strong>hans</strong> matches this audience.")
		p = b.get(page + "/check?userId=greta")
		wantContains(t, p, `id="check-result" class="alert"`, "<strong>greta</strong> does not match. Rule 2 failed: login performed within the last 7 days.",
			`data-rule="0"`, "holds</span>", "fails</span>")
		p = b.get(page + "/check?userId=nobody")
		wantContains(t, p, "the app has never seen this userId")
		p = b.get(page + "/check?userId=")
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantContains(t, p, "is required")
	})
	t.Run("RecountArchiveUnarchive", func(t *testing.T) {
		wantStatus(t, b.post(page+"/recount", nil), http.StatusSeeOther)
		wantContains(t, b.get(page), `<strong id="customer-count">1</strong>`)
		wantContains(t, b.get(base), "Germans who log in")
		wantStatus(t, b.post(page+"/status", url.Values{"status": {"archived"}}), http.StatusSeeOther)
		got, _ := e.db.FindAudienceByID(e.ctx, app.ID, a.ID)
		if got.Status != "archived" {
			t.Fatal(got.Status)
		}
		wantContains(t, b.get(base+"?status=archived"), "Germans who log in")
		wantContains(t, b.get(page), "Unarchive</button>")
		wantStatus(t, b.post(page+"/status", url.Values{"status": {"active"}}), http.StatusSeeOther)
		wantStatus(t, b.post(page+"/status", url.Values{"status": {"gone"}}), http.StatusUnprocessableEntity)
	})
	t.Run("CampaignsTargetingIt", func(t *testing.T) {
		wantContains(t, b.get(page), "No campaign targets this audience.")
		c := e.campaign(app.ID, "targeted", "buy")
		if _, err := e.db.UpdateCampaign(e.ctx, app.ID, c.ID, store.CampaignInput{AudienceID: []byte(fmt.Sprint(a.ID))}); err != nil {
			t.Fatal(err)
		}
		wantContains(t, b.get(page), fmt.Sprintf(`<a href="/apps/%d/campaigns/%d">targeted</a>`, app.ID, c.ID))
	})
}

func TestEventExplorerAndTimeline(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	clock := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	e.db.Now = func() time.Time { return clock }
	e.now = clock.Add(time.Hour)
	log := func(at time.Time, ev, user string) {
		clock = at
		if _, err := e.db.LogEvent(e.ctx, app.ID, &store.EventInput{EventID: ev, UserID: user, Metadata: []byte(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * time.Hour
	for i := 0; i < 60; i++ {
		log(time.Date(2025, 3, 10, 11, 0, 0, 0, time.UTC).Add(-time.Duration(i)*time.Minute), "view", "ann")
	}
	log(time.Date(2025, 3, 5, 9, 0, 0, 0, time.UTC), "buy", "bob")
	log(time.Date(2025, 2, 20, 9, 0, 0, 0, time.UTC), "buy", "ann")
	log(time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC), "buy", "bob") // older than 30 days
	_ = day
	base := fmt.Sprintf("/apps/%d/events", app.ID)

	p := b.get(base)
	wantStatus(t, p, http.StatusOK)
	if n := strings.Count(p.body, `<tr data-id=`); n != 50 {
		t.Fatalf("%d events on the first page, want 50", n)
	}
	// Counts per event id over 24 h, 7 d and 30 d.
	wantContains(t, p, `class="mono">view</a></td><td class="num">60</td><td class="num">60</td><td class="num">60</td>`,
		`class="mono">buy</a></td><td class="num">0</td><td class="num">1</td><td class="num">2</td>`, "Older →")
	// Paging with before: the next page starts after the last shown.
	older := strings.ReplaceAll(between(p.body, `<a class="btn small" href="`, `" rel="next">`), "&amp;", "&")
	p2 := b.get(older)
	if n := strings.Count(p2.body, `<tr data-id=`); n != 13 {
		t.Fatalf("%d events on page 2, want 13", n)
	}
	wantContains(t, p2, "← Newest")

	for _, tc := range []struct {
		query string
		want  int
	}{
		{"?eventId=buy", 3},
		{"?eventId=buy&userId=bob", 2},
		{"?userId=bob&from=2025-03-01", 1},
		{"?from=2025-02-01&to=2025-02-28", 1},
		{"?eventId=nothing", 0},
	} {
		p := b.get(base + tc.query)
		wantStatus(t, p, http.StatusOK)
		if n := strings.Count(p.body, `<tr data-id=`); n != tc.want {
			t.Errorf("%s: %d events, want %d", tc.query, n, tc.want)
		}
	}
	p = b.get(base + "?from=yesterday")
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if !errBeside(p.body, "from", "must be a date") {
		t.Fatalf("no error beside from:\n%s", p.body)
	}

	t.Run("Timeline", func(t *testing.T) {
		e.db.IdentifyUser(e.ctx, app.ID, "bob", map[string]any{"plan": "pro"})
		c := e.campaign(app.ID, "promo", "buy")
		e.start(app.ID, c.ID)
		e.db.Variant(e.ctx, app.ID, c.ID, &store.VariantRequest{UserID: "bob"}, nil)
		p := b.get(fmt.Sprintf("/apps/%d/users?userId=bob", app.ID))
		wantStatus(t, p, http.StatusOK)
		wantContains(t, p, `<th class="mono">plan</th><td class="mono">&#34;pro&#34;</td>`, ">promo</a>", `<td class="mono">buy</td>`)
		if n := strings.Count(p.body, `<tr data-id=`); n != 2 {
			t.Fatalf("%d events for bob", n)
		}
		wantStatus(t, b.get(fmt.Sprintf("/apps/%d/users?userId=nobody", app.ID)), http.StatusNotFound)
	})
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	j := strings.Index(s, b)
	if j < 0 {
		return ""
	}
	return s[:j]
}

func TestAllowedOriginsSettings(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	page := fmt.Sprintf("/apps/%d/settings", app.ID)
	wantContains(t, b.get(page), `name="allowedOrigins"`, "*</textarea>")
	p := b.post(page, url.Values{"allowedOrigins": {"ftp://nope"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if !errBeside(p.body, "allowedOrigins", "invalid origin ftp://nope") {
		t.Fatalf("no error beside the field:\n%s", p.body)
	}
	wantStatus(t, b.post(page, url.Values{"allowedOrigins": {"https://Shop.example.com\r\nhttp://localhost:3000"}}), http.StatusSeeOther)
	got, _ := e.db.AllowedOrigins(e.ctx, app.ID)
	if strings.Join(got, ",") != "https://shop.example.com,http://localhost:3000" {
		t.Fatalf("origins=%v", got)
	}
	wantContains(t, b.get(page), "https://shop.example.com\nhttp://localhost:3000</textarea>")
}

// errInRule reports whether rule i's fieldset shows reason as an error.
func errInRule(body string, i int, reason string) bool {
	f := between(body, fmt.Sprintf(`data-rule="%d"`, i), "</fieldset>")
	return strings.Contains(f, `class="ferr">`+reason)
}

// Numbers typed the way people type them (".5", "+5", "007") are saved as
// the numbers they mean, never dropped from the definition.
func TestAudienceBuilderNumberForms(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	base := fmt.Sprintf("/apps/%d/audiences", app.ID)
	for i, tc := range []struct{ typed, want string }{{".5", "0.5"}, {"+5", "5"}, {"007", "7"}, {"5.", "5"}} {
		f := audienceForm()
		f.Set("name", fmt.Sprint("N", i))
		f.Set("rules[0].field", "age")
		f.Set("rules[0].operator", "greater_than")
		f.Set("rules[0].valueType", "number")
		f.Set("rules[0].value", tc.typed)
		if p := b.post(base, f); p.status >= 400 {
			t.Fatalf("%q: status %d:\n%s", tc.typed, p.status, p.body)
		}
		list, _, err := e.db.FindAudiences(e.ctx, app.ID, "", store.ListOptions{Limit: 1, Page: 1})
		if err != nil || len(list) != 1 {
			t.Fatalf("%q: %v %v", tc.typed, list, err)
		}
		if got := string(list[0].Definition); !strings.Contains(got, `"value":`+tc.want+`}`) && !strings.Contains(got, `"value":`+tc.want+`,`) {
			t.Fatalf("%q stored as %s, want value %s", tc.typed, got, tc.want)
		}
	}
}

// A draft whose audience was archived since still shows that audience as
// chosen, so saving the draft cannot silently retarget it at everyone.
func TestCampaignEditorKeepsArchivedAudience(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	a := e.audience(app.ID, "Germans", `{"logic":"AND","rules":[{"field":"country","operator":"equals","value":"DE"}]}`)
	c := e.campaign(app.ID, "Checkout", "purchase")
	aud, _ := json.Marshal(a.ID)
	if _, err := e.db.UpdateCampaign(e.ctx, app.ID, c.ID, store.CampaignInput{AudienceID: aud}); err != nil {
		t.Fatal(err)
	}
	archived := store.AudienceArchived
	if _, err := e.db.UpdateAudience(e.ctx, app.ID, a.ID, store.AudienceInput{Status: &archived}); err != nil {
		t.Fatal(err)
	}
	wantContains(t, b.get(fmt.Sprintf("/apps/%d/campaigns/%d", app.ID, c.ID)), fmt.Sprintf(`<option value="%d" selected>Germans</option>`, a.ID))
}
