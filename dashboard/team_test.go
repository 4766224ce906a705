package dashboard_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"service/dashboard"
	"service/store"
)

// signedInAs is a browser signed in as u, whose password is the one
// roleWorld gives everyone.
func (w *roleWorld) signedInAs(t *testing.T, u *store.DashboardUser) *browser {
	t.Helper()
	b := w.e.browser()
	if p := b.signIn(u.Email, "a long enough password"); p.status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d", u.Email, p.status)
	}
	return b
}

// TestPagesOfferOnlyWhatTheRoleAllows opens every page a viewer may open:
// none offers a form that changes something (the header's sign-out aside)
// or a link to one, and the navigation leaves out the admins' sections.
// An editor's pages do offer the editing forms.
func TestPagesOfferOnlyWhatTheRoleAllows(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	ids := w.ids()
	viewer, editor := w.signedInAs(t, w.viewer), w.signedInAs(t, w.editor)
	posts := regexp.MustCompile(`method="post"`)
	for _, r := range e.d.Routes() {
		method, pattern, _ := strings.Cut(r.Pattern, " ")
		if r.Access != dashboard.Viewer || method != http.MethodGet || strings.HasSuffix(pattern, ".csv") || pattern == "/apps/{app}" {
			continue
		}
		path := w.pathOf(t, pattern, ids)
		if strings.HasSuffix(path, "/check") {
			path += "?userId=u1"
		}
		p := viewer.get(path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: status %d", path, p.status)
		}
		if n := len(posts.FindAllString(p.body, -1)); n != 1 {
			t.Errorf("%s offers a viewer %d forms that post, want only sign-out", path, n)
		}
		for _, s := range []string{`/new"`, `/delete"`, "/settings/keys", "/settings/members", fmt.Sprintf(`"/apps/%d/settings"`, w.a.ID)} {
			if strings.Contains(p.body, s) {
				t.Errorf("%s shows a viewer %q", path, s)
			}
		}
		if !strings.Contains(p.body, ">Activity<") {
			t.Errorf("%s: no Activity in the navigation", path)
		}
	}
	for _, path := range []string{fmt.Sprintf("/apps/%d/campaigns/%d", w.a.ID, ids["campaigns"]), fmt.Sprintf("/apps/%d/content/%d", w.a.ID, ids["content"]),
		fmt.Sprintf("/apps/%d/audiences/%d", w.a.ID, ids["audiences"]), fmt.Sprintf("/apps/%d/webhooks/%d", w.a.ID, ids["webhooks"])} {
		p := editor.get(path)
		if n := len(posts.FindAllString(p.body, -1)); p.status != http.StatusOK || n < 2 {
			t.Errorf("%s: status %d, %d forms that post; an editor edits here", path, p.status, n)
		}
		if strings.Contains(p.body, "/settings/keys") {
			t.Errorf("%s shows an editor the keys", path)
		}
		wantContains(t, p, `id="history"`)
	}
	apps := viewer.get("/apps")
	if !strings.Contains(apps.body, fmt.Sprintf(`href="/apps/%d"`, w.a.ID)) || strings.Contains(apps.body, fmt.Sprintf(`href="/apps/%d"`, w.b.ID)) ||
		strings.Contains(apps.body, "Create an app") || strings.Contains(apps.body, `href="/users"`) {
		t.Errorf("a viewer's apps page:\n%s", apps.body)
	}
}

var linkRe = regexp.MustCompile(`id="invite-link" class="mono" readonly value="([^"]+)"`)

