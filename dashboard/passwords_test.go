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

	"service/store"
)

// signedInAgain is a second browser of u, to see which sessions a change
// ends.
func (w *roleWorld) signedInAgain(t *testing.T, u *store.DashboardUser, password string) *browser {
	t.Helper()
	b := w.e.browser()
	if p := b.signIn(u.Email, password); p.status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d", u.Email, p.status)
	}
	return b
}

// signedIn reports whether b's session is live.
func (b *browser) signedIn() bool {
	b.e.t.Helper()
	p := b.get("/apps")
	return p.status == http.StatusOK
}

// wantSignIn checks which password signs email in.
func (e *env) wantSignIn(t *testing.T, email, good string, bad ...string) {
	t.Helper()
	if _, err := e.db.AuthenticateDashboardUser(e.ctx, email, good); err != nil {
		t.Fatalf("%s with %q: %v", email, good, err)
	}
	for _, p := range bad {
		if _, err := e.db.AuthenticateDashboardUser(e.ctx, email, p); err != store.ErrBadCredentials {
			t.Fatalf("%s with %q: err=%v, want refused", email, p, err)
		}
	}
}

// passwordLog is the instance log's password entries, "action by actor
// on object", newest first; it fails when any entry holds one of secrets.
func (e *env) passwordLog(t *testing.T, secrets ...string) []string {
	t.Helper()
	list, err := e.db.FindAuditLog(e.ctx, store.AuditFilter{Instance: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range list {
		text := fmt.Sprintf("%+v", *en)
		for k, c := range en.Changes {
			text += k + string(c.Before) + string(c.After)
		}
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Fatalf("audit entry %s holds %q", en.Action, s)
			}
		}
		if strings.HasPrefix(en.Action, "user.password") || en.Action == "user.reset_link_created" {
			out = append(out, en.Action+" by "+en.Actor.Label()+" on "+en.Object.Name)
		}
	}
	return out
}

