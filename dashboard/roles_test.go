package dashboard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"service/dashboard"
	"service/store"
)

// roleWorld is app A with one of everything a route can name, app B, and a
// user of each kind: the owner, an admin, an editor and a viewer of A, and
// an admin of B only.
type roleWorld struct {
	e                                *env
	a, b                             *store.App
	owner, admin, editor, viewer, bu *store.DashboardUser
	n                                int // names throwaway users
}

func (e *env) roleWorld() *roleWorld {
	e.t.Helper()
	w := &roleWorld{e: e, a: e.app("A"), b: e.app("B")}
	e.withUser()
	w.owner = e.user
	for _, u := range []struct {
		dst  **store.DashboardUser
		app  int64
		role string
	}{{&w.admin, w.a.ID, store.MemberAdmin}, {&w.editor, w.a.ID, store.MemberEditor}, {&w.viewer, w.a.ID, store.MemberViewer}, {&w.bu, w.b.ID, store.MemberAdmin}} {
		*u.dst = w.user(u.app, u.role)
	}
	return w
}

// user makes a member of app with role (none when role is empty).
func (w *roleWorld) user(app int64, role string) *store.DashboardUser {
	w.e.t.Helper()
	w.n++
	email := fmt.Sprintf("user%d@example.com", w.n)
	u, err := w.e.db.CreateDashboardUser(w.e.ctx, email, "a long enough password", false)
	if err != nil {
		w.e.t.Fatal(err)
	}
	if role != "" {
		if _, err := w.e.db.GrantRole(w.e.ctx, email, app, role); err != nil {
			w.e.t.Fatal(err)
		}
	}
	return u
}

