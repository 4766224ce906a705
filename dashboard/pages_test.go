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

const formItems = `[{"type":"heading","content":"Join"},{"type":"form","fields":[{"name":"email","type":"email","required":true},{"name":"note","type":"text"}],"submitLabel":"Send"}]`

// world is two apps, each with a block, a webhook, a key and a delivery,
// so every route can be tried with this app's ids and the other's.
type world struct {
	a, b                 *store.App
	contentA, contentB   *store.ContentView
	hookA, hookB         *store.Webhook
	keyA, keyB           *store.Key
	deliveryA, deliveryB *store.Delivery
}

func (e *env) world() *world {
	e.t.Helper()
	w := &world{a: e.app("A"), b: e.app("B")}
	w.contentA = e.content(w.a.ID, "a block", formItems)
	w.contentB = e.content(w.b.ID, "b block", formItems)
	w.hookA = e.webhook(w.a.ID, "https://a.example/hook")
	w.hookB = e.webhook(w.b.ID, "https://b.example/hook")
	var err error
	if w.keyA, _, err = e.db.CreateKey(e.ctx, w.a.ID, "admin", "ka"); err != nil {
		e.t.Fatal(err)
	}
	if w.keyB, _, err = e.db.CreateKey(e.ctx, w.b.ID, "admin", "kb"); err != nil {
		e.t.Fatal(err)
	}
	if w.deliveryA, err = e.db.SendTestDelivery(e.ctx, w.a.ID, w.hookA.ID); err != nil {
		e.t.Fatal(err)
	}
	if w.deliveryB, err = e.db.SendTestDelivery(e.ctx, w.b.ID, w.hookB.ID); err != nil {
		e.t.Fatal(err)
	}
	return w
}

// route is every page of an app, filled with ids of the given objects.
type route struct{ method, path string }

func routes(app int64, content int64, hook int64, key int64, delivery int64) []route {
	a := fmt.Sprintf("/apps/%d", app)
	c := fmt.Sprintf("%s/content/%d", a, content)
	h := fmt.Sprintf("%s/webhooks/%d", a, hook)
	return []route{
		{"GET", a},
		{"GET", a + "/settings/keys"},
		{"POST", a + "/settings/keys"},
		{"GET", fmt.Sprintf("%s/settings/keys/%d/revoke", a, key)},
		{"POST", fmt.Sprintf("%s/settings/keys/%d/revoke", a, key)},
		{"GET", a + "/content"},
		{"GET", a + "/content/new"},
		{"POST", a + "/content"},
		{"GET", c},
		{"POST", c},
		{"POST", c + "/status"},
		{"GET", c + "/submissions"},
		{"GET", c + "/submissions.csv"},
		{"GET", a + "/webhooks"},
		{"GET", a + "/webhooks/new"},
		{"POST", a + "/webhooks"},
		{"GET", h},
		{"POST", h},
		{"POST", h + "/test"},
		{"POST", h + "/enable"},
		{"POST", h + "/rotate-secret"},
		{"GET", h + "/delete"},
		{"POST", h + "/delete"},
		{"POST", fmt.Sprintf("%s/deliveries/%d/redeliver", h, delivery)},
	}
}

func TestEveryPageNeedsSignIn(t *testing.T) {
	e := newEnv(t).withUser()
	w := e.world()
	all := append(routes(w.a.ID, w.contentA.ID, w.hookA.ID, w.keyA.ID, w.deliveryA.ID),
		route{"GET", "/apps"}, route{"POST", "/apps"}, route{"GET", "/apps/switch?app=1"}, route{"POST", "/signout"})
	b := e.browser()
	for _, r := range all {
		p := b.do(r.method, r.path, url.Values{"name": {"x"}})
		switch r.method {
		case "GET":
			if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/signin?next=") {
				t.Errorf("%s %s: status=%d Location=%q, want sign-in redirect", r.method, r.path, p.status, p.header.Get("Location"))
			}
		default:
			if p.status != http.StatusUnauthorized {
				t.Errorf("%s %s: status=%d, want 401", r.method, r.path, p.status)
			}
		}
	}
	// Nothing was written.
	if keys, _ := e.db.FindKeys(e.ctx, w.a.ID); len(keys) != 1 || keys[0].RevokedAt != nil {
		t.Fatalf("keys changed: %+v", keys)
	}
}

