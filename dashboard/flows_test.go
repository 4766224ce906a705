package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"service/store"
)

func TestAppsPage(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	wantContains(t, b.get("/apps"), "No apps yet")

	for _, tc := range []struct {
		name          string
		form          url.Values
		field, reason string
	}{
		{"NameRequired", url.Values{"name": {" "}, "plan": {"free"}}, "name", "is required"},
		{"RateNotANumber", url.Values{"name": {"x"}, "plan": {"free"}, "rateLimit": {"lots"}}, "rateLimit", "must be a whole number"},
		{"PlanUnknown", url.Values{"name": {"x"}, "plan": {"platinum"}}, "plan", "plan must be one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := b.post("/apps", tc.form)
			wantStatus(t, p, http.StatusUnprocessableEntity)
			if !errBeside(p.body, tc.field, tc.reason) {
				t.Fatalf("no %q beside %s:\n%s", tc.reason, tc.field, p.body)
			}
		})
	}
	p := b.post("/apps", url.Values{"name": {"Shop"}, "plan": {"pro"}, "rateLimit": {"1234"}})
	wantStatus(t, p, http.StatusSeeOther)
	apps, _ := e.db.FindAllApps(e.ctx)
	if len(apps) != 1 || apps[0].Name != "Shop" || apps[0].Plan != "pro" || apps[0].RateLimit != 1234 {
		t.Fatalf("apps=%+v", apps)
	}
	if loc := p.header.Get("Location"); loc != fmt.Sprintf("/apps/%d/settings/keys?notice=app_created", apps[0].ID) {
		t.Fatalf("Location=%q", loc)
	}
	other := e.app("Other")
	t.Run("Switch", func(t *testing.T) {
		p := b.get(fmt.Sprintf("/apps/switch?app=%d&section=webhooks", other.ID))
		if loc := p.header.Get("Location"); loc != fmt.Sprintf("/apps/%d/webhooks", other.ID) {
			t.Fatalf("Location=%q", loc)
		}
		wantStatus(t, b.get("/apps/switch?app=999"), http.StatusNotFound)
	})
	t.Run("NavigationShowsAppAndSection", func(t *testing.T) {
		p := b.get(fmt.Sprintf("/apps/%d/webhooks", other.ID))
		wantContains(t, p, `<title>Webhooks · Other · Service</title>`, `aria-current="page" class="current">Webhooks</a>`,
			fmt.Sprintf(`<option value="%d" selected>Other</option>`, other.ID))
	})
}

var secretRe = regexp.MustCompile(`id="key-secret" class="mono" readonly value="(sk_[a-z]_[0-9a-f]+)"`)

