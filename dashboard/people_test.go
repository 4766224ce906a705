package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"service/store"
)

// TestPeoplePage: the People page looks a user up and shows the profile,
// assignments and events; an admin gets Export, which downloads the
// user's document, and Erase, which erases only when the userId is typed
// again; a viewer sees neither, and their export and erasure are refused
// and change nothing.
func TestPeoplePage(t *testing.T) {
	e := newEnv(t)
	w := e.roleWorld()
	app := w.a.ID
	user := "people/ann+1@example.com" // any character, slashes included
	if _, err := e.db.IdentifyUser(e.ctx, app, user, map[string]any{"plan": "pro"}); err != nil {
		t.Fatal(err)
	}
	c := e.campaign(app, "promo", "buy")
	e.start(app, c.ID)
	if _, err := e.db.Variant(e.ctx, app, c.ID, &store.VariantRequest{UserID: user}, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.db.LogEvent(e.ctx, app, &store.EventInput{EventID: "view", UserID: user}); err != nil {
			t.Fatal(err)
		}
	}
	base := fmt.Sprintf("/apps/%d/users", app)
	look := base + "?userId=" + url.QueryEscape(user)
	exportPath := base + "/export?userId=" + url.QueryEscape(user)

	viewer := w.browserOf(t, w.viewer)
	p := viewer.get(look)
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `aria-current="page" class="current">People</a>`, `<th class="mono">plan</th>`, ">promo</a>")
	if n := strings.Count(p.body, `<tr data-id=`); n != 3 {
		t.Fatalf("%d events on the page, want 3", n)
	}
	if strings.Contains(p.body, `id="erase"`) || strings.Contains(p.body, `id="export"`) {
		t.Fatal("a viewer is offered Export or Erase")
	}
	wantStatus(t, viewer.get(exportPath), http.StatusForbidden)
	wantStatus(t, viewer.post(base+"/erase", url.Values{"userId": {user}, "confirm": {user}}), http.StatusForbidden)

	admin := w.browserOf(t, w.admin)
	p = admin.get(look)
	wantContains(t, p, `id="erase"`, `id="export"`, `action="`+base+`/erase"`)
	x := admin.get(exportPath)
	wantStatus(t, x, http.StatusOK)
	var doc struct {
		UserID string `json:"userId"`
		Events []any  `json:"events"`
	}
	if json.Unmarshal([]byte(x.body), &doc) != nil || doc.UserID != user || len(doc.Events) != 3 ||
		!strings.Contains(x.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: %s %q", x.header, x.body)
	}

	p = admin.post(base+"/erase", url.Values{"userId": {user}, "confirm": {"people/ann"}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	wantContains(t, p, "Type the userId exactly")
	if _, err := e.db.FindUserByID(e.ctx, app, user); err != nil {
		t.Fatalf("a mistyped confirmation erased the user: %v", err)
	}

	p = admin.post(base+"/erase", url.Values{"userId": {user}, "confirm": {user}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != base+"?notice=user_erased" {
		t.Fatalf("erase: %d %s", p.status, p.header.Get("Location"))
	}
	wantContains(t, admin.get(base+"?notice=user_erased"), "Erased everything stored about the user")
	wantStatus(t, admin.get(look), http.StatusNotFound)
	list, err := e.db.FindAuditLog(e.ctx, store.AuditFilter{AppID: app, Action: store.ActionEndUserErased})
	if err != nil || len(list) != 1 || list[0].Actor.Type != store.ActorUser || list[0].Actor.Name != w.admin.Email {
		t.Fatalf("audit: %v %+v", err, list)
	}
}

// browserOf is a browser signed in as u, with the standard password.
func (w *roleWorld) browserOf(t *testing.T, u *store.DashboardUser) *browser {
	t.Helper()
	b := w.e.browser()
	if p := b.signIn(u.Email, "a long enough password"); p.status != http.StatusSeeOther {
		t.Fatalf("sign in as %s: %d", u.Email, p.status)
	}
	return b
}

// TestPeopleInChromium: an admin finds a user on the People page, is
// refused an erasure whose confirmation does not match, erases with the
// id typed again, and lands on the page with the notice; a viewer's page
// of another user has neither Export nor Erase.
func TestPeopleInChromium(t *testing.T) {
	run := chrome(t)
	e := newEnv(t)
	w := e.roleWorld()
	app := w.a.ID
	for _, u := range []string{"chromium-ann", "chromium-bob"} {
		if _, err := e.db.IdentifyUser(e.ctx, app, u, map[string]any{"plan": "pro"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.LogEvent(e.ctx, app, &store.EventInput{EventID: "view", UserID: u}); err != nil {
			t.Fatal(err)
		}
	}
	shot := screenshots(t)
	signIn := func(email string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(chromedp.Navigate(e.srv.URL+"/signin"),
			chromedp.SendKeys(chromedp.CSS(`input[name=email]`), email),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "a long enough password"),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
			// Signed in: the sign-in page has no sign-out form.
			chromedp.WaitVisible(chromedp.CSS(`form[action="/signout"]`)))
	}
	people := fmt.Sprintf("%s/apps/%d/users", e.srv.URL, app)

	t.Run("AdminErases", func(t *testing.T) {
		var loc, notice string
		var events int
		run(t, signIn(w.admin.Email),
			chromedp.Navigate(people),
			chromedp.SendKeys(chromedp.CSS(`form[role=search] input[name=userId]`), "chromium-ann"),
			chromedp.Click(chromedp.CSS(`form[role=search] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#erase`)),
			capture(chromedp.Evaluate[int](`document.querySelectorAll("#events tr[data-id]").length`), &events),
			shot("person"),
			chromedp.SendKeys(chromedp.CSS(`#erase input[name=confirm]`), "chromium-an"),
			chromedp.Click(chromedp.CSS(`#erase button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#erase .ferr`)),
			shot("refused"),
			chromedp.SetValue(chromedp.CSS(`#erase input[name=confirm]`), "chromium-ann"),
			chromedp.Click(chromedp.CSS(`#erase button[type=submit]`)),
			chromedp.WaitNotPresent(chromedp.CSS(`#erase`)),
			capture(chromedp.Location(), &loc),
			capture(chromedp.Evaluate[string](`document.querySelector("main").innerText`), &notice))
		if events != 1 || loc != people+"?notice=user_erased" || !strings.Contains(notice, "Erased everything stored about the user") {
			t.Fatalf("events %d, landed on %s showing %q", events, loc, notice)
		}
		if _, err := e.db.FindUserByID(e.ctx, app, "chromium-ann"); store.ErrorCode(err) != store.ENOTFOUND {
			t.Fatalf("the user is still there: %v", err)
		}
		if _, err := e.db.FindUserByID(e.ctx, app, "chromium-bob"); err != nil {
			t.Fatalf("the other user went too: %v", err)
		}
	})

	t.Run("ViewerHasNoButtons", func(t *testing.T) {
		var buttons int
		run(t, chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action="/signin"]`)),
			signIn(w.viewer.Email),
			chromedp.Navigate(people+"?userId=chromium-bob"),
			chromedp.WaitVisible(chromedp.CSS(`#attributes`)),
			capture(chromedp.Evaluate[int](`document.querySelectorAll("#erase, #export, form[method=post][action$='/users/erase']").length`), &buttons))
		if buttons != 0 {
			t.Fatalf("a viewer sees %d of Export and Erase", buttons)
		}
	})
}