func TestEveryFormNeedsCSRF(t *testing.T) {
	e := newEnv(t)
	w := e.world()
	b := e.signedIn()
	posts := append(routes(w.a.ID, w.contentA.ID, w.hookA.ID, w.keyA.ID, w.deliveryA.ID), route{"POST", "/apps"}, route{"POST", "/signout"})
	for _, r := range posts {
		if r.method != "POST" {
			continue
		}
		for _, tok := range []string{"", "wrong-token"} {
			p := b.do("POST", r.path, url.Values{"csrf": {tok}, "name": {"x"}, "status": {"archived"}, "role": {"admin"}})
			if p.status != http.StatusForbidden {
				t.Errorf("POST %s csrf=%q: status=%d, want 403", r.path, tok, p.status)
			}
		}
	}
	apps, _ := e.db.FindAllApps(e.ctx)
	hooks, _, _ := e.db.FindWebhooks(e.ctx, w.a.ID, store.ListOptions{Limit: 10, Page: 1})
	keys, _ := e.db.FindKeys(e.ctx, w.a.ID)
	c, _ := e.db.FindContentByID(e.ctx, w.a.ID, w.contentA.ID)
	if len(apps) != 2 || len(hooks) != 1 || len(keys) != 1 || keys[0].RevokedAt != nil || c.Status != "draft" || hooks[0].SecretRotatedAt != nil {
		t.Fatalf("a refused form changed something: apps=%d hooks=%d keys=%+v content=%s", len(apps), len(hooks), keys, c.Status)
	}
	// Still signed in: the refused sign-out did nothing.
	wantStatus(t, b.get("/apps"), http.StatusOK)
}