// TestInvitationFlow: an admin invites someone, who opens the link, sets a
// password and is signed in on the app, once. A spent, an expired and an
// unknown link each answer a page that says so; someone with an account
// accepts with their own password.
func TestInvitationFlow(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	admin := w.signedInAs(t, w.admin)
	members := fmt.Sprintf("/apps/%d/settings/members", w.a.ID)

	p := admin.post(members, url.Values{"email": {"not an email"}, "role": {"viewer"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	p = admin.post(members, url.Values{"email": {"new@example.com"}, "role": {"editor"}})
	wantStatus(t, p, http.StatusCreated)
	m := linkRe.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no link on the page:\n%s", p.body)
	}
	link := html.UnescapeString(m[1])
	if !strings.HasPrefix(link, e.srv.URL+"/invite?token=") {
		t.Fatalf("link %q", link)
	}
	token := strings.TrimPrefix(link, e.srv.URL+"/invite?token=")
	if tok, _ := url.QueryUnescape(token); strings.Contains(admin.get(members).body, tok) {
		t.Fatal("the link is shown again after its creation")
	}
	wantContains(t, admin.get(members), "new@example.com", "Pending invitations")

	guest := e.browser()
	form := guest.get("/invite?token=" + token)
	wantStatus(t, form, http.StatusOK)
	wantContains(t, form, "as <strong>editor</strong>", "Set password and sign in")
	csrf := csrfOf(t, form.body)
	tok, _ := url.QueryUnescape(token)
	p = guest.do("POST", "/invite", url.Values{"csrf": {csrf}, "token": {tok}, "password": {"a brand new password"}, "confirm": {"something else!"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	p = guest.do("POST", "/invite", url.Values{"csrf": {csrf}, "token": {tok}, "password": {"a brand new password"}, "confirm": {"a brand new password"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != fmt.Sprintf("/apps/%d", w.a.ID) {
		t.Fatalf("accept: status %d Location %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	wantStatus(t, guest.get(fmt.Sprintf("/apps/%d/content/new", w.a.ID)), http.StatusOK)
	wantStatus(t, guest.get(fmt.Sprintf("/apps/%d/content", w.b.ID)), http.StatusNotFound)

	again := e.browser().get("/invite?token=" + token)
	wantStatus(t, again, http.StatusGone)
	wantContains(t, again, "already been used")
	wantStatus(t, e.browser().get("/invite?token=nonsense"), http.StatusNotFound)

	// Someone with an account signs in to accept.
	inv, existing, err := e.db.CreateInvitation(e.ctx, w.b.ID, w.viewer.Email, store.MemberViewer, w.owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	form = b.get("/invite?token=" + url.QueryEscape(existing))
	wantContains(t, form, "Sign in and accept")
	p = b.do("POST", "/invite", url.Values{"csrf": {csrfOf(t, form.body)}, "token": {existing}, "password": {"not the password"}})
	wantStatus(t, p, http.StatusUnauthorized)
	p = b.do("POST", "/invite", url.Values{"csrf": {csrfOf(t, form.body)}, "token": {existing}, "password": {"a long enough password"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != fmt.Sprintf("/apps/%d", inv.AppID) {
		t.Fatalf("accept with an account: %d %q", p.status, p.header.Get("Location"))
	}

	// Guessing an account's password through a link meets the sign-in
	// throttle, and so does signing in after it.
	_, guessed, err := e.db.CreateInvitation(e.ctx, w.b.ID, w.editor.Email, store.MemberViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := e.browser()
	form = g.get("/invite?token=" + url.QueryEscape(guessed))
	for i := range 5 {
		p = g.do("POST", "/invite", url.Values{"csrf": {csrfOf(t, form.body)}, "token": {guessed}, "password": {fmt.Sprintf("guess number %d", i)}})
		wantStatus(t, p, http.StatusUnauthorized)
	}
	p = g.do("POST", "/invite", url.Values{"csrf": {csrfOf(t, form.body)}, "token": {guessed}, "password": {"a long enough password"}})
	wantStatus(t, p, http.StatusTooManyRequests)
	if role, _ := e.db.FindAppRole(e.ctx, w.editor.ID, w.b.ID); role != "" {
		t.Fatalf("accepted while locked out: role %q", role)
	}
	if p := e.browser().signIn(w.editor.Email, "a long enough password"); p.status != http.StatusTooManyRequests {
		t.Fatalf("sign in after guesses through a link: %d, want 429", p.status)
	}

	// Seven days later a link has expired.
	_, late, err := e.db.CreateInvitation(e.ctx, w.a.ID, "late@example.com", store.MemberViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.db.Now = func() time.Time { return time.Now().Add(store.InvitationTTL + time.Minute) }
	expired := e.browser().get("/invite?token=" + url.QueryEscape(late))
	wantStatus(t, expired, http.StatusGone)
	wantContains(t, expired, "expired")
}

// TestMembersAndUsersPages: an admin changes and removes roles and revokes
// an invitation; an owner makes and unmakes owners and deletes users; each
// change is in the log as its user's, with the request's id.
func TestMembersAndUsersPages(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	admin := w.signedInAs(t, w.admin)
	base := fmt.Sprintf("/apps/%d/settings/members", w.a.ID)

	p := admin.post(fmt.Sprintf("%s/%d/role", base, w.viewer.ID), url.Values{"role": {"editor"}})
	wantStatus(t, p, http.StatusSeeOther)
	requestID := p.header.Get("X-Request-Id")
	if role, _ := e.db.FindAppRole(e.ctx, w.viewer.ID, w.a.ID); role != store.MemberEditor {
		t.Fatalf("role %q", role)
	}
	list, err := e.db.FindAuditLog(e.ctx, store.AuditFilter{AppID: w.a.ID, Action: "member.role_changed"})
	if err != nil || len(list) != 1 {
		t.Fatalf("entries %v, %v", list, err)
	}
	if got := list[0]; got.Actor.Type != store.ActorUser || got.Actor.Name != w.admin.Email || got.RequestID != requestID || requestID == "" ||
		got.ClientAddress != "127.0.0.1" || got.Object.Name != w.viewer.Email {
		t.Fatalf("entry %+v, want the admin, request %q", got, requestID)
	}
	wantStatus(t, admin.post(fmt.Sprintf("%s/%d/role", base, w.bu.ID), url.Values{"role": {"editor"}}), http.StatusNotFound)
	wantStatus(t, admin.post(fmt.Sprintf("%s/%d/role", base, w.viewer.ID), url.Values{"role": {"owner"}}), http.StatusUnprocessableEntity)
	wantStatus(t, admin.post(fmt.Sprintf("%s/%d/remove", base, w.viewer.ID), nil), http.StatusSeeOther)
	if role, _ := e.db.FindAppRole(e.ctx, w.viewer.ID, w.a.ID); role != "" {
		t.Fatalf("role after removal %q", role)
	}
	inv, _, err := e.db.CreateInvitation(e.ctx, w.a.ID, "x@example.com", store.MemberViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, admin.post(fmt.Sprintf("/apps/%d/settings/invitations/%d/revoke", w.a.ID, inv.ID), nil), http.StatusSeeOther)
	wantStatus(t, admin.post(fmt.Sprintf("/apps/%d/settings/invitations/%d/revoke", w.a.ID, inv.ID), nil), http.StatusNotFound)

	activity := admin.get(fmt.Sprintf("/apps/%d/activity", w.a.ID))
	wantContains(t, activity, "member.role_changed", "member.removed", "invitation.revoked", w.admin.Email, requestID)
	filtered := admin.get(fmt.Sprintf("/apps/%d/activity?action=member.removed", w.a.ID))
	if strings.Contains(filtered.body, "member.role_changed") || !strings.Contains(filtered.body, "member.removed") {
		t.Fatalf("filtered activity:\n%s", filtered.body)
	}
	wantStatus(t, admin.get(fmt.Sprintf("/apps/%d/activity?objectType=planet", w.a.ID)), http.StatusUnprocessableEntity)

	owner := e.signedIn()
	users := owner.get("/users")
	wantContains(t, users, w.admin.Email, "Make an owner", ">A</a> admin")
	wantStatus(t, owner.post(fmt.Sprintf("/users/%d/owner", w.owner.ID), url.Values{"owner": {"false"}}), http.StatusUnprocessableEntity)
	wantStatus(t, owner.post(fmt.Sprintf("/users/%d/owner", w.editor.ID), url.Values{"owner": {"true"}}), http.StatusSeeOther)
	editor := w.signedInAs(t, w.editor)
	wantStatus(t, editor.get("/users"), http.StatusOK)
	wantStatus(t, editor.get(fmt.Sprintf("/apps/%d/settings/keys", w.b.ID)), http.StatusOK)
	wantStatus(t, owner.post(fmt.Sprintf("/users/%d/owner", w.editor.ID), url.Values{"owner": {"false"}}), http.StatusSeeOther)
	wantStatus(t, editor.get("/users"), http.StatusForbidden)
	wantStatus(t, owner.post(fmt.Sprintf("/users/%d/delete", w.owner.ID), nil), http.StatusUnprocessableEntity)
	wantStatus(t, owner.post(fmt.Sprintf("/users/%d/delete", w.editor.ID), nil), http.StatusSeeOther)
	wantStatus(t, editor.get(fmt.Sprintf("/apps/%d/content", w.a.ID)), http.StatusSeeOther) // signed out

	inst := owner.get("/activity")
	wantContains(t, inst, "user.owner_granted", "user.owner_revoked", "user.deleted", "app.created")
	if strings.Contains(inst.body, "member.role_changed") {
		t.Fatal("an app's change in the instance log")
	}
}

// TestSettingsAndHistory: an admin sets the plan and rate limit with the
// origins in one change, and each object page's History panel shows its
// changes as before → after, by whom.
func TestSettingsAndHistory(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	admin := w.signedInAs(t, w.admin)
	settings := fmt.Sprintf("/apps/%d/settings", w.a.ID)
	wantStatus(t, admin.post(settings, url.Values{"plan": {"pro"}, "rateLimit": {""}, "allowedOrigins": {"https://shop.example"}}), http.StatusSeeOther)
	app, err := e.db.FindAppByID(e.ctx, w.a.ID)
	if err != nil || app.Plan != "pro" || app.RateLimit != 1000 {
		t.Fatalf("app %+v, %v", app, err)
	}
	list, err := e.db.FindAuditLog(e.ctx, store.AuditFilter{AppID: w.a.ID, Action: "app.updated"})
	if err != nil || len(list) != 1 || len(list[0].Changes) != 3 {
		t.Fatalf("entries %+v, %v: want one with plan, rateLimit and allowedOrigins", list, err)
	}
	p := admin.post(settings, url.Values{"plan": {"pro"}, "rateLimit": {"0"}, "allowedOrigins": {"*"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if !errBeside(p.body, "rateLimit", "must be a whole number") {
		t.Fatalf("no error beside the rate limit:\n%s", p.body)
	}
	wantContains(t, admin.get(settings), `value="pro" selected`)

	ids := w.ids()
	editor := w.signedInAs(t, w.editor)
	page := fmt.Sprintf("/apps/%d/content/%d", w.a.ID, ids["content"])
	wantStatus(t, editor.post(page, url.Values{"action": {"save"}, "name": {"Renamed block"},
		"items[0].type": {"heading"}, "items[0].content": {"Hi"}}), http.StatusSeeOther)
	hist := w.signedInAs(t, w.viewer).get(page)
	wantContains(t, hist, `id="history"`, "content.updated", w.editor.Email, `<del class="clip" title="x">x</del> → <ins class="clip" title="Renamed block">Renamed block</ins>`, "content.created", "command line")
}