// ids are what a route's {id} and {delivery} name in app A: a new one of
// each, so that a change allowed to one role leaves the next its own.
func (w *roleWorld) ids() map[string]int64 {
	e := w.e
	e.t.Helper()
	a := w.a.ID
	blocks := []*store.ContentView{e.content(a, "x", formItems), e.content(a, "y", `[]`)}
	end, _ := json.Marshal(time.Now().Add(24 * time.Hour))
	name := "C"
	vs := []store.VariantInput{{ContentViewID: &blocks[0].ID}, {ContentViewID: &blocks[1].ID}}
	c, err := e.db.CreateCampaign(e.ctx, a, 0, store.CampaignInput{Name: &name, EndDate: end, Variants: &vs})
	if err != nil {
		e.t.Fatal(err)
	}
	audName := "Aud"
	aud, err := e.db.CreateAudience(e.ctx, a, store.AudienceInput{Name: &audName,
		Definition: json.RawMessage(`{"rules":[{"field":"plan","operator":"exists"}]}`)})
	if err != nil {
		e.t.Fatal(err)
	}
	metric := e.metric(a, fmt.Sprintf(`{"key":"m%d","name":"M","type":"count","eventId":"click"}`, w.n))
	hook := e.webhook(a, "https://a.example/hook")
	d, err := e.db.SendTestDelivery(e.ctx, a, hook.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	key, _, err := e.db.CreateKey(e.ctx, a, store.RoleRead, "k")
	if err != nil {
		e.t.Fatal(err)
	}
	instanceKey, _, err := e.db.CreateInstanceKey(e.ctx, "ik")
	if err != nil {
		e.t.Fatal(err)
	}
	member := w.user(a, store.MemberViewer)
	inv, _, err := e.db.CreateInvitation(e.ctx, a, fmt.Sprintf("inv%d@example.com", w.n), store.MemberViewer, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return map[string]int64{"campaigns": c.ID, "content": blocks[0].ID, "audiences": aud.ID, "metrics": metric.ID, "webhooks": hook.ID,
		"delivery": d.ID, "keys": key.ID, "members": member.ID, "invitations": inv.ID, "users": w.user(0, "").ID,
		"instanceKeys": instanceKey.ID}
}

// pathOf fills a route's pattern with app A and ids, or fails the test
// for a wildcard it does not know: a new kind of route must say here what
// its ids are.
func (w *roleWorld) pathOf(t *testing.T, pattern string, ids map[string]int64) string {
	t.Helper()
	parts := strings.Split(strings.TrimSuffix(pattern, "{$}"), "/")
	for i, p := range parts {
		switch {
		case p == "{app}":
			parts[i] = fmt.Sprint(w.a.ID)
		case p == "{delivery}":
			parts[i] = fmt.Sprint(ids["delivery"])
		case p == "{id}":
			kind := parts[i-1]
			if i == 2 && kind == "keys" {
				kind = "instanceKeys" // /keys/{id}: the instance's, not an app's
			}
			id, ok := ids[kind]
			if !ok {
				t.Fatalf("%s: no id for {id} after %q; add one to roleWorld.ids", pattern, parts[i-1])
			}
			parts[i] = fmt.Sprint(id)
		case strings.HasPrefix(p, "{"):
			t.Fatalf("%s: unknown wildcard %s; add it to roleWorld.pathOf", pattern, p)
		}
	}
	path := strings.Join(parts, "/")
	switch path {
	case "/static/":
		path = "/static/app.css"
	case "/apps/switch":
		path += fmt.Sprintf("?app=%d", w.a.ID)
	}
	return path
}

// as sends one request with a new session of u (none for nil), with the
// session's CSRF token on a POST, and does not follow redirects.
func (w *roleWorld) as(t *testing.T, u *store.DashboardUser, method, path string) (int, string) {
	t.Helper()
	form := url.Values{}
	var cookie string
	if u != nil {
		token, s, err := w.e.db.CreateDashboardSession(w.e.ctx, u.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		cookie = "service_session=" + token
		form.Set("csrf", s.CSRFToken)
	}
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, w.e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// newestEntry is the id of the newest audit entry, 0 for none. Entries
// are only ever added, so a request wrote one exactly when it moved; and
// reading one row stays cheap however long the log grows.
func (w *roleWorld) newestEntry(t *testing.T) int64 {
	t.Helper()
	list, err := w.e.db.FindAuditLog(w.e.ctx, store.AuditFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		return 0
	}
	return list[0].ID
}

// The answers the matrix tells apart.
const (
	allowed   = "allowed"
	toSignIn  = "sign-in" // GET: a redirect to the sign-in page; POST: 401
	forbidden = "403"
	notFound  = "404"
)

// expected is what a role gets from a route of access a in app A.
func expected(a dashboard.Access, role string) string {
	if role == "signed out" {
		return toSignIn
	}
	switch a {
	case dashboard.SignedIn:
		return allowed
	case dashboard.Owner:
		if role == "owner" {
			return allowed
		}
		return forbidden
	}
	if role == "owner" {
		return allowed
	}
	if role == "member of B" {
		return notFound
	}
	if store.RoleRank(role) >= store.RoleRank(string(a)) {
		return allowed
	}
	return forbidden
}

// policy is who may use each route, as docs/dashboard.md's roles table
// says. A route the dashboard registers that is missing here fails the
// matrix: its access must be decided, not inherited by accident.
var policy = map[string]dashboard.Access{
	"GET /static/": dashboard.Public, "GET /{$}": dashboard.Public,
	"GET /setup": dashboard.Public, "POST /setup": dashboard.Public,
	"GET /signin": dashboard.Public, "POST /signin": dashboard.Public,
	"GET /invite": dashboard.Public, "POST /invite": dashboard.Public,
	"GET /reset-password": dashboard.Public, "POST /reset-password": dashboard.Public,
	"POST /signout":         dashboard.SignedIn,
	"GET /account/password": dashboard.SignedIn, "POST /account/password": dashboard.SignedIn,

	"GET /apps": dashboard.SignedIn, "POST /apps": dashboard.Owner,
	"GET /apps/switch": dashboard.SignedIn, "GET /apps/{app}": dashboard.Viewer,

	"GET /users": dashboard.Owner, "POST /users/{id}/owner": dashboard.Owner,
	"POST /users/{id}/delete": dashboard.Owner, "POST /users/{id}/reset-link": dashboard.Owner,
	"GET /activity": dashboard.Owner,
	"GET /keys":     dashboard.Owner, "POST /keys": dashboard.Owner,
	"GET /keys/{id}/revoke": dashboard.Owner, "POST /keys/{id}/revoke": dashboard.Owner,

	"GET /apps/{app}/settings/keys":              dashboard.Admin,
	"POST /apps/{app}/settings/keys":             dashboard.Admin,
	"GET /apps/{app}/settings/keys/{id}/revoke":  dashboard.Admin,
	"POST /apps/{app}/settings/keys/{id}/revoke": dashboard.Admin,

	"GET /apps/{app}/settings/members":                  dashboard.Admin,
	"POST /apps/{app}/settings/members":                 dashboard.Admin,
	"POST /apps/{app}/settings/members/{id}/role":       dashboard.Admin,
	"POST /apps/{app}/settings/members/{id}/remove":     dashboard.Admin,
	"POST /apps/{app}/settings/invitations/{id}/revoke": dashboard.Admin,
	"GET /apps/{app}/settings":                          dashboard.Admin,
	"POST /apps/{app}/settings":                         dashboard.Admin,

	"GET /apps/{app}/campaigns":                  dashboard.Viewer,
	"GET /apps/{app}/campaigns/new":              dashboard.Editor,
	"POST /apps/{app}/campaigns":                 dashboard.Editor,
	"GET /apps/{app}/campaigns/{id}":             dashboard.Viewer,
	"POST /apps/{app}/campaigns/{id}":            dashboard.Editor,
	"POST /apps/{app}/campaigns/{id}/status":     dashboard.Editor,
	"GET /apps/{app}/campaigns/{id}/results":     dashboard.Viewer,
	"GET /apps/{app}/campaigns/{id}/results.csv": dashboard.Viewer,
	"GET /apps/{app}/campaigns/{id}/preview":     dashboard.Viewer,

	"GET /apps/{app}/audiences":               dashboard.Viewer,
	"GET /apps/{app}/audiences/new":           dashboard.Editor,
	"POST /apps/{app}/audiences":              dashboard.Editor,
	"GET /apps/{app}/audiences/{id}":          dashboard.Viewer,
	"POST /apps/{app}/audiences/{id}":         dashboard.Editor,
	"GET /apps/{app}/audiences/{id}/check":    dashboard.Viewer,
	"POST /apps/{app}/audiences/{id}/recount": dashboard.Editor,
	"POST /apps/{app}/audiences/{id}/status":  dashboard.Editor,

	"GET /apps/{app}/metrics":              dashboard.Viewer,
	"GET /apps/{app}/metrics/new":          dashboard.Editor,
	"POST /apps/{app}/metrics":             dashboard.Editor,
	"GET /apps/{app}/metrics/{id}":         dashboard.Viewer,
	"POST /apps/{app}/metrics/{id}":        dashboard.Editor,
	"GET /apps/{app}/metrics/{id}/delete":  dashboard.Editor,
	"POST /apps/{app}/metrics/{id}/delete": dashboard.Editor,

	"GET /apps/{app}/events":       dashboard.Viewer,
	"GET /apps/{app}/users":        dashboard.Viewer,
	"GET /apps/{app}/users/export": dashboard.Admin,
	"POST /apps/{app}/users/erase": dashboard.Admin,
	"GET /apps/{app}/activity":     dashboard.Viewer,

	"GET /apps/{app}/content":                      dashboard.Viewer,
	"GET /apps/{app}/content/new":                  dashboard.Editor,
	"POST /apps/{app}/content":                     dashboard.Editor,
	"GET /apps/{app}/content/{id}":                 dashboard.Viewer,
	"POST /apps/{app}/content/{id}":                dashboard.Editor,
	"POST /apps/{app}/content/{id}/status":         dashboard.Editor,
	"GET /apps/{app}/content/{id}/submissions":     dashboard.Viewer,
	"GET /apps/{app}/content/{id}/submissions.csv": dashboard.Editor,

	"GET /apps/{app}/webhooks":                                       dashboard.Viewer,
	"GET /apps/{app}/webhooks/new":                                   dashboard.Editor,
	"POST /apps/{app}/webhooks":                                      dashboard.Editor,
	"GET /apps/{app}/webhooks/{id}":                                  dashboard.Viewer,
	"POST /apps/{app}/webhooks/{id}":                                 dashboard.Editor,
	"POST /apps/{app}/webhooks/{id}/test":                            dashboard.Editor,
	"POST /apps/{app}/webhooks/{id}/enable":                          dashboard.Editor,
	"POST /apps/{app}/webhooks/{id}/rotate-secret":                   dashboard.Editor,
	"GET /apps/{app}/webhooks/{id}/delete":                           dashboard.Editor,
	"POST /apps/{app}/webhooks/{id}/delete":                          dashboard.Editor,
	"POST /apps/{app}/webhooks/{id}/deliveries/{delivery}/redeliver": dashboard.Editor,
}

// TestRoleMatrix tries every route the dashboard registers as every kind
// of user: the owner, an admin, an editor and a viewer of the app, a member
// of another app only, and nobody signed in. Each gets what the route's
// access allows, and a refused request changes nothing. The routes come
// from the dashboard itself, so a new route is tried as soon as it exists.
func TestRoleMatrix(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	routes := e.d.Routes()
	if len(routes) < 60 {
		t.Fatalf("%d routes: the list is not the dashboard's", len(routes))
	}
	roles := []struct {
		name string
		u    *store.DashboardUser
	}{{"signed out", nil}, {"member of B", w.bu}, {"viewer", w.viewer}, {"editor", w.editor}, {"admin", w.admin}, {"owner", w.owner}}
	shared := w.ids()
	seen := map[string]bool{}
	for _, r := range routes {
		seen[r.Pattern] = true
		if want, ok := policy[r.Pattern]; !ok {
			t.Errorf("%s is not in the role matrix's policy: decide who may use it there (and in docs/dashboard.md)", r.Pattern)
			continue
		} else if r.Access != want {
			t.Errorf("%s is registered for %s, the policy says %s", r.Pattern, r.Access, want)
			continue
		}
		method, pattern, _ := strings.Cut(r.Pattern, " ")
		t.Run(r.Pattern, func(t *testing.T) {
			for _, role := range roles {
				ids := shared
				want := ""
				if r.Access != dashboard.Public {
					want = expected(r.Access, role.name)
				}
				if want == allowed && method == http.MethodPost {
					ids = w.ids() // this request may change or delete them
				}
				path := w.pathOf(t, pattern, ids)
				if pattern == "/apps/switch" && role.u == w.bu {
					// Switching to an app of one's own; another's is below.
					path = fmt.Sprintf("/apps/switch?app=%d", w.b.ID)
				}
				before := w.newestEntry(t)
				status, loc := w.as(t, role.u, method, path)
				got := allowed
				switch {
				case status == http.StatusSeeOther && strings.HasPrefix(loc, "/signin?next="), status == http.StatusUnauthorized:
					got = toSignIn
				case status == http.StatusForbidden:
					got = forbidden
				case status == http.StatusNotFound:
					got = notFound
				case status >= 500:
					t.Fatalf("%s %s as %s: status %d", method, path, role.name, status)
				}
				if r.Access == dashboard.Public {
					// No session is needed: only that nobody is sent to
					// sign in.
					if got == toSignIn && pattern != "/{$}" {
						t.Errorf("%s %s as %s: %s (status %d), want no sign-in", method, path, role.name, got, status)
					}
					continue
				}
				if got != want {
					t.Errorf("%s %s as %s: %s (status %d, Location %q), want %s", method, path, role.name, got, status, loc, want)
				}
				if got == toSignIn && method == http.MethodGet && loc != "/signin?next="+url.QueryEscape(path) {
					t.Errorf("%s as %s: Location %q", path, role.name, loc)
				}
				if got != allowed {
					if after := w.newestEntry(t); after != before {
						t.Errorf("%s %s as %s was refused (%d) but wrote audit entries (the newest went from %d to %d)", method, path, role.name, status, before, after)
					}
				}
			}
		})
	}
	for p := range policy {
		if !seen[p] {
			t.Errorf("the policy lists %s, which the dashboard does not serve", p)
		}
	}
	t.Run("SwitchToAnotherApp", func(t *testing.T) {
		if status, _ := w.as(t, w.bu, "GET", fmt.Sprintf("/apps/switch?app=%d", w.a.ID)); status != http.StatusNotFound {
			t.Fatalf("status %d, want 404", status)
		}
		if status, loc := w.as(t, w.bu, "GET", fmt.Sprintf("/apps/switch?app=%d", w.b.ID)); status != http.StatusSeeOther || !strings.HasPrefix(loc, fmt.Sprintf("/apps/%d/", w.b.ID)) {
			t.Fatalf("own app: status %d Location %q", status, loc)
		}
	})
}

// TestRolesTakeEffectAtOnce lowers and removes a signed-in member's role:
// their existing session keeps no stale rights.
func TestRolesTakeEffectAtOnce(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	b := e.browser()
	if p := b.signIn(w.editor.Email, "a long enough password"); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	newPath := fmt.Sprintf("/apps/%d/content/new", w.a.ID)
	list := fmt.Sprintf("/apps/%d/content", w.a.ID)
	wantStatus(t, b.get(newPath), http.StatusOK)
	if _, err := e.db.GrantRole(e.ctx, w.editor.Email, w.a.ID, store.MemberViewer); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, b.get(newPath), http.StatusForbidden)
	wantStatus(t, b.post(list, url.Values{"name": {"sneaky"}}), http.StatusForbidden)
	wantStatus(t, b.get(list), http.StatusOK)
	if err := e.db.RevokeRole(e.ctx, w.editor.Email, w.a.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, b.get(list), http.StatusNotFound)
	if p := b.get("/apps"); p.status != http.StatusOK || strings.Contains(p.body, fmt.Sprintf(`href="/apps/%d"`, w.a.ID)) {
		t.Fatalf("apps page after removal: %d, lists A: %v", p.status, strings.Contains(p.body, `>A<`))
	}
	contents, _, err := e.db.FindContents(e.ctx, w.a.ID, "", store.ListOptions{Limit: 100, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range contents {
		if c.Name == "sneaky" {
			t.Fatal("a viewer created a block")
		}
	}
}