func TestAnotherAppsIDIs404(t *testing.T) {
	e := newEnv(t)
	w := e.world()
	b := e.signedIn()
	// App A in the path, B's ids after it.
	for _, r := range routes(w.a.ID, w.contentB.ID, w.hookB.ID, w.keyB.ID, w.deliveryB.ID) {
		if !strings.Contains(strings.TrimPrefix(r.path, fmt.Sprintf("/apps/%d", w.a.ID)), "/") ||
			r.path == fmt.Sprintf("/apps/%d/content", w.a.ID) || strings.HasSuffix(r.path, "/new") ||
			r.path == fmt.Sprintf("/apps/%d/settings/keys", w.a.ID) || r.path == fmt.Sprintf("/apps/%d/webhooks", w.a.ID) {
			continue // routes without an id of their own
		}
		var p page
		if r.method == "GET" {
			p = b.get(r.path)
		} else {
			p = b.post(r.path, url.Values{"name": {"x"}, "status": {"archived"}, "url": {"https://x.example"}, "events": {"*"}})
		}
		if p.status != http.StatusNotFound {
			t.Errorf("%s %s: status=%d, want 404", r.method, r.path, p.status)
		}
	}
	// And an app that does not exist.
	for _, r := range routes(999, w.contentA.ID, w.hookA.ID, w.keyA.ID, w.deliveryA.ID) {
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
	// B's objects are untouched.
	if keys, _ := e.db.FindKeys(e.ctx, w.b.ID); keys[0].RevokedAt != nil {
		t.Fatal("B's key was revoked through A")
	}
	if c, _ := e.db.FindContentByID(e.ctx, w.b.ID, w.contentB.ID); c.Status != "draft" || c.Name != "b block" {
		t.Fatalf("B's content changed through A: %+v", c)
	}
	if h, err := e.db.FindWebhookByID(e.ctx, w.b.ID, w.hookB.ID); err != nil || h.SecretRotatedAt != nil {
		t.Fatalf("B's webhook deleted or rotated through A: %v", err)
	}
}

const hostile = `<script>alert(1)</script>"'</textarea><b>`

func TestEveryPageEscapes(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app(hostile)
	items, _ := json.Marshal([]map[string]any{
		{"type": "heading", "content": hostile},
		{"type": "text", "content": hostile, "styles": map[string]string{"color": hostile}},
		{"type": "image", "url": "https://img.example/x.png?q=" + url.QueryEscape(hostile), "alt": hostile},
		{"type": "button", "label": hostile, "url": "/go?" + hostile},
		{"type": "form", "fields": []map[string]any{{"name": hostile, "type": "select", "label": hostile, "options": []string{hostile}, "pattern": hostile}},
			"submitLabel": hostile, "successMessage": hostile},
	})
	c := e.content(app.ID, hostile, string(items))
	st := "published"
	if _, err := e.db.UpdateContent(e.ctx, app.ID, c.ID, store.ContentInput{Status: &st}); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]string{hostile: hostile})
	for i := 0; i < 2; i++ {
		if _, err := e.db.SubmitForm(e.ctx, app.ID, store.FormSubmissionInput{ContentViewID: &c.ID, Data: data, UserID: ptr(hostile)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := e.db.CreateKey(e.ctx, app.ID, "read", hostile); err != nil {
		t.Fatal(err)
	}
	u, ev, desc := "https://h.example/?q="+url.QueryEscape(hostile), []string{"*"}, hostile
	hook, err := e.db.CreateWebhook(e.ctx, app.ID, store.WebhookInput{URL: &u, Events: &ev, Description: &desc,
		Headers: &map[string]string{"X-Test": hostile}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SendTestDelivery(e.ctx, app.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/apps/%d", app.ID)
	pages := []string{"/apps", base + "/settings/keys", base + "/content", fmt.Sprintf("%s/content/%d", base, c.ID),
		fmt.Sprintf("%s/content/%d/submissions", base, c.ID), base + "/webhooks", fmt.Sprintf("%s/webhooks/%d", base, hook.ID),
		fmt.Sprintf("%s/webhooks/%d/delete", base, hook.ID)}
	keys, _ := e.db.FindKeys(e.ctx, app.ID)
	pages = append(pages, fmt.Sprintf("%s/settings/keys/%d/revoke", base, keys[0].ID))
	// A metric named hostile, with a hostile event and property, used by a
	// campaign named hostile: its pages, the editor's picker and the
	// results' table and chart.
	hj, _ := json.Marshal(hostile)
	m := e.metric(app.ID, fmt.Sprintf(`{"key":"m","name":%s,"description":%s,"type":"sum","eventId":%s,"property":%s}`, hj, hj, hj, hj))
	vs := []store.VariantInput{{ContentViewID: &c.ID}, {ContentViewID: &c.ID}}
	mj, _ := json.Marshal(map[string][]int64{"guardrails": {m.ID}})
	end, _ := json.Marshal(e.now.Add(24 * time.Hour))
	camp, err := e.db.CreateCampaign(e.ctx, app.ID, 0, store.CampaignInput{Name: ptr(hostile), Variants: &vs, EndDate: end, Metrics: mj})
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, base+"/metrics", fmt.Sprintf("%s/metrics/%d", base, m.ID), fmt.Sprintf("%s/metrics/%d/delete", base, m.ID),
		fmt.Sprintf("%s/campaigns/%d", base, camp.ID), fmt.Sprintf("%s/campaigns/%d/results", base, camp.ID))
	for _, path := range pages {
		p := b.get(path)
		wantStatus(t, p, http.StatusOK)
		if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<b>") {
			t.Errorf("%s: hostile markup reached the page unescaped", path)
		}
		if strings.Count(p.body, "</textarea>") != strings.Count(p.body, "<textarea") {
			t.Errorf("%s: a </textarea> escaped its textarea", path)
		}
		if !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: hostile name not shown escaped", path)
		}
	}
	// Forms re-rendered from what was posted escape it too.
	p := b.post(base+"/content", url.Values{"name": {hostile}, "items[0].type": {"text"}, "items[0].content": {hostile},
		"items[0].styles": {hostile}, "action": {"save"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if strings.Contains(p.body, "<script>alert") || strings.Count(p.body, "</textarea>") != strings.Count(p.body, "<textarea") {
		t.Fatal("re-rendered editor shows hostile markup")
	}
	// So does the webhook page after a rotation, refused or not.
	for _, grace := range []string{hostile, "1h"} {
		p := b.post(fmt.Sprintf("%s/webhooks/%d/rotate-secret", base, hook.ID), url.Values{"gracePeriod": {grace}})
		if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<b>") || !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Fatalf("rotation (grace %q): status=%d, hostile markup not escaped", grace, p.status)
		}
	}
	// The CSV defuses formulas and quotes the rest.
	csv := b.get(fmt.Sprintf("%s/content/%d/submissions.csv", base, c.ID))
	if !strings.Contains(csv.body, `"<script>alert(1)</script>""'</textarea><b>"`) {
		t.Fatalf("csv:\n%s", csv.body)
	}
}

func ptr[T any](v T) *T { return &v }