// TestChangePassword: the signed-in user changes their password with the
// current one. Refusals change nothing; the change ends every other
// session of theirs and keeps this one; wrong current passwords count
// toward the sign-in throttle.
func TestChangePassword(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	const old, fresh = "a long enough password", "a brand new password"
	here := w.signedInAs(t, w.editor)
	elsewhere := w.signedInAgain(t, w.editor, old)
	other := w.signedInAs(t, w.viewer)

	form := here.get("/account/password")
	wantStatus(t, form, http.StatusOK)
	wantContains(t, form, `name="current"`, `name="password"`, `name="confirm"`, w.editor.Email)
	if !strings.Contains(here.get("/apps").body, `href="/account/password"`) {
		t.Fatal("the top bar does not lead to Change password")
	}

	for _, tc := range []struct {
		name                     string
		current, password, again string
		field, reason            string
	}{
		{"Mismatch", old, fresh, "something else", "confirm", "does not match the new password"},
		{"WrongCurrent", "not my password!", fresh, fresh, "current", "is not your current password"},
		{"NoCurrent", "", fresh, fresh, "current", "is required"},
		{"Short", old, "short", "short", "password", "must be at least 10 characters"},
		{"TooLong", old, strings.Repeat("x", 73), strings.Repeat("x", 73), "password", "must be at most 72 bytes"},
		{"Same", old, old, old, "password", "must differ from the current password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := here.post("/account/password", url.Values{"current": {tc.current}, "password": {tc.password}, "confirm": {tc.again}})
			wantStatus(t, p, http.StatusUnprocessableEntity)
			if !errBeside(p.body, tc.field, tc.reason) {
				t.Fatalf("no %q beside %s:\n%s", tc.reason, tc.field, p.body)
			}
			e.wantSignIn(t, w.editor.Email, old)
			if !here.signedIn() || !elsewhere.signedIn() {
				t.Fatal("a refused change signed a session out")
			}
		})
	}
	t.Run("NoCSRF", func(t *testing.T) {
		p := here.do("POST", "/account/password", url.Values{"csrf": {"wrong"}, "current": {old}, "password": {fresh}, "confirm": {fresh}})
		wantStatus(t, p, http.StatusForbidden)
		e.wantSignIn(t, w.editor.Email, old)
	})

	p := here.post("/account/password", url.Values{"current": {old}, "password": {fresh}, "confirm": {fresh}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/account/password?notice=password_changed" {
		t.Fatalf("change: status %d Location %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	wantContains(t, here.get("/account/password?notice=password_changed"), "Password changed")
	e.wantSignIn(t, w.editor.Email, fresh, old)
	if !here.signedIn() {
		t.Fatal("the session the password was changed from was signed out")
	}
	if elsewhere.signedIn() {
		t.Fatal("another session of the user survived the change")
	}
	if !other.signedIn() {
		t.Fatal("another user's session was signed out")
	}
	if got, want := strings.Join(e.passwordLog(t, fresh, old), "|"), "user.password_changed by "+w.editor.Email+" on "+w.editor.Email; got != want {
		t.Fatalf("log %q, want %q", got, want)
	}

	// Wrong current passwords count as failed sign-ins: after the
	// email's five (one above, four here), even the right one waits.
	for range 4 {
		p := other.post("/account/password", url.Values{"current": {"a wrong guess!!"}, "password": {fresh}, "confirm": {fresh}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
	}
	p = other.post("/account/password", url.Values{"current": {"a wrong guess!!"}, "password": {fresh}, "confirm": {fresh}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	p = other.post("/account/password", url.Values{"current": {old}, "password": {fresh}, "confirm": {fresh}})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" {
		t.Fatalf("after five wrong passwords: status %d Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	e.wantSignIn(t, w.viewer.Email, old)
}

var resetLinkRe = regexp.MustCompile(`id="reset-link" class="mono" readonly value="([^"]+)"`)

// TestPasswordResetLink: an owner makes a link for another user, shown
// once; the page behind it sets a new password once, ends every session
// of the user and signs them in. Used, expired, replaced and unknown links
// each answer a page that says so.
func TestPasswordResetLink(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	const old, fresh = "a long enough password", "a password reset now"
	owner := w.signedInAgain(t, w.owner, testPassword)
	editor := w.signedInAs(t, w.editor)
	editor2 := w.signedInAgain(t, w.editor, old)
	viewer := w.signedInAs(t, w.viewer)
	makeLink := func(u *store.DashboardUser) string {
		t.Helper()
		p := owner.post(fmt.Sprintf("/users/%d/reset-link", u.ID), nil)
		wantStatus(t, p, http.StatusCreated)
		m := resetLinkRe.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no link on the page:\n%s", p.body)
		}
		wantContains(t, p, "Password reset link for "+u.Email)
		link := html.UnescapeString(m[1])
		if !strings.HasPrefix(link, e.srv.URL+"/reset-password?token=") {
			t.Fatalf("link %q", link)
		}
		return strings.TrimPrefix(link, e.srv.URL)
	}

	users := owner.get("/users")
	wantContains(t, users, fmt.Sprintf(`action="/users/%d/reset-link"`, w.editor.ID), `href="/account/password"`)
	if strings.Contains(users.body, fmt.Sprintf(`action="/users/%d/reset-link"`, w.owner.ID)) {
		t.Fatal("the owner is offered a reset link for themselves")
	}
	wantStatus(t, owner.post(fmt.Sprintf("/users/%d/reset-link", w.owner.ID), nil), http.StatusUnprocessableEntity)
	wantStatus(t, owner.post("/users/99999/reset-link", nil), http.StatusNotFound)
	wantStatus(t, editor.post(fmt.Sprintf("/users/%d/reset-link", w.viewer.ID), nil), http.StatusForbidden)

	replaced := makeLink(w.editor)
	link := makeLink(w.editor)
	tok, _ := url.QueryUnescape(strings.TrimPrefix(link, "/reset-password?token="))
	if strings.Contains(owner.get("/users").body, tok) {
		t.Fatal("the link is shown again after its creation")
	}
	gone := e.browser().get(replaced)
	wantStatus(t, gone, http.StatusNotFound)
	wantContains(t, gone, "a newer one")

	guest := e.browser()
	form := guest.get(link)
	wantStatus(t, form, http.StatusOK)
	wantContains(t, form, w.editor.Email, "Set password and sign in")
	csrf := csrfOf(t, form.body)
	for _, tc := range []struct {
		name, password, again, field, reason string
	}{
		{"Mismatch", fresh, "something else", "confirm", "does not match the password"},
		{"Short", "short", "short", "password", "must be at least 10 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := guest.do("POST", "/reset-password", url.Values{"csrf": {csrf}, "token": {tok}, "password": {tc.password}, "confirm": {tc.again}})
			wantStatus(t, p, http.StatusUnprocessableEntity)
			if !errBeside(p.body, tc.field, tc.reason) {
				t.Fatalf("no %q beside %s:\n%s", tc.reason, tc.field, p.body)
			}
			e.wantSignIn(t, w.editor.Email, old)
		})
	}
	wantStatus(t, e.browser().do("POST", "/reset-password", url.Values{"csrf": {csrf}, "token": {tok}, "password": {fresh}, "confirm": {fresh}}),
		http.StatusForbidden) // no CSRF cookie
	e.wantSignIn(t, w.editor.Email, old)
	if !editor.signedIn() || !editor2.signedIn() {
		t.Fatal("a refused reset signed the user out")
	}

	p := guest.do("POST", "/reset-password", url.Values{"csrf": {csrf}, "token": {tok}, "password": {fresh}, "confirm": {fresh}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/apps" {
		t.Fatalf("reset: status %d Location %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if apps := guest.get("/apps"); apps.status != http.StatusOK || !strings.Contains(apps.body, w.editor.Email) {
		t.Fatalf("not signed in after the reset: %d", apps.status)
	}
	e.wantSignIn(t, w.editor.Email, fresh, old)
	if editor.signedIn() || editor2.signedIn() {
		t.Fatal("a session of the user survived the reset")
	}
	if !viewer.signedIn() || !owner.signedIn() {
		t.Fatal("another user's session was signed out")
	}
	used := e.browser().get(link)
	wantStatus(t, used, http.StatusGone)
	wantContains(t, used, "already been used")
	wantStatus(t, e.browser().get("/reset-password?token=nonsense"), http.StatusNotFound)
	wantStatus(t, e.browser().get("/reset-password"), http.StatusNotFound)

	// A link not used within 24 hours expires.
	late := makeLink(w.viewer)
	now := time.Now()
	e.db.Now = func() time.Time { return now.Add(store.PasswordResetTTL) }
	expired := e.browser().get(late)
	wantStatus(t, expired, http.StatusGone)
	wantContains(t, expired, "has expired")
	e.db.Now = time.Now

	want := []string{
		"user.reset_link_created by " + w.owner.Email + " on " + w.viewer.Email,
		"user.password_reset by " + w.editor.Email + " on " + w.editor.Email,
		"user.reset_link_created by " + w.owner.Email + " on " + w.editor.Email,
		"user.reset_link_created by " + w.owner.Email + " on " + w.editor.Email,
	}
	if got := e.passwordLog(t, tok, fresh); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAppFormDefaultPlan: the app form starts on the instance's default
// plan and names each plan's limit; a form without a plan takes the
// default; the settings page changes the plan.
func TestAppFormDefaultPlan(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	apps := b.get("/apps")
	wantContains(t, apps, `<option value="free" selected>Free (60/min)</option>`, `<option value="pro">Pro (1,000/min)</option>`)
	if err := e.db.SetDefaultPlan(e.ctx, "pro"); err != nil {
		t.Fatal(err)
	}
	apps = b.get("/apps")
	wantContains(t, apps, `<option value="pro" selected>Pro (1,000/min)</option>`, "start on the Pro plan")
	for _, tc := range []struct {
		form       url.Values
		plan       string
		rateLimit  int
		wantStatus int
	}{
		{url.Values{"name": {"no plan given"}}, "pro", 1000, http.StatusSeeOther},
		{url.Values{"name": {"picked"}, "plan": {"starter"}}, "starter", 300, http.StatusSeeOther},
		{url.Values{"name": {"own limit"}, "plan": {""}, "rateLimit": {"5"}}, "pro", 5, http.StatusSeeOther},
		{url.Values{"name": {"bad"}, "plan": {"gold"}}, "", 0, http.StatusUnprocessableEntity},
	} {
		p := b.post("/apps", tc.form)
		wantStatus(t, p, tc.wantStatus)
		if tc.wantStatus != http.StatusSeeOther {
			wantContains(t, p, "plan must be one of")
			continue
		}
		var id int64
		fmt.Sscanf(p.header.Get("Location"), "/apps/%d/", &id)
		a, err := e.db.FindAppByID(e.ctx, id)
		if err != nil || a.Plan != tc.plan || a.RateLimit != tc.rateLimit {
			t.Fatalf("%v: app %+v, %v; want %s at %d", tc.form, a, err, tc.plan, tc.rateLimit)
		}
	}
	all, _ := e.db.FindAllApps(e.ctx)
	if len(all) != 3 {
		t.Fatalf("%d apps, want 3: a refused form created one", len(all))
	}

	settings := fmt.Sprintf("/apps/%d/settings", all[0].ID)
	wantContains(t, b.get(settings), `<option value="pro" selected>Pro (1,000/min)</option>`, `<option value="enterprise">Enterprise (10,000/min)</option>`)
	p := b.post(settings, url.Values{"plan": {"enterprise"}, "rateLimit": {""}, "allowedOrigins": {"*"}})
	wantStatus(t, p, http.StatusSeeOther)
	if a, _ := e.db.FindAppByID(e.ctx, all[0].ID); a.Plan != "enterprise" || a.RateLimit != 10000 {
		t.Fatalf("after settings: %+v", a)
	}
}
