package dashboard_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds the system's Chromium, or "" when there is none.
// CHROMIUM names another binary.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chrome starts headless Chromium for one test and returns a function that
// runs actions in it with a deadline, failing the (sub)test it is given.
func chrome(t *testing.T) func(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	bin := chromiumPath()
	if bin == "" {
		t.Skip("!!! CHROMIUM NOT FOUND: the dashboard browser tests were SKIPPED. Install the chromium package to run them. !!!")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true))...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil { // starts the browser, with no deadline
		t.Fatalf("start chromium: %v", err)
	}
	return func(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			// Where the browser ended up says more than a timeout does.
			at, cancel := context.WithTimeout(browser, 5*time.Second)
			defer cancel()
			loc, _ := chromedp.Run(at, chromedp.Location())
			text, _ := chromedp.Run(at, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 500) : ""`))
			t.Fatalf("%v, at %s showing:\n%s", err, loc, text)
		}
	}
}

// evaluate runs script in the page and decodes its JSON result into out.
func evaluate(script string, out any) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		raw, err := chromedp.Evaluate[[]byte](script)(ctx, tg)
		if err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, json.Unmarshal(raw, out)
	}
}

// TestInChromium drives the dashboard in headless Chromium on one test
// server: what only a real browser shows.
func TestInChromium(t *testing.T) {
	run := chrome(t)
	e := newEnv(t).withUser()

	// A browser names the origin of every form it posts, so the origin
	// check sees the dashboard's own forms as the dashboard's.
	t.Run("OwnFormsPassTheOriginCheck", func(t *testing.T) {
		run(t, chromedp.Navigate(e.srv.URL+"/signin"),
			chromedp.SendKeys(chromedp.CSS(`input[name=email]`), testEmail),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testPassword),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`form[action="/apps"]`)),
			chromedp.SendKeys(chromedp.CSS(`form[action="/apps"] input[name=name]`), "Made in Chromium"),
			chromedp.Click(chromedp.CSS(`form[action="/apps"] button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`form[action$="/settings/keys"]`)))
		apps, err := e.db.FindAllApps(e.ctx)
		if err != nil || len(apps) != 1 || apps[0].Name != "Made in Chromium" {
			t.Fatalf("apps=%v, %v", apps, err)
		}
	})
}