func TestKeysPage(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("Shop")
	base := fmt.Sprintf("/apps/%d/settings/keys", app.ID)

	p := b.post(base, url.Values{"name": {"backend"}, "role": {"owner"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if !strings.Contains(p.body, "role must be one of admin, read, client") {
		t.Fatalf("role refusal not shown:\n%s", p.body)
	}

	p = b.post(base, url.Values{"name": {"backend"}, "role": {"admin"}})
	wantStatus(t, p, http.StatusCreated)
	m := secretRe.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no key shown:\n%s", p.body)
	}
	plaintext := m[1]
	wantContains(t, p, `data-copy="key-secret"`, plaintext[:10]+"…")

	// Shown once: the list afterwards has the prefix only.
	list := b.get(base)
	if strings.Contains(list.body, plaintext) || !strings.Contains(list.body, plaintext[:10]) {
		t.Fatal("the list shows the whole key, or not its prefix")
	}

	api := func() int {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/v1/apps/%d/content", e.srv.URL, app.ID), nil)
		req.Header.Set("Authorization", "Bearer "+plaintext)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := api(); got != http.StatusOK {
		t.Fatalf("API with the new key: %d", got)
	}

	keys, _ := e.db.FindKeys(e.ctx, app.ID)
	confirm := b.get(fmt.Sprintf("%s/%d/revoke", base, keys[0].ID))
	wantStatus(t, confirm, http.StatusOK)
	wantContains(t, confirm, "Revoke key", "cannot be undone")
	if keys, _ := e.db.FindKeys(e.ctx, app.ID); keys[0].RevokedAt != nil {
		t.Fatal("the confirmation page revoked the key")
	}
	wantStatus(t, b.post(fmt.Sprintf("%s/%d/revoke", base, keys[0].ID), nil), http.StatusSeeOther)
	if keys, _ := e.db.FindKeys(e.ctx, app.ID); keys[0].RevokedAt == nil {
		t.Fatal("not revoked")
	}
	if got := api(); got != http.StatusUnauthorized {
		t.Fatalf("API with the revoked key: %d", got)
	}
	wantContains(t, b.get(base), `class="revoked"`)
}

func TestContentEditor(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("Shop")
	base := fmt.Sprintf("/apps/%d/content", app.ID)

	wantContains(t, b.get(base+"/new"), `name="items[0].type" value="heading"`, `name="items[1].type" value="text"`)

	t.Run("AddAndRemoveWithoutJS", func(t *testing.T) {
		form := url.Values{"name": {"x"}, "items[0].type": {"heading"}, "items[0].content": {"Hi"}, "action": {"add:form"}}
		p := b.post(base, form)
		wantStatus(t, p, http.StatusOK)
		wantContains(t, p, `name="items[1].fields[0].name" data-f="name" value="email"`, `>Hi</textarea>`, "Unsaved changes")
		form.Set("action", "up:1")
		form.Set("items[1].type", "form")
		form.Set("items[1].fields[0].type", "email")
		form.Set("items[1].fields[0].name", "email")
		p = b.post(base, form)
		wantContains(t, p, `name="items[0].type" value="form"`, `name="items[1].type" value="heading"`)
		form.Set("action", "remove:0") // the heading, as the form still lists it first
		p = b.post(base, form)
		wantContains(t, p, `name="items[0].type" value="form"`)
		if strings.Contains(p.body, `items[1].type`) {
			t.Fatal("item not removed")
		}
		if n, _, _ := e.db.FindContents(e.ctx, app.ID, "", store.ListOptions{Limit: 10, Page: 1}); len(n) != 0 {
			t.Fatal("an editor button saved the block")
		}
	})

	t.Run("ErrorsBesideFields", func(t *testing.T) {
		p := b.post(base, url.Values{"name": {""}, "action": {"save"},
			"items[0].type": {"heading"}, "items[0].content": {""},
			"items[1].type": {"image"}, "items[1].url": {"ftp://x"},
			"items[2].type": {"form"}, "items[2].fields[0].type": {"select"}, "items[2].fields[0].name": {"c"},
			"items[2].fields[0].minLength": {"two"}, "items[2].fields[1].type": {"text"}, "items[2].fields[1].name": {"c"},
			"items[3].type": {"text"}, "items[3].content": {"x"}, "items[3].styles": {"[1]"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		for field, reason := range map[string]string{"items[2].fields[0].minLength": "must be a whole number", "items[3].styles": "must be a JSON object"} {
			if !strings.Contains(p.body, reason) {
				t.Errorf("no %q for %s", reason, field)
			}
		}
		// Fix the editor-only errors; the API's rules speak next.
		p = b.post(base, url.Values{"name": {""}, "action": {"save"},
			"items[0].type": {"heading"}, "items[0].content": {""},
			"items[1].type": {"image"}, "items[1].url": {"ftp://x"},
			"items[2].type": {"form"}, "items[2].fields[0].type": {"select"}, "items[2].fields[0].name": {"c"},
			"items[2].fields[1].type": {"text"}, "items[2].fields[1].name": {"c"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		for field, reason := range map[string]string{
			"name":                    "is required",
			"items[0].content":        "is required",
			"items[1].url":            "must be an http(s) URL or a path",
			"items[2].fields[1].name": "must be unique within the form",
		} {
			if !errBeside(p.body, field, reason) {
				t.Errorf("no %q beside %s", reason, field)
			}
		}
		if !strings.Contains(p.body, "is required for a select field") {
			t.Error("select options error missing")
		}
	})

	p := b.post(base, url.Values{"name": {"Signup"}, "action": {"save"},
		"items[0].type": {"heading"}, "items[0].content": {"Join us"},
		"items[1].type": {"form"}, "items[1].fields[0].type": {"email"}, "items[1].fields[0].name": {"email"},
		"items[1].fields[0].required": {"1"}, "items[1].fields[0].maxLength": {"200"},
		"items[1].fields[1].type": {"select"}, "items[1].fields[1].name": {"size"}, "items[1].fields[1].options": {"S, M ,L"},
		"items[1].submitLabel": {"Sign up"}, "items[1].styles": {`{"padding":"8px"}`}})
	wantStatus(t, p, http.StatusSeeOther)
	list, _, _ := e.db.FindContents(e.ctx, app.ID, "", store.ListOptions{Limit: 10, Page: 1})
	if len(list) != 1 {
		t.Fatalf("blocks=%d", len(list))
	}
	c := list[0]
	want := `[{"type":"heading","content":"Join us"},{"type":"form","fields":[{"name":"email","type":"email","required":true,"maxLength":200},{"name":"size","type":"select","options":["S","M","L"]}],"submitLabel":"Sign up","styles":{"padding":"8px"}}]`
	if string(c.Items) != want {
		t.Fatalf("items=%s\nwant  %s", c.Items, want)
	}
	edit := b.get(fmt.Sprintf("%s/%d", base, c.ID))
	wantContains(t, edit, `<h2 class="pv-heading">Join us</h2>`, `<option>M</option>`, `class="pv-submit">Sign up</button>`, ">Publish</button>")

	// Round trip: saving the page unchanged stores the same items.
	form := url.Values{"name": {"Signup"}, "action": {"save"}}
	for _, m := range regexp.MustCompile(`name="(items\[[^"]+)"(?: data-[kf]="[^"]*")? value="([^"]*)"`).FindAllStringSubmatch(edit.body, -1) {
		form.Set(m[1], htmlUnescape(m[2]))
	}
	form.Del("items[1].fields[1].required") // the regexp took every checkbox's value
	form.Set("items[1].fields[0].required", "1")
	form.Set("items[1].fields[0].type", "email")
	form.Set("items[1].fields[1].type", "select")
	form.Set("items[0].content", "Join us")
	wantStatus(t, b.post(fmt.Sprintf("%s/%d", base, c.ID), form), http.StatusSeeOther)
	if again, _ := e.db.FindContentByID(e.ctx, app.ID, c.ID); string(again.Items) != want {
		t.Fatalf("after an unchanged save: %s", again.Items)
	}

	status := func(s string) page { return b.post(fmt.Sprintf("%s/%d/status", base, c.ID), url.Values{"status": {s}}) }
	wantStatus(t, status("published"), http.StatusSeeOther)
	wantContains(t, b.get(fmt.Sprintf("%s/%d", base, c.ID)), `badge s-published">published`, ">Unpublish</button>", ">Archive</button>")

	t.Run("RefusalShown", func(t *testing.T) {
		var in store.CampaignInput
		json.Unmarshal([]byte(fmt.Sprintf(`{"name":"c","goalEventId":"buy","variants":[{"name":"A","contentViewId":%d,"trafficAllocation":50,"isControl":true},{"name":"B","contentViewId":%d,"trafficAllocation":50}]}`, c.ID, c.ID)), &in)
		if _, err := e.db.CreateCampaign(e.ctx, app.ID, 0, in); err != nil {
			t.Fatal(err)
		}
		p := status("archived")
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantContains(t, p, "content view is used by a draft, active or paused campaign")
	})
	t.Run("StatusOutsideTheMachine", func(t *testing.T) {
		p := status("deleted")
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantContains(t, p, "must be one of draft, published, archived")
	})

	other := e.content(app.ID, "Other", `[{"type":"text","content":"t"}]`)
	otherStatus := func(s string) page {
		return b.post(fmt.Sprintf("%s/%d/status", base, other.ID), url.Values{"status": {s}})
	}
	wantStatus(t, otherStatus("archived"), http.StatusSeeOther)
	wantContains(t, b.get(fmt.Sprintf("%s/%d", base, other.ID)), ">Unarchive</button>")
	wantStatus(t, otherStatus("draft"), http.StatusSeeOther)
	if got, _ := e.db.FindContentByID(e.ctx, app.ID, other.ID); got.Status != "draft" {
		t.Fatalf("unarchived to %s", got.Status)
	}
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&#39;", "'", "&#43;", "+").Replace(s)
}

func TestContentListFiltersAndPages(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("Shop")
	pub := "published"
	for i := 0; i < 25; i++ {
		c := e.content(app.ID, fmt.Sprintf("block-%02d", i), `[]`)
		if i%5 == 0 {
			e.db.UpdateContent(e.ctx, app.ID, c.ID, store.ContentInput{Status: &pub})
		}
	}
	base := fmt.Sprintf("/apps/%d/content", app.ID)
	p := b.get(base)
	if n := strings.Count(p.body, ">block-"); n != 20 {
		t.Fatalf("page 1 rows=%d, want 20", n)
	}
	wantContains(t, p, "1–20 of 25", `href="/apps/1/content?page=2"`, "block-24")
	p = b.get(base + "?page=2")
	if n := strings.Count(p.body, ">block-"); n != 5 {
		t.Fatalf("page 2 rows=%d, want 5", n)
	}
	wantContains(t, p, "block-00", "21–25 of 25")
	p = b.get(base + "?status=published")
	if n := strings.Count(p.body, ">block-"); n != 5 || strings.Contains(p.body, "block-01") {
		t.Fatalf("published filter rows=%d", n)
	}
	wantContains(t, p, `class="current" aria-current="page">Published</a>`)
	wantContains(t, b.get(base+"?status=archived"), "No content blocks with status archived.")
}

func TestWebhookPages(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("Shop")
	base := fmt.Sprintf("/apps/%d/webhooks", app.ID)
	wantContains(t, b.get(base+"/new"), `value="content.published"`, `name="timeoutSeconds" value="30"`)

	p := b.post(base, url.Values{"url": {"not a url"}, "maxRetries": {"99"}, "timeoutSeconds": {"x"}, "headers": {"no colon"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if !strings.Contains(p.body, "must be a whole number") || !strings.Contains(p.body, "each line must be Name: value") {
		t.Fatalf("form-only errors missing:\n%s", p.body)
	}
	p = b.post(base, url.Values{"url": {"ftp://x"}, "maxRetries": {"99"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if !errBeside(p.body, "url", "must be") || !strings.Contains(p.body, "must be a non-empty array of event kinds") ||
		!errBeside(p.body, "maxRetries", "must be between 0 and 10") {
		t.Fatalf("API errors not beside their fields:\n%s", p.body)
	}

	p = b.post(base, url.Values{"url": {"https://hooks.example/in"}, "events": {"content.published", "form.submitted"},
		"headers": {"X-Team: growth"}, "description": {"CRM sync"}})
	wantStatus(t, p, http.StatusCreated)
	secret := regexp.MustCompile(`id="hook-secret" class="mono" readonly value="(whsec_[0-9a-f]+)"`).FindStringSubmatch(p.body)
	if secret == nil {
		t.Fatalf("secret not shown:\n%s", p.body)
	}
	hooks, _, _ := e.db.FindWebhooks(e.ctx, app.ID, store.ListOptions{Limit: 10, Page: 1})
	h := hooks[0]
	if !h.HasSecret || strings.Join(h.Events, ",") != "content.published,form.submitted" || h.Headers["X-Team"] != "growth" || h.TimeoutSeconds != 30 {
		t.Fatalf("webhook=%+v", h)
	}
	hp := fmt.Sprintf("%s/%d", base, h.ID)
	page := b.get(hp)
	if strings.Contains(page.body, secret[1]) {
		t.Fatal("the secret is shown again")
	}
	wantContains(t, page, "No deliveries yet", "X-Team: growth")

	wantStatus(t, b.post(hp+"/test", nil), http.StatusSeeOther)
	page = b.get(hp)
	wantContains(t, page, ">webhook.test<", `badge s-pending">pending`)
	ds, _, _ := e.db.FindDeliveries(e.ctx, app.ID, h.ID, "", store.ListOptions{Limit: 10, Page: 1})
	wantStatus(t, b.post(fmt.Sprintf("%s/deliveries/%d/redeliver", hp, ds[0].ID), nil), http.StatusSeeOther)

	t.Run("Edit", func(t *testing.T) {
		p := b.post(hp, url.Values{"url": {"https://hooks.example/v2"}, "events": {"*"}, "maxRetries": {"5"}, "timeoutSeconds": {"10"}})
		wantStatus(t, p, http.StatusSeeOther)
		got, _ := e.db.FindWebhookByID(e.ctx, app.ID, h.ID)
		if got.URL != "https://hooks.example/v2" || got.MaxRetries != 5 || len(got.Headers) != 0 || got.Events[0] != "*" {
			t.Fatalf("after edit: %+v", got)
		}
	})
	t.Run("RotateSecret", func(t *testing.T) {
		p := b.get(hp)
		wantContains(t, p, `id="rotated-at">never`, `id="previous-expires">none`, `<option value="24h" selected>24 hours</option>`,
			`<option value="0">`, `<option value="1h">`, `<option value="168h">`, "webhook-signature", "raw",
			"docs/api.md#verifying-the-standard-webhooks-signature")
		newSecret := regexp.MustCompile(`id="hook-secret" class="mono" readonly value="([0-9a-f]{64})"`)
		for _, tc := range []struct {
			grace string
			want  time.Duration
			shown string
		}{
			{"1h", time.Hour, "still signs beside the new one until"},
			{"", 24 * time.Hour, "still signs beside the new one until"}, // the store's default
			{"168h", 7 * 24 * time.Hour, "still signs beside the new one until"},
			{"0", 0, "stopped signing at"},
		} {
			p := b.post(hp+"/rotate-secret", url.Values{"gracePeriod": {tc.grace}})
			wantStatus(t, p, http.StatusOK) // rendered in place, not redirected: the secret is in this answer only
			m := newSecret.FindStringSubmatch(p.body)
			if m == nil || m[1] == secret[1] {
				t.Fatalf("grace %q: no new secret shown:\n%s", tc.grace, p.body)
			}
			got, _ := e.db.FindWebhookByID(e.ctx, app.ID, h.ID)
			if got.SecretRotatedAt == nil || got.PreviousSecretExpiresAt == nil ||
				got.PreviousSecretExpiresAt.Sub(got.SecretRotatedAt.Time) != tc.want {
				t.Fatalf("grace %q: rotated=%v previous expires=%v", tc.grace, got.SecretRotatedAt, got.PreviousSecretExpiresAt)
			}
			when := got.PreviousSecretExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC")
			wantContains(t, p, "Secret rotated.", tc.shown+` <span class="nowrap">`+when+"</span>", `id="rotated-at">`+got.SecretRotatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
			if again := b.get(hp); strings.Contains(again.body, m[1]) {
				t.Fatal("the rotated secret is shown again")
			}
		}
		// A grace the store refuses is shown beside the choice, and
		// nothing rotates.
		before, _ := e.db.FindWebhookByID(e.ctx, app.ID, h.ID)
		p = b.post(hp+"/rotate-secret", url.Values{"gracePeriod": {"forever"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "gracePeriod", "must be a number of seconds or a duration") || newSecret.MatchString(p.body) {
			t.Fatalf("refused grace:\n%s", p.body)
		}
		if after, _ := e.db.FindWebhookByID(e.ctx, app.ID, h.ID); !after.SecretRotatedAt.Equal(before.SecretRotatedAt.Time) {
			t.Fatal("a refused rotation rotated")
		}
	})
	t.Run("ReEnable", func(t *testing.T) {
		failed := store.WebhookFailed
		if _, err := e.db.UpdateWebhook(e.ctx, app.ID, h.ID, store.WebhookInput{Status: &failed}); err != nil {
			t.Fatal(err)
		}
		wantContains(t, b.get(hp), ">Re-enable</button>", "waiting for re-enable")
		wantStatus(t, b.post(hp+"/enable", nil), http.StatusSeeOther)
		if got, _ := e.db.FindWebhookByID(e.ctx, app.ID, h.ID); got.Status != store.WebhookActive {
			t.Fatalf("status=%s", got.Status)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		wantContains(t, b.get(hp+"/delete"), "cannot be undone")
		wantStatus(t, b.post(hp+"/delete", nil), http.StatusSeeOther)
		wantStatus(t, b.get(hp), http.StatusNotFound)
	})
}

func TestSubmissionsPages(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("Shop")
	c := e.content(app.ID, "Signup", formItems)
	pub := "published"
	e.db.UpdateContent(e.ctx, app.ID, c.ID, store.ContentInput{Status: &pub})
	for i := 0; i < 30; i++ {
		data := fmt.Sprintf(`{"email":"u%02d@example.com","note":"=HYPERLINK(\"x\")"}`, i)
		if _, err := e.db.SubmitForm(e.ctx, app.ID, store.FormSubmissionInput{ContentViewID: &c.ID, Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	base := fmt.Sprintf("/apps/%d/content/%d/submissions", app.ID, c.ID)
	p := b.get(base)
	if n := strings.Count(p.body, "@example.com</td>"); n != 25 {
		t.Fatalf("page 1 rows=%d, want 25", n)
	}
	wantContains(t, p, "<th>email</th><th>note</th>", "u29@example.com", "1–25 of 30")
	if n := strings.Count(b.get(base+"?page=2").body, "@example.com</td>"); n != 5 {
		t.Fatalf("page 2 rows=%d, want 5", n)
	}
	csv := b.get(base + ".csv")
	wantStatus(t, csv, http.StatusOK)
	if ct := csv.header.Get("Content-Type"); ct != "text/csv; charset=utf-8" || !strings.Contains(csv.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("headers=%v", csv.header)
	}
	lines := strings.Split(strings.TrimSpace(csv.body), "\n")
	if len(lines) != 31 || lines[0] != `"id","submittedAt","userId","sessionId","environment","email","note","data"` {
		t.Fatalf("csv lines=%d header=%q", len(lines), lines[0])
	}
	if !strings.Contains(lines[1], `,"u00@example.com","'=HYPERLINK(""x"")",`) {
		t.Fatalf("first row=%q: oldest first, formula defused", lines[1])
	}
}
