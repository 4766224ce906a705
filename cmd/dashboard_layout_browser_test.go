package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// layoutProblemsJS measures the page as laid out and returns, as a JSON
// array of sentences, every way it fails to fit. Its arguments are the
// viewport's width, whether that is a desktop's, where tables must fit
// without scrolling, and whether the section nav was opened on purpose.
//
//   - The page is no wider than the viewport (documentElement.scrollWidth).
//   - The top bar's contents (brand, app picker, email, Sign out) lie
//     inside the bar, the email at least 100 px of it, and every
//     navigation link inside the viewport.
//   - No element cuts off its content (overflow hidden or clip), except
//     the cells made to end in an ellipsis (.clip).
//   - A table ends inside its card, or scrolls inside it, and then its
//     last column can be scrolled into view; at desktop width no table
//     needs to scroll, and its buttons lie inside the card.
//   - No word in the page's main part is split across two lines. A date
//     counts as two words, its day and its time; a line may end after a
//     hyphen or a slash, except inside a user id, an event id or a
//     monospace cell ("demo-300" stays whole).
//   - A table's first column is at least 7em wide, or on one line.
//   - No chart text is drawn under 11 px: its font size times the scale
//     at which its SVG's viewBox is drawn.
//   - On a phone, the page's title starts within the first 300 px (the
//     navigation above it is folded), and every form field of the page's
//     main part lies inside the viewport, not off to the right in a table
//     that scrolls.
const layoutProblemsJS = `(function (width, desktop, navOpen) {
	var problems = [];
	var root = document.documentElement;
	var vw = root.clientWidth;
	if (vw > width) problems.push("the layout viewport is " + vw + " px wide, not the " + width + " px asked for");
	function text(el) { return (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 48); }
	function label(el) {
		var s = el.tagName.toLowerCase();
		if (el.id) s += "#" + el.id;
		if (el.classList.length) s += "." + Array.prototype.join.call(el.classList, ".");
		var t = text(el);
		return t ? s + " \u201c" + t + "\u201d" : s;
	}
	function shown(el) { var r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; }
	function px(n) { return Math.round(n) + " px"; }

	if (root.scrollWidth > vw) problems.push("the page is " + px(root.scrollWidth) + " wide in a viewport of " + px(vw));

	var bar = document.querySelector("header.top");
	if (bar) {
		var b = bar.getBoundingClientRect();
		if (b.right > vw + 0.5) problems.push("the top bar ends at " + px(b.right) + ", past the viewport");
		var email = bar.querySelector(".who .clip");
		if (bar.querySelector(".who") && (!email || !shown(email) || email.getBoundingClientRect().width < 100))
			problems.push("top bar: the signed-in email is missing, hidden or under 100 px wide");
		bar.querySelectorAll("a, span, label, select, button, input").forEach(function (el) {
			if (!shown(el)) return;
			var r = el.getBoundingClientRect();
			if (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5)
				problems.push("top bar: " + label(el) + " spills out of the bar");
		});
	}
	document.querySelectorAll("nav a").forEach(function (el) {
		if (!shown(el)) return;
		var r = el.getBoundingClientRect();
		if (r.left < -0.5 || r.right > vw + 0.5) problems.push("navigation: " + label(el) + " lies outside the viewport");
	});

	document.querySelectorAll("body *").forEach(function (el) {
		if (el.matches("input, select, textarea, option, button, svg, svg *, .clip, .sr-only") || !shown(el)) return;
		var o = getComputedStyle(el).overflowX;
		if ((o === "hidden" || o === "clip") && el.scrollWidth > el.clientWidth + 1)
			problems.push(label(el) + " cuts off " + px(el.scrollWidth - el.clientWidth) + " of its content");
	});

	document.querySelectorAll("main table").forEach(function (table) {
		if (!shown(table)) return;
		var card = table.closest(".card") || table.parentElement;
		var name = "table" + (table.id ? "#" + table.id : "") + " (" + text(table.querySelector("tr")).slice(0, 32) + "\u2026)";
		var c = card.getBoundingClientRect(), t = table.getBoundingClientRect();
		var box = null;
		for (var p = table.parentElement; p && !box; p = p === card ? null : p.parentElement) {
			var o = getComputedStyle(p).overflowX;
			if (o === "auto" || o === "scroll") box = p;
		}
		if (!box) {
			if (t.right > c.right + 0.5 || t.left < c.left - 0.5) problems.push(name + " runs " + px(t.right - c.right) + " past its card");
		} else {
			var x = box.getBoundingClientRect();
			if (x.right > c.right + 0.5) problems.push(name + ": its scroll box runs past its card");
			if (desktop && box.scrollWidth > box.clientWidth + 1) problems.push(name + " needs " + px(box.scrollWidth - box.clientWidth) + " of sideways scrolling");
			var last = table.querySelector("thead tr:last-child > :last-child");
			// A table whose rows stack on a phone hides its header row.
			if (!last || !shown(last)) last = table.querySelector("tbody tr > :last-child");
			var was = box.scrollLeft;
			box.scrollLeft = box.scrollWidth;
			var l = last.getBoundingClientRect();
			if (l.right > x.right + 1 || l.left < x.left - 1) problems.push(name + ": its last column cannot be scrolled into view");
			box.scrollLeft = was;
		}
		if (desktop) table.querySelectorAll("button, .btn").forEach(function (el) {
			var r = el.getBoundingClientRect();
			if (shown(el) && (r.right > c.right + 0.5 || r.left < c.left - 0.5)) problems.push(name + ": " + label(el) + " lies outside its card");
		});
	});

	// A date counts as two words, its day and its time, each to be kept
	// whole: "2026-11-25 19:24:43 UTC" may wrap before the time, never
	// after "2026-11-".
	var date = "\\d{4}-\\d\\d-\\d\\d|\\d\\d:\\d\\d:\\d\\d";
	function splitWords(el, word) {
		var words = new RegExp(date + "|" + word, "g");
		var walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), n, m;
		while ((n = walk.nextNode())) {
			if (n.parentElement.closest(".clip, .sr-only")) continue;
			while ((m = words.exec(n.data))) {
				var r = document.createRange();
				r.setStart(n, m.index);
				r.setEnd(n, m.index + m[0].length);
				var lines = {};
				Array.prototype.forEach.call(r.getClientRects(), function (q) { if (q.width > 0) lines[Math.round(q.bottom)] = true; });
				if (Object.keys(lines).length > 1) problems.push(label(n.parentElement) + ": \u201c" + m[0] + "\u201d is split across lines");
			}
		}
	}
	document.querySelectorAll('a[href*="userId="], a[href*="eventId="], main .table td.mono, main .table th.mono').forEach(function (el) {
		splitWords(el, "\\S+");
	});
	document.querySelectorAll("main").forEach(function (el) {
		splitWords(el, "[^\\s\\-\\u2013\\u2014\\/]+");
	});

	// A first column stays readable in a squeezed table: at least 7em
	// wide, or its text on one line.
	document.querySelectorAll("main .table tr > td:first-child").forEach(function (td) {
		if (!shown(td) || td.colSpan > 1) return;
		var em = parseFloat(getComputedStyle(td).fontSize), r = document.createRange();
		r.selectNodeContents(td);
		var lines = {};
		Array.prototype.forEach.call(r.getClientRects(), function (q) { if (q.width > 0) lines[Math.round(q.bottom)] = true; });
		if (td.getBoundingClientRect().width < 7 * em - 1 && Object.keys(lines).length > 1)
			problems.push("first column: " + label(td) + " is squeezed to " + px(td.getBoundingClientRect().width));
	});

	document.querySelectorAll("svg.chart").forEach(function (svg) {
		if (!shown(svg)) return;
		var scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width, least = null;
		svg.querySelectorAll("text").forEach(function (t) {
			var size = parseFloat(getComputedStyle(t).fontSize) * scale;
			if (!least || size < least.size) least = {size: size, text: text(t)};
		});
		if (least && least.size < 11 - 0.01)
			problems.push("chart \u201c" + svg.getAttribute("aria-label") + "\u201d: its text (\u201c" + least.text + "\u201d) is drawn at " + least.size.toFixed(1) + " px");
	});

	if (!desktop) {
		var title = document.querySelector("main h1");
		if (title && !navOpen && title.getBoundingClientRect().top >= 300)
			problems.push("the page's title starts " + px(title.getBoundingClientRect().top) + " down, past the first 300 px");
		document.querySelectorAll("main input, main select, main textarea").forEach(function (el) {
			if (!shown(el)) return;
			var r = el.getBoundingClientRect();
			if (r.left < -0.5 || r.right > vw + 0.5) problems.push("form field " + label(el) + (el.name ? " (" + el.name + ")" : "") + " lies outside the viewport");
		});
	}

	var seen = {};
	problems = problems.filter(function (p) { return seen[p] ? false : (seen[p] = true); });
	return JSON.stringify(problems);
})`

