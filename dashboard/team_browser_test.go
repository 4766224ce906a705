package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"service/store"
)

// TestInviteViewerInChromium: an app's admin invites a viewer in the
// browser; the viewer opens the link, sets a password and is signed in,
// sees that one app, no button or form that changes anything on any of its
// pages, and "not found" (404) for another app's page.
func TestInviteViewerInChromium(t *testing.T) {
	run := chrome(t)
	e := newEnv(t).withUser()
	shop, other := e.app("Shop"), e.app("Other")
	block := e.content(shop.ID, "Banner", `[{"type":"heading","content":"Spring sale"}]`)
	hook := e.webhook(shop.ID, "https://shop.example/hook")
	const adminPassword = "the admin's long password"
	if _, err := e.db.CreateDashboardUser(e.ctx, "admin@example.com", adminPassword, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.GrantRole(e.ctx, "admin@example.com", shop.ID, store.MemberAdmin); err != nil {
		t.Fatal(err)
	}
	shot := screenshots(t)

	var link string
	t.Run("AdminInvites", func(t *testing.T) {
		run(t, chromedp.Navigate(e.srv.URL+"/signin"),
			chromedp.SendKeys(chromedp.CSS(`input[name=email]`), "admin@example.com"),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), adminPassword),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`table`)),
			chromedp.Navigate(fmt.Sprintf("%s/apps/%d/settings/members", e.srv.URL, shop.ID)),
			chromedp.SendKeys(chromedp.CSS(`form[action$="/settings/members"] input[name=email]`), "viewer@example.com"),
			chromedp.SetValue(chromedp.CSS(`form[action$="/settings/members"] select[name=role]`), "viewer"),
			chromedp.Click(chromedp.CSS(`form[action$="/settings/members"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#invite-link`)),
			shot("invitation"),
			capture(chromedp.Value(chromedp.CSS(`#invite-link`)), &link),
			// The admin signs out: the viewer uses this same browser.
			chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/signin"]`)))
		if !strings.HasPrefix(link, e.srv.URL+"/invite?token=") {
			t.Fatalf("link %q", link)
		}
	})

	t.Run("ViewerAccepts", func(t *testing.T) {
		run(t, chromedp.Navigate(link),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/invite"]`)),
			shot("accept"),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "the viewer's own password"),
			chromedp.SendKeys(chromedp.CSS(`input[name=confirm]`), "the viewer's own password"),
			chromedp.Click(chromedp.CSS(`form[action="/invite"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`nav.side`)))
		var loc string
		run(t, capture(chromedp.Location(), &loc))
		if want := fmt.Sprintf("%s/apps/%d/campaigns", e.srv.URL, shop.ID); loc != want {
			t.Fatalf("landed on %s, want %s", loc, want)
		}
	})

	t.Run("SeesOneApp", func(t *testing.T) {
		var apps struct{ Listed, Switcher int }
		run(t, chromedp.Navigate(e.srv.URL+"/apps"), chromedp.WaitVisible(chromedp.CSS(`main`)), shot("apps"),
			capture(chromedp.Evaluate[int](`document.querySelectorAll("main table tbody tr").length`), &apps.Listed),
			chromedp.Navigate(fmt.Sprintf("%s/apps/%d/campaigns", e.srv.URL, shop.ID)), chromedp.WaitVisible(chromedp.CSS(`#app-switch`)),
			capture(chromedp.Evaluate[int](`document.querySelectorAll("#app-switch option").length`), &apps.Switcher))
		if apps.Listed != 1 || apps.Switcher != 1 {
			t.Fatalf("the apps page lists %d apps and the switcher %d, want 1 and 1", apps.Listed, apps.Switcher)
		}
	})

	t.Run("NoEditButtons", func(t *testing.T) {
		base := fmt.Sprintf("%s/apps/%d", e.srv.URL, shop.ID)
		for _, p := range []string{"/campaigns", "/content", fmt.Sprintf("/content/%d", block.ID), "/audiences", "/webhooks",
			fmt.Sprintf("/webhooks/%d", hook.ID), "/events", "/activity"} {
			var found struct {
				Posts, Buttons, New int
				Nav                 []string
			}
			run(t, chromedp.Navigate(base+p), chromedp.WaitVisible(chromedp.CSS(`main h1`)), shot("viewer"+strings.ReplaceAll(p, "/", "-")),
				evaluate(`({
					Posts: document.querySelectorAll("main form[method=post]").length,
					Buttons: [...document.querySelectorAll("main button, main input[type=submit]")]
						.filter(b => b.closest("form") && b.closest("form").method === "post" || b.name === "action").length,
					New: document.querySelectorAll("main a[href$='/new'], main a[href$='/delete']").length,
					Nav: [...document.querySelectorAll("nav.side a")].map(a => a.textContent.trim())
				})`, &found))
			if found.Posts+found.Buttons+found.New != 0 {
				t.Errorf("%s offers a viewer %d forms that post, %d edit buttons, %d links to new or delete", p, found.Posts, found.Buttons, found.New)
			}
			for _, s := range found.Nav {
				if strings.HasPrefix(s, "Settings") {
					t.Errorf("%s: the navigation offers a viewer %q", p, s)
				}
			}
		}
	})

	t.Run("AnotherAppIsNotFound", func(t *testing.T) {
		url := fmt.Sprintf("%s/apps/%d/campaigns", e.srv.URL, other.ID)
		var page struct {
			Status int
			H1     string
		}
		run(t, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`main h1`)), shot("other-app"),
			// The status of the page just shown, as the browser gets it.
			capture(chromedp.Evaluate[int](`fetch(location.href).then(r => r.status)`, chromedp.EvalAwaitPromise), &page.Status),
			capture(chromedp.Text(chromedp.CSS(`main h1`)), &page.H1))
		if page.Status != 404 || page.H1 != "Not found" {
			t.Fatalf("another app's page: status %d, heading %q; want 404 Not found", page.Status, page.H1)
		}
	})

	list, err := e.db.FindAuditLog(e.ctx, store.AuditFilter{AppID: shop.ID, ObjectType: store.ObjectInvitation})
	if err != nil || len(list) != 2 || list[0].Action != "invitation.accepted" || list[1].Actor.Name != "admin@example.com" {
		t.Fatalf("invitation entries %+v, %v", list, err)
	}
}

// screenshots returns an action that saves a PNG of the page as name, in
// DASHBOARD_SCREENSHOTS when it is set, for a person to look at; without
// it the action does nothing.
func screenshots(t *testing.T) func(name string) chromedp.Action[chromedp.Void] {
	dir := os.Getenv("DASHBOARD_SCREENSHOTS")
	return func(name string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			if dir == "" {
				return chromedp.Void{}, nil
			}
			png, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.Void{}, os.WriteFile(filepath.Join(dir, t.Name()[:strings.IndexByte(t.Name()+"/", '/')]+"-"+name+".png"), png, 0o644)
		}
	}
}

// capture runs a, and keeps its value in dst.
func capture[T any](a chromedp.Action[T], dst *T) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		v, err := a(ctx, tg)
		*dst = v
		return chromedp.Void{}, err
	}
}
