package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// coverScript samples the viewport at two scroll positions and counts the
// points where the preview's button is the topmost element, outside the
// preview box and inside it.
const coverScript = `(() => {
  const count = () => {
    const box = document.getElementById("preview").getBoundingClientRect();
    const block = document.querySelector("#preview .pv-button");
    const r = {outside: 0, inside: 0, first: ""};
    for (let x = 1; x < innerWidth; x += 10) for (let y = 1; y < innerHeight; y += 10) {
      const el = document.elementFromPoint(x, y);
      if (!el || !(el === block || block.contains(el))) continue;
      if (x < box.left || x >= box.right || y < box.top || y >= box.bottom) {
        if (!r.outside++) r.first = x + "," + y;
      } else {
        r.inside++;
      }
    }
    return r;
  };
  scrollTo(0, 0);
  const top = count();
  scrollTo(0, document.documentElement.scrollHeight);
  const bottom = count();
  scrollTo(0, 0);
  return {outside: top.outside + bottom.outside, inside: top.inside + bottom.inside, first: top.first || bottom.first};
})()`

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

	// A content block whose stored styles would cover the dashboard with a
	// link covers no point of the page outside the preview box: not
	// through the editor's live preview, and not with those styles forced
	// onto it past the preview's allowlist.
	app := e.app("Shop")
	c := e.content(app.ID, "Phish", `[{"type":"heading","content":"Spring sale"},
		{"type":"button","label":"Sign in again","url":"https://evil.example/signin",
		 "styles":{"position":"fixed","width":"100vw","height":"100vh","zIndex":"99999"}}]`)
	editor := fmt.Sprintf("%s/apps/%d/content/%d", e.srv.URL, app.ID, c.ID)
	for _, tt := range []struct {
		name string
		// apply puts the block's styles on the preview's button.
		apply string
	}{
		// Typing in the editor renders the live preview, stored styles
		// and all.
		{"LivePreview", `document.querySelector("#editor input[name=name]").dispatchEvent(new Event("input", {bubbles: true}))`},
		{"ForcedStyles", `(() => {
			const s = document.querySelector("#preview .pv-button").style;
			s.setProperty("position", "fixed"); s.setProperty("inset", "0");
			s.setProperty("width", "100vw"); s.setProperty("height", "100vh");
			s.setProperty("z-index", "2147483647");
		})()`},
	} {
		t.Run("PreviewStaysInItsBox/"+tt.name, func(t *testing.T) {
			var cover struct {
				Outside, Inside int
				First           string
			}
			run(t, chromedp.Navigate(editor),
				chromedp.WaitVisible(chromedp.CSS(`#preview .pv-button`)),
				chromedp.Evaluate[chromedp.Void](tt.apply),
				evaluate(coverScript, &cover))
			if cover.Inside == 0 {
				t.Fatal("the button shows nowhere in the preview")
			}
			if cover.Outside > 0 {
				t.Fatalf("the block covers %d sampled points outside the preview box, the first at %s", cover.Outside, cover.First)
			}
		})
	}

	// Each style goes through the preview's allowlist, typed into the
	// editor: an allowed one shows as Chromium reads it (or as want says,
	// for numbers, which mean px where a length is due), a refused one
	// not at all.
	t.Run("PreviewStyleAllowlist", func(t *testing.T) {
		tests := []struct {
			styles, prop string
			allowed      bool
			want         string // the value expected, when not the style's own
		}{
			{`{"color":"#c00"}`, "color", true, ""},
			{`{"backgroundColor":"rgb(1, 2, 3)"}`, "background-color", true, ""},
			{`{"fontFamily":"Georgia, 'Times New Roman', serif"}`, "font-family", true, ""},
			{`{"fontSize":20}`, "font-size", true, "20px"},
			{`{"fontSize":"1.5rem"}`, "font-size", true, ""},
			{`{"fontWeight":700}`, "font-weight", true, "700"},
			{`{"fontStyle":"italic"}`, "font-style", true, ""},
			{`{"lineHeight":1.4}`, "line-height", true, "1.4"},
			{`{"letterSpacing":"0.1em"}`, "letter-spacing", true, ""},
			{`{"textAlign":"center"}`, "text-align", true, ""},
			{`{"textDecoration":"underline"}`, "text-decoration", true, ""},
			{`{"padding":"4px 8px"}`, "padding", true, ""},
			{`{"marginTop":"-2em"}`, "margin-top", true, ""},
			{`{"border":"1px solid #ccc"}`, "border", true, ""},
			{`{"borderRadius":"50%"}`, "border-radius", true, ""},
			{`{"width":"50%"}`, "width", true, ""},
			{`{"maxWidth":"20rem"}`, "max-width", true, ""},
			{`{"height":40}`, "height", true, "40px"},
			{`{"position":"relative"}`, "position", true, ""},
			{`{"position":"fixed"}`, "position", false, ""},
			{`{"position":"absolute"}`, "position", false, ""},
			{`{"position":"sticky"}`, "position", false, ""},
			{`{"top":"0"}`, "top", false, ""},
			{`{"inset":"0"}`, "inset", false, ""},
			{`{"zIndex":"99999"}`, "z-index", false, ""},
			{`{"transform":"scale(50)"}`, "transform", false, ""},
			{`{"width":"100vw"}`, "width", false, ""},
			{`{"height":"100vh"}`, "height", false, ""},
			{`{"width":"calc(100vw - 1px)"}`, "width", false, ""},
			{`{"backgroundImage":"url(https://evil.example/t.gif)"}`, "background-image", false, ""},
			{`{"background":"url(https://evil.example/t.gif)"}`, "background-image", false, ""},
			{`{"border":"1px solid url(https://evil.example/t.gif)"}`, "border", false, ""},
			{`{"borderImage":"url(https://evil.example/t.gif) 30"}`, "border-image-source", false, ""},
			{`{"cursor":"url(https://evil.example/t.gif), auto"}`, "cursor", false, ""},
			{`{"fontFamily":"x, url(https://evil.example/t.gif)"}`, "font-family", false, ""},
			{`{"color":"red; position: fixed"}`, "color", false, ""},
			{`{"font-size":"20px"}`, "font-size", false, ""},
		}
		type row struct{ Styles, Prop string }
		var rs []row
		for _, tt := range tests {
			rs = append(rs, row{tt.styles, tt.prop})
		}
		rows, _ := json.Marshal(rs)
		var got []struct{ Got, Own string }
		run(t, chromedp.Navigate(editor),
			chromedp.WaitVisible(chromedp.CSS(`#preview .pv-button`)),
			evaluate(`(() => {
				const input = document.querySelectorAll("#editor input[name$='.styles']")[1];
				const probe = document.createElement("a");
				return `+string(rows)+`.map(({Styles, Prop}) => {
					input.value = Styles;
					input.dispatchEvent(new Event("input", {bubbles: true}));
					const value = Object.values(JSON.parse(Styles))[0];
					probe.removeAttribute("style");
					probe.style.setProperty(Object.keys(JSON.parse(Styles))[0].replace(/[A-Z]/g, c => "-" + c.toLowerCase()), String(value));
					return {Got: document.querySelector("#preview .pv-button").style.getPropertyValue(Prop),
						Own: probe.style.getPropertyValue(Prop)};
				});
			})()`, &got))
		if len(got) != len(tests) {
			t.Fatalf("%d answers for %d styles", len(got), len(tests))
		}
		for i, tt := range tests {
			want := ""
			if tt.allowed {
				if want = tt.want; want == "" {
					want = got[i].Own
				}
				if want == "" {
					t.Fatalf("%s: Chromium itself does not take %s", tt.styles, tt.prop)
				}
			}
			if got[i].Got != want {
				t.Errorf("%s: %s=%q, want %q", tt.styles, tt.prop, got[i].Got, want)
			}
		}
	})
}