// navStateJS describes the section nav as shown: whether its fold button
// shows, what the button's aria-expanded says, whether it has the focus,
// and how many of the nav's links show, of how many.
const navStateJS = `(function () {
	var nav = document.querySelector("nav.side"), btn = nav.querySelector(".nav-toggle");
	function shown(el) { var r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; }
	var links = nav.querySelectorAll("a");
	return JSON.stringify({button: shown(btn), expanded: btn.getAttribute("aria-expanded"), focused: document.activeElement === btn,
		shown: Array.prototype.filter.call(links, shown).length, links: links.length});
})()`

type navState struct {
	Button, Focused bool
	Expanded        string
	Shown, Links    int
}

// chartTextJS measures every chart text shown: how many, and the smallest
// size it is drawn at, in CSS px (its font size times the scale at which
// its SVG's viewBox is drawn).
const chartTextJS = `(function () {
	var n = 0, least = Infinity;
	document.querySelectorAll("svg.chart").forEach(function (svg) {
		var r = svg.getBoundingClientRect();
		if (!(r.width > 0 && r.height > 0)) return;
		var scale = r.width / svg.viewBox.baseVal.width;
		svg.querySelectorAll("text").forEach(function (t) {
			n++;
			least = Math.min(least, parseFloat(getComputedStyle(t).fontSize) * scale);
		});
	});
	return JSON.stringify({texts: n, least: n ? least : 0});
})()`

