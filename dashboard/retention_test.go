package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"service/store"
)

// TestRetentionSettings: the settings page shows an app's retentions,
// empty while it follows the server; saving sets them, empty sets one back,
// a bad value is told beside its field and changes nothing, and each
// change is audited as the signed-in user's.
func TestRetentionSettings(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	page := fmt.Sprintf("/apps/%d/settings", app.ID)
	wantContains(t, b.get(page), `name="eventRetentionDays" inputmode="numeric" value=""`, `name="formRetentionDays" inputmode="numeric" value=""`)
	form := func(events, forms string) url.Values {
		return url.Values{"plan": {"free"}, "rateLimit": {""}, "allowedOrigins": {"*"}, "eventRetentionDays": {events}, "formRetentionDays": {forms}}
	}
	retention := func() string {
		t.Helper()
		a, err := e.db.FindAppSettings(e.ctx, app.ID)
		if err != nil {
			t.Fatal(err)
		}
		s := func(d *int) string {
			if d == nil {
				return "null"
			}
			return fmt.Sprint(*d)
		}
		return s(a.EventRetentionDays) + "/" + s(a.FormRetentionDays)
	}

	wantStatus(t, b.post(page, form("30", " 7 ")), http.StatusSeeOther)
	if got := retention(); got != "30/7" {
		t.Fatalf("retention %s, want 30/7", got)
	}
	wantContains(t, b.get(page), `name="eventRetentionDays" inputmode="numeric" value="30"`, `name="formRetentionDays" inputmode="numeric" value="7"`)
	wantStatus(t, b.post(page, form("", "3650")), http.StatusSeeOther)
	if got := retention(); got != "null/3650" {
		t.Fatalf("retention %s, want null/3650", got)
	}

	for _, tc := range []struct{ events, forms, bad string }{
		{"0", "5", "eventRetentionDays"},
		{"5", "3651", "formRetentionDays"},
		{"1.5", "5", "eventRetentionDays"},
		{"5", "thirty", "formRetentionDays"},
		{"-1", "5", "eventRetentionDays"},
	} {
		p := b.post(page, form(tc.events, tc.forms))
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, tc.bad, "must be a whole number of days from 1 to 3650, or empty") {
			t.Fatalf("%s/%s: no error beside %s:\n%s", tc.events, tc.forms, tc.bad, p.body)
		}
		// What was typed stays in the form, to be corrected.
		wantContains(t, p, fmt.Sprintf(`name="eventRetentionDays" inputmode="numeric" value="%s"`, tc.events))
		if got := retention(); got != "null/3650" {
			t.Fatalf("%s/%s: a refused form wrote %s", tc.events, tc.forms, got)
		}
	}

	entries, err := e.db.FindAuditLog(e.ctx, store.AuditFilter{AppID: app.ID, Action: "app.updated"})
	if err != nil || len(entries) != 2 {
		t.Fatalf("%d app.updated entries, %v; want 2", len(entries), err)
	}
	c := entries[0].Changes
	if entries[0].Actor.Type != store.ActorUser || entries[0].Actor.Name != testEmail ||
		string(c["eventRetentionDays"].Before) != "30" || string(c["eventRetentionDays"].After) != "null" ||
		string(c["formRetentionDays"].Before) != "7" || string(c["formRetentionDays"].After) != "3650" {
		t.Fatalf("entry: actor %+v changes %+v", entries[0].Actor, c)
	}
}

// TestRetentionSettingsInChromium fills the retentions in on the settings
// page in a real browser and saves: the page comes back with the notice
// and the values, and the app keeps them.
func TestRetentionSettingsInChromium(t *testing.T) {
	run := chrome(t)
	e := newEnv(t).withUser()
	app := e.app("Shop")
	page := fmt.Sprintf("%s/apps/%d/settings", e.srv.URL, app.ID)
	var events, forms, notice string
	run(t, chromedp.Navigate(e.srv.URL+"/signin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), testEmail),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testPassword),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/apps"]`)),
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`input[name=eventRetentionDays]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=eventRetentionDays]`), "45"),
		chromedp.SendKeys(chromedp.CSS(`input[name=formRetentionDays]`), "14"),
		chromedp.Click(chromedp.CSS(`form[action$="/settings"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.notice, [role=status]`)),
		capture(chromedp.Value(chromedp.CSS(`input[name=eventRetentionDays]`)), &events),
		capture(chromedp.Value(chromedp.CSS(`input[name=formRetentionDays]`)), &forms),
		capture(chromedp.Text(chromedp.CSS(`main`)), &notice))
	if events != "45" || forms != "14" || !strings.Contains(notice, "Settings saved.") {
		t.Fatalf("after saving: events %q forms %q, page %q", events, forms, notice)
	}
	a, err := e.db.FindAppSettings(e.ctx, app.ID)
	if err != nil || a.EventRetentionDays == nil || *a.EventRetentionDays != 45 || a.FormRetentionDays == nil || *a.FormRetentionDays != 14 {
		t.Fatalf("app %+v, %v; want 45 and 14 days", a, err)
	}
}