// variantFieldsJS counts the variant editor's block pickers and weight
// inputs, and those of them lying wholly inside the viewport.
const variantFieldsJS = `(function () {
	var vw = document.documentElement.clientWidth, r = {pickers: 0, pickersIn: 0, weights: 0, weightsIn: 0};
	function inside(el) { var b = el.getBoundingClientRect(); return b.width > 0 && b.left >= -0.5 && b.right <= vw + 0.5; }
	document.querySelectorAll('fieldset.variants select[name$=".contentViewId"]').forEach(function (el) { r.pickers++; if (inside(el)) r.pickersIn++; });
	document.querySelectorAll('fieldset.variants input[name$=".trafficAllocation"]').forEach(function (el) { r.weights++; if (inside(el)) r.weightsIn++; });
	return JSON.stringify(r);
})()`

// TestDashboardLayoutInBrowser opens every dashboard page, filled with
// data, at a phone's width (390 px, as a mobile device) and at a desktop's
// (1280 px), saves a screenshot of each, and fails on every way a page
// does not fit (layoutProblemsJS). On the webhook pages it also reads the
// delivery counts, whose nouns agree with the numbers. On the way, at
// each width: the section nav folds behind its button on a phone only,
// and the button opens and folds it, by click and by keyboard; the
// variant editor's block pickers and weights are inside the viewport; and
// the results page's chart text is measured.
func TestDashboardLayoutInBrowser(t *testing.T) {
	chromium := chromiumPath()
	if chromium == "" {
		t.Skip("!!! CHROMIUM NOT FOUND: the dashboard browser tests were SKIPPED. Install the chromium package to run them. !!!")
	}
	shots := screenshotDir(t, "layout")
	t.Logf("screenshots of every page at 390 and 1280 px: %s", shots)
	fmt.Fprintf(os.Stderr, "dashboard layout test: screenshots in %s\n", shots)

	// A database with the demo app, a second app with a long name, and
	// allowed origins, before the server opens it.
	db := filepath.Join(t.TempDir(), "dash.db")
	demo := e2eCLI(t, "seed", "--db", db)
	appID := int64(demo["appId"].(float64))
	adminKey := demo["adminKey"].(string)
	campaignID := int64(demo["campaignId"].(float64))
	audienceID := int64(demo["audienceId"].(float64))
	var blocks []int64
	for _, id := range demo["contentViewIds"].([]any) {
		blocks = append(blocks, int64(id.(float64)))
	}
	e2eCLI(t, "apps", "update", "--db", db, "--id", fmt.Sprint(appID), "--plan", "enterprise",
		"--allowed-origins", "https://shop.example.com,https://staging.shop.example.com,http://localhost:3000")
	e2eCLI(t, "apps", "create", "--db", db, "--name", "Checkout experiments for the EU storefront")

	// Webhook receivers: one that answers each delivery's first attempt
	// with 500 and its retry with 204, and one that hangs up on every
	// request before answering.
	var mu sync.Mutex
	seen := map[string]bool{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		again := seen[r.Header.Get("webhook-id")]
		seen[r.Header.Get("webhook-id")] = true
		mu.Unlock()
		if !again {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	hangsUp := "http://" + l.Addr().String() + "/hooks/crm"

	base, setupURL := dashServeDB(t, db)
	api := func(method, path string, body any) map[string]any {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = strings.NewReader(string(raw))
		}
		req, _ := http.NewRequest(method, base+"/v1"+path, rd)
		req.Header.Set("Authorization", "Bearer "+adminKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
		}
		return out
	}
	app := fmt.Sprint(appID)

	// 300 users through the demo campaign, with attributes; every user
	// views a page, one in ten of the first variant's and one in five of
	// the second's buy.
	variantOf := map[string]float64{}
	control := 0.0 // the first variant, whose id is the lowest
	for i := 1; i <= 300; i++ {
		user := fmt.Sprintf("demo-%d", i)
		ans := api("POST", fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", app, campaignID),
			map[string]any{"userId": user, "sessionId": fmt.Sprintf("sess-%08x", i*2654435761%(1<<32)),
				"attributes": map[string]any{"country": []string{"DE", "FR", "NL"}[i%3], "plan": "pro", "signupSource": "newsletter-spring"}})
		v := ans["variantId"].(float64)
		if control == 0 || v < control {
			control = v
		}
		variantOf[user] = v
	}
	var events []map[string]any
	for i := 1; i <= 300; i++ {
		user := fmt.Sprintf("demo-%d", i)
		events = append(events, map[string]any{"eventId": "page_view", "userId": user, "sessionId": fmt.Sprintf("sess-%08x", i*2654435761%(1<<32)),
			"metadata": map[string]any{"path": "/products/garden-chairs?colour=green&size=large", "referrer": "https://newsletter.example.com/spring-sale-2026", "viewport": "390x844"}})
		if (variantOf[user] == control && i%10 == 0) || (variantOf[user] != control && i%5 == 0) {
			events = append(events, map[string]any{"eventId": "purchase", "userId": user, "logId": fmt.Sprintf("order-%d", i),
				"metadata": map[string]any{"orderId": fmt.Sprintf("order-%d", i), "total": 129.9, "currency": "EUR", "items": 3}})
		}
	}
	events = append(events, map[string]any{"eventId": "checkout_started_from_recommendations_carousel", "userId": "demo-300"})
	for len(events) > 0 {
		n := min(len(events), 100)
		if ans := api("POST", "/apps/"+app+"/events/batch", map[string]any{"events": events[:n]}); ans["rejected"].(float64) != 0 {
			t.Fatalf("events refused: %v", ans)
		}
		events = events[n:]
	}
	for i, email := range []string{"ann@example.com", "a.very.long.address.for.the.newsletter@subscribers.example.com", "bo@example.org"} {
		api("POST", "/apps-external/"+app+"/submit-form", map[string]any{"contentViewId": blocks[2], "data": map[string]any{"email": email},
			"userId": fmt.Sprintf("demo-%d", 298+i), "sessionId": "sess-checkout-7f3a", "environment": "production"})
	}
	// Metrics, and a campaign that runs with one as a secondary metric and
	// one as a guardrail: every other user of the treatment logs an error,
	// one in ten of the control's, so the guardrail regresses.
	revenue := api("POST", "/apps/"+app+"/metrics", map[string]any{"key": "revenue", "name": "Revenue per user from orders placed after the first visit",
		"type": "sum", "eventId": "purchase", "property": "total", "cap": 1000, "windowHours": 168, "description": "Order totals in EUR, capped so one large order cannot decide a test"})
	errorsMetric := api("POST", "/apps/"+app+"/metrics", map[string]any{"key": "checkout_errors", "name": "Checkout errors",
		"type": "count", "eventId": "checkout_error", "direction": "decrease"})
	metricIDs := map[string]any{"secondary": []any{revenue["id"]}, "guardrails": []any{errorsMetric["id"]}}
	measured := api("POST", "/apps/"+app+"/campaigns", map[string]any{"name": "Express checkout for returning customers", "goalEventId": "purchase",
		"endDate": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339), "metrics": metricIDs,
		"variants": []map[string]any{{"name": "Control", "contentViewId": blocks[0], "isControl": true}, {"name": "Express checkout", "contentViewId": blocks[1]}}})
	measuredID := int64(measured["id"].(float64))
	api("PATCH", fmt.Sprintf("/campaigns/%d/status", measuredID), map[string]any{"status": "active"})
	measuredControl := measured["variants"].([]any)[0].(map[string]any)["id"].(float64)
	var measuredEvents []map[string]any
	for i := 1; i <= 160; i++ {
		user := fmt.Sprintf("express-%d", i)
		ans := api("POST", fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", app, measuredID), map[string]any{"userId": user})
		if control := ans["variantId"].(float64) == measuredControl; control && i%10 == 0 || !control && i%2 == 0 {
			measuredEvents = append(measuredEvents, map[string]any{"eventId": "checkout_error", "userId": user})
		}
		if i%4 == 0 {
			measuredEvents = append(measuredEvents, map[string]any{"eventId": "purchase", "userId": user, "metadata": map[string]any{"total": 20 + i%7}})
		}
	}
	if ans := api("POST", "/apps/"+app+"/events/batch", map[string]any{"events": measuredEvents}); ans["rejected"].(float64) != 0 {
		t.Fatalf("events refused: %v", ans)
	}
	// A draft with three variants and metrics, whose editor shows the
	// variant table's inputs and the metrics' picker, and an audience with an attribute rule and a timed event rule.
	draft := api("POST", "/apps/"+app+"/campaigns", map[string]any{"name": "Checkout button wording for returning customers",
		"goalEventId": "purchase", "metrics": metricIDs, "variants": []map[string]any{
			{"name": "Control", "contentViewId": blocks[0], "isControl": true},
			{"name": "Free shipping banner", "contentViewId": blocks[1]},
			{"name": "Newsletter sign-up", "contentViewId": blocks[2]}}})
	aud := api("POST", "/apps/"+app+"/audiences", map[string]any{"name": "German buyers in the last week", "definition": map[string]any{
		"logic": "AND", "rules": []map[string]any{
			{"ruleType": "attribute", "field": "country", "operator": "equals", "value": "DE"},
			{"ruleType": "event", "eventId": "purchase", "operator": "performed_within", "timeWindow": map[string]any{"value": 7, "unit": "days"}}}}})

	// Webhooks last, so their logs hold only the deliveries sent here:
	// two test events that fail once and then succeed; one that fails for
	// good; and ten that fail, which disables their webhook (FAILED), and
	// an eleventh that waits for it to be re-enabled.
	flaky := api("POST", "/apps/"+app+"/webhooks", map[string]any{"url": receiver.URL + "/hooks/service/eu-storefront", "events": []string{"*"},
		"description": "CRM sync for the EU storefront"})
	down := api("POST", "/apps/"+app+"/webhooks", map[string]any{"url": hangsUp, "events": []string{"campaign.started", "form.submitted"}, "maxRetries": 0})
	dead := api("POST", "/apps/"+app+"/webhooks", map[string]any{"url": hangsUp, "events": []string{"form.submitted"}, "maxRetries": 0,
		"description": "Old endpoint of the order export, kept until the new one is verified"})
	flakyID, downID, deadID := int64(flaky["id"].(float64)), int64(down["id"].(float64)), int64(dead["id"].(float64))
	api("POST", fmt.Sprintf("/webhooks/%d/test", flakyID), nil)
	api("POST", fmt.Sprintf("/webhooks/%d/test", flakyID), nil)
	api("POST", fmt.Sprintf("/webhooks/%d/test", downID), nil)
	for range 10 {
		api("POST", fmt.Sprintf("/webhooks/%d/test", deadID), nil)
	}
	settle := func(id int64, want string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			list := api("GET", fmt.Sprintf("/webhooks/%d/deliveries", id), nil)["data"].([]any)
			settled := len(list) > 0
			for _, d := range list {
				settled = settled && d.(map[string]any)["status"] == want
			}
			if settled {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("webhook %d: deliveries not all %s within 30s: %v", id, want, list)
			}
		}
	}
	settle(flakyID, "succeeded")
	settle(downID, "failed")
	settle(deadID, "failed")
	if h := api("GET", fmt.Sprintf("/webhooks/%d", deadID), nil); h["status"] != "FAILED" {
		t.Fatalf("webhook after 10 failures in a row: %v", h)
	}
	api("POST", fmt.Sprintf("/webhooks/%d/test", deadID), nil)
	// A rotated secret, so the page says until when the old one signs.
	api("POST", fmt.Sprintf("/webhooks/%d/rotate-secret", flakyID), map[string]any{"gracePeriod": "24h"})

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true))...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	read := func(action chromedp.Action[string]) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(ctx, action)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	type width struct {
		px      int64
		desktop bool
		emulate chromedp.Action[chromedp.Void]
	}
	widths := []width{
		{390, false, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch)},
		{1280, true, chromedp.EmulateViewport(1280, 900)},
	}
	n := 0
	problemsAt := func(w width, navOpen bool) []string {
		t.Helper()
		var problems []string
		if err := json.Unmarshal([]byte(read(chromedp.Evaluate[string](fmt.Sprintf("%s(%d, %t, %t)", layoutProblemsJS, w.px, w.desktop, navOpen)))), &problems); err != nil {
			t.Fatal(err)
		}
		return problems
	}
	// shot saves a screenshot of the whole page as it is now.
	shot := func(name string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 30*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			t.Fatalf("%s: screenshot: %v", name, err)
		}
		n++
		if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("%02d-%s.png", n, name)), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readJSON := func(js string, v any) {
		t.Helper()
		if err := json.Unmarshal([]byte(read(chromedp.Evaluate[string](js))), v); err != nil {
			t.Fatal(err)
		}
	}
	// check opens path at every width, waits for ready, saves a
	// screenshot and reports what does not fit; then runs also, if
	// given, on the page as loaded at that width.
	check := func(name, path, ready string, also ...func(width)) {
		t.Helper()
		for _, w := range widths {
			do(fmt.Sprintf("%s at %d px", name, w.px), w.emulate, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(ready)))
			shot(fmt.Sprintf("%s-%d", name, w.px))
			if problems := problemsAt(w, false); len(problems) > 0 {
				t.Errorf("%s (%s) at %d px:\n\t%s", name, path, w.px, strings.Join(problems, "\n\t"))
			}
			for _, f := range also {
				f(w)
			}
		}
	}

	// The section nav: at 1280 px all of it shows and its button does
	// not; on a phone it is folded behind the button, which opens it by
	// click and by Enter, and Escape folds it back.
	sectionNav := func(w width) {
		t.Helper()
		var nav navState
		readJSON(navStateJS, &nav)
		if w.desktop {
			if nav.Button || nav.Shown != nav.Links || nav.Links == 0 {
				t.Errorf("navigation at %d px: %+v, want every link shown and no button", w.px, nav)
			}
			return
		}
		if !nav.Button || nav.Expanded != "false" || nav.Shown != 0 {
			t.Errorf("navigation at %d px before the button: %+v, want it folded behind the button", w.px, nav)
		}
		do("open the navigation", chromedp.Click(chromedp.CSS(`nav.side .nav-toggle`)), chromedp.WaitVisible(chromedp.CSS(`nav.side a.current`)))
		if readJSON(navStateJS, &nav); nav.Expanded != "true" || nav.Shown != nav.Links || nav.Links == 0 {
			t.Errorf("navigation after a click on its button: %+v, want every link shown", nav)
		}
		shot(fmt.Sprintf("nav-open-%d", w.px))
		if problems := problemsAt(w, true); len(problems) > 0 {
			t.Errorf("the navigation opened at %d px:\n\t%s", w.px, strings.Join(problems, "\n\t"))
		}
		do("fold the navigation", chromedp.KeyEvent(kb.Escape), chromedp.WaitNotVisible(chromedp.CSS(`nav.side a.current`)))
		if readJSON(navStateJS, &nav); nav.Expanded != "false" || nav.Shown != 0 || !nav.Focused {
			t.Errorf("navigation after Escape: %+v, want it folded and the focus on its button", nav)
		}
		do("open the navigation by keyboard", chromedp.Focus(chromedp.CSS(`nav.side .nav-toggle`)), chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(chromedp.CSS(`nav.side a.current`)))
		if readJSON(navStateJS, &nav); nav.Expanded != "true" || nav.Shown != nav.Links {
			t.Errorf("navigation after Enter on its button: %+v, want every link shown", nav)
		}
	}
	// The variant editor's block pickers and weights lie inside a phone's
	// viewport (at 1280 px the table has room anyway).
	variantFields := func(want int) func(width) {
		return func(w width) {
			t.Helper()
			var got struct{ Pickers, PickersIn, Weights, WeightsIn int }
			readJSON(variantFieldsJS, &got)
			if got.Pickers != want || got.Weights != want || got.PickersIn != want || got.WeightsIn != want {
				t.Errorf("variant editor at %d px: %+v, want %d block pickers and %d weights, all inside the viewport", w.px, got, want, want)
			}
		}
	}
	// The keys page's snippet carries the app's id and its client key's
	// prefix, and its Copy button selects and copies it.
	copySnippet := func(w width) {
		t.Helper()
		snippet := read(chromedp.Evaluate[string](`document.getElementById("snippet-js").textContent`))
		if !strings.Contains(snippet, "appId: "+app+",") || !strings.Contains(snippet, "key: 'sk_c_") || !strings.Contains(snippet, "baseUrl: '"+base+"'") {
			t.Errorf("snippet at %d px:\n%s", w.px, snippet)
		}
		do("copy the snippet", chromedp.Click(chromedp.CSS(`button[data-copy="snippet-js"]`)))
		ctx, cancel := context.WithTimeout(browser, 10*time.Second)
		defer cancel()
		got, err := chromedp.Run(ctx, chromedp.Poll[string](`document.querySelector('button[data-copy="snippet-js"]').textContent === "Copied" && window.getSelection().toString()`, chromedp.WithPollingInterval(50*time.Millisecond)))
		if err != nil || got != snippet {
			t.Errorf("after Copy at %d px: selection %q, %v; want the snippet selected and the button saying Copied", w.px, got, err)
		}
	}
	// The results page's chart text, as drawn, is at least 11 px.
	chartText := func(w width) {
		t.Helper()
		var got struct {
			Texts int
			Least float64
		}
		readJSON(chartTextJS, &got)
		t.Logf("chart text at %d px: %d texts, the smallest %.1f px", w.px, got.Texts, got.Least)
		if got.Texts < 10 || got.Least < 11 {
			t.Errorf("chart text at %d px: %d texts measured, the smallest %.1f px; want at least 11 px", w.px, got.Texts, got.Least)
		}
	}

	check("setup", strings.TrimPrefix(setupURL, base), `form[action="/setup"]`)
	const email, password = "release-manager@storefront.example.com", "a long test password"
	do("setup",
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
		chromedp.SendKeys(chromedp.CSS(`input[name=confirm]`), password),
		chromedp.Click(chromedp.CSS(`form[action="/setup"] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/apps"]`)),
	)

	a := "/apps/" + app
	check("apps", "/apps", `form[action="/apps"]`)
	check("campaigns", a+"/campaigns", `main table`, sectionNav)
	check("campaign-new", a+"/campaigns/new", `form.campaign-form`, variantFields(2))
	check("campaign-active", fmt.Sprintf("%s/campaigns/%d", a, campaignID), `form.campaign-form`)
	check("campaign-draft", fmt.Sprintf("%s/campaigns/%v", a, draft["id"]), `form.campaign-form`, variantFields(3))
	check("campaign-results", fmt.Sprintf("%s/campaigns/%d/results", a, campaignID), `#results`, chartText)
	check("campaign-metrics", fmt.Sprintf("%s/campaigns/%d/results", a, measuredID), `.metric-result`, chartText, func(w width) {
		t.Helper()
		if got := read(chromedp.Text(chromedp.CSS(`#guardrails`))); !strings.Contains(got, "Checkout errors: Express checkout (+") {
			t.Errorf("guardrail banner at %d px: %q", w.px, got)
		}
		// Each metric shows one drawing of its difference chart, the one
		// that fits; chartText has measured its text.
		var shown int
		readJSON(`JSON.stringify(Array.prototype.filter.call(document.querySelectorAll(".metric-result svg.chart"), function (s) { var r = s.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length)`, &shown)
		if shown != 2 {
			t.Errorf("metric charts shown at %d px: %d, want 2", w.px, shown)
		}
	})
	check("campaign-preview", fmt.Sprintf("%s/campaigns/%d/preview", a, campaignID), `.preview-grid`)
	check("content", a+"/content", `main table`)
	check("content-new", a+"/content/new", `#editor`)
	check("content-edit", fmt.Sprintf("%s/content/%d", a, blocks[0]), `#preview`)
	check("content-form", fmt.Sprintf("%s/content/%d", a, blocks[2]), `.field-row`)
	check("submissions", fmt.Sprintf("%s/content/%d/submissions", a, blocks[2]), `main table`)
	check("audiences", a+"/audiences", `main table`)
	check("audience-new", a+"/audiences/new", `input[name="rules[0].field"]`)
	check("audience-edit", fmt.Sprintf("%s/audiences/%v", a, aud["id"]), `input[name="rules[1].eventId"]`)
	check("audience-check", fmt.Sprintf("%s/audiences/%d/check?userId=demo-300", a, audienceID), `#check-result`)
	check("metrics", a+"/metrics", `#metrics`)
	check("metric-in-use", fmt.Sprintf("%s/metrics/%v", a, revenue["id"]), `#frozen`)
	check("events", a+"/events", `#event-counts`)
	check("events-user", a+"/events?userId=demo-300", `#events`)
	check("user", a+"/users?userId=demo-300", `#assignments`)
	check("webhooks", a+"/webhooks", `main table`)
	check("webhook-new", a+"/webhooks/new", `input[name=url]`)
	check("webhook-log", fmt.Sprintf("%s/webhooks/%d", a, flakyID), `.deliveries .code.ok`)
	if got := read(chromedp.Text(chromedp.CSS(`#delivery-counts`))); got != "2 delivered · 2 failed attempts · 0 failures in a row" {
		t.Errorf("webhook that failed each delivery once: %q", got)
	}
	check("webhook-failing", fmt.Sprintf("%s/webhooks/%d", a, downID), `.deliveries .code.bad`)
	if got := read(chromedp.Text(chromedp.CSS(`#delivery-counts`))); got != "0 delivered · 1 failed attempt · 1 failure in a row" {
		t.Errorf("webhook that failed one attempt: %q", got)
	}
	check("webhook-disabled", fmt.Sprintf("%s/webhooks/%d", a, deadID), `.deliveries .code.bad`)
	if got := read(chromedp.Text(chromedp.CSS(`#delivery-counts`))); got != "0 delivered · 10 failed attempts · 10 failures in a row" {
		t.Errorf("disabled webhook: %q", got)
	}
	if got := read(chromedp.Text(chromedp.CSS(`main .alert`))); !strings.Contains(got, "This webhook failed 10 times in a row and was disabled") {
		t.Errorf("disabled webhook's alert: %q", got)
	}
	check("webhook-delete", fmt.Sprintf("%s/webhooks/%d/delete", a, downID), `main form`)
	check("settings", a+"/settings", `textarea[name=allowedOrigins]`)
	check("keys", a+"/settings/keys", `main table`, copySnippet)
	revoke := read(chromedp.Evaluate[string](`document.querySelector('a[href$="/revoke"]').getAttribute("href")`))
	check("key-revoke", revoke, `main form`)
	check("not-found", a+"/campaigns/999999", `main`)
	if _, stderr, ok := usersRun(t, "a long enough password\n", "users", "create", "--db", db, "--email", "analyst.with.a.long.address@storefront.example.com"); !ok {
		t.Fatalf("users create: %s", stderr)
	}
	check("users", "/users", `form[action$="/reset-link"]`)
	check("change-password", "/account/password", `form[action="/account/password"]`)

	do("sign out", chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)), chromedp.WaitVisible(chromedp.CSS(`form[action="/signin"]`)))
	check("signin", "/signin", `form[action="/signin"]`)
}
