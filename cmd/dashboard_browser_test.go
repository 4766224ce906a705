package cmd_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"service/internal/pgtest"
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

// screenshotDir is the folder, named for the test, where a browser test
// leaves a PNG of every page it visits, replaced on each run. The folders
// live in $TMPDIR/service-dashboard-screenshots; DASHBOARD_SCREENSHOTS
// names another parent.
func screenshotDir(t *testing.T, name string) string {
	dir := os.Getenv("DASHBOARD_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "service-dashboard-screenshots")
	}
	dir = filepath.Join(dir, name)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dashServe starts the real binary on a fresh database and returns its base
// URL and the setup link it logged.
func dashServe(t *testing.T) (base, setupURL string) {
	t.Helper()
	return dashServeDB(t, pgtest.DB(t, filepath.Join(t.TempDir(), "dash.db")))
}

// dashServeDB is dashServe on the database db, which may hold data but no
// dashboard user.
func dashServeDB(t *testing.T, db string) (base, setupURL string) {
	t.Helper()
	cmd := exec.Command(cliBin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--webhook-retry-base", "1s")
	cmd.Env = cliEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		cmd.Wait()
	})
	addr, setup := make(chan string, 1), make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct {
				Msg, Addr, SetupURL string
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			if line.Msg == "serving" {
				addr <- line.Addr
			}
			if line.SetupURL != "" {
				setup <- line.SetupURL
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	for base == "" || setupURL == "" {
		select {
		case a := <-addr:
			base = "http://" + a
		case s := <-setup:
			setupURL = s
		case <-done:
			t.Fatal("serve exited")
		case <-time.After(15 * time.Second):
			t.Fatal("serve logged no address and setup link within 15s")
		}
	}
	return base, setupURL
}

// TestDashboardInBrowser drives the dashboard in headless Chromium against
// the real binary: first-run setup, sign-in, an app, an API key used
// against the API, a published content block and its preview, and a
// webhook whose test event reaches a local receiver and shows in the log.
func TestDashboardInBrowser(t *testing.T) {
	chromium := chromiumPath()
	if chromium == "" {
		t.Skip("!!! CHROMIUM NOT FOUND: the dashboard browser tests were SKIPPED. Install the chromium package to run them. !!!")
	}
	shots := screenshotDir(t, "flow")
	t.Logf("screenshots of every page visited: %s", shots)
	fmt.Fprintf(os.Stderr, "dashboard browser test: screenshots in %s\n", shots)

	base, setupURL := dashServe(t)

	var mu sync.Mutex
	var received []string
	var standard []stdDelivery
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		received = append(received, r.Header.Get("X-Service-Signature")+" "+string(b))
		standard = append(standard, stdDelivery{r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"), b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true))...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil { // starts the browser, with no deadline
		t.Fatalf("start chromium: %v", err)
	}

	n := 0
	// step runs actions with a generous deadline, then saves a screenshot.
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(browser, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			loc, _ := chromedp.Run(browser, chromedp.Location())
			t.Fatalf("%s (at %s): %v", name, loc, err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: screenshot: %v", name, err)
		}
		n++
		if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("%02d-%s.png", n, name)), png, 0o644); err != nil {
			t.Fatal(err)
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
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }

	const email, password = "ops@example.com", "a long test password"
	step("setup",
		chromedp.Navigate(setupURL),
		chromedp.WaitVisible(css(`form[action="/setup"]`)),
		chromedp.SendKeys(css(`input[name=email]`), email),
		chromedp.SendKeys(css(`input[name=password]`), password),
		chromedp.SendKeys(css(`input[name=confirm]`), password),
	)
	step("apps-empty",
		chromedp.Click(css(`form[action="/setup"] button[type=submit]`)),
		chromedp.WaitVisible(css(`form[action="/apps"]`)),
	)
	step("signed-out",
		chromedp.Click(css(`form[action="/signout"] button`)),
		chromedp.WaitVisible(css(`form[action="/signin"]`)),
	)
	step("signin",
		chromedp.SendKeys(css(`input[name=email]`), email),
		chromedp.SendKeys(css(`input[name=password]`), password),
		chromedp.Click(css(`form[action="/signin"] button[type=submit]`)),
		chromedp.WaitVisible(css(`form[action="/apps"]`)),
	)

	// Create an app: its keys page follows.
	step("keys-empty",
		chromedp.SendKeys(css(`form[action="/apps"] input[name=name]`), "Web shop"),
		chromedp.SetValue(css(`form[action="/apps"] select[name=plan]`), "pro"),
		chromedp.Click(css(`form[action="/apps"] button[type=submit]`)),
		chromedp.WaitVisible(css(`form[action$="/settings/keys"]`)),
	)
	appPath := strings.TrimSuffix(strings.TrimPrefix(read(chromedp.Location()), base), "/settings/keys?notice=app_created")
	if !strings.HasPrefix(appPath, "/apps/") {
		t.Fatalf("after creating the app: at %s", appPath)
	}

	// Settings → API Keys: create a key, then call the API with it.
	step("key-created",
		chromedp.SendKeys(css(`form[action$="/settings/keys"] input[name=name]`), "backend"),
		chromedp.SetValue(css(`form[action$="/settings/keys"] select[name=role]`), "admin"),
		chromedp.Click(css(`form[action$="/settings/keys"] button[type=submit]`)),
		chromedp.WaitVisible(css(`#key-secret`)),
		chromedp.Click(css(`[data-copy=key-secret]`)),
	)
	key := read(chromedp.Value(css(`#key-secret`)))
	req, _ := http.NewRequest("GET", base+"/v1"+appPath+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the API with the dashboard's key %.10s…: status %d", key, resp.StatusCode)
	}

	// Content: create a block, watch the live preview, publish it.
	step("content-new",
		chromedp.Click(css(`nav.side a[href$="/content"]`)),
		chromedp.WaitVisible(css(`a[href$="/content/new"]`)),
		chromedp.Click(css(`a[href$="/content/new"]`)),
		chromedp.WaitVisible(css(`#editor`)),
		chromedp.SendKeys(css(`#editor input[name=name]`), "Spring banner"),
		chromedp.SendKeys(css(`textarea[name="items[0].content"]`), "Spring sale"),
		chromedp.SendKeys(css(`textarea[name="items[1].content"]`), "Everything 20% off this week."),
	)
	if got := read(chromedp.Text(css(`#preview .pv-heading`))); got != "Spring sale" {
		t.Fatalf("live preview heading=%q", got)
	}
	step("content-saved",
		chromedp.Click(css(`#editor .actions button[value=save]`)),
		chromedp.WaitVisible(css(`.notice`)),
	)
	step("content-published",
		chromedp.Click(css(`form[action$="/status"] button.primary`)),
		chromedp.WaitVisible(css(`.badge.s-published`)),
	)
	if got := read(chromedp.Text(css(`#preview .pv-text`))); got != "Everything 20% off this week." {
		t.Fatalf("preview text=%q", got)
	}

	// Webhooks: one to the local receiver, then its test event.
	step("webhook-new",
		chromedp.Click(css(`nav.side a[href$="/webhooks"]`)),
		chromedp.WaitVisible(css(`a[href$="/webhooks/new"]`)),
		chromedp.Click(css(`a[href$="/webhooks/new"]`)),
		chromedp.WaitVisible(css(`form[action$="/webhooks"] input[name=url]`)),
		chromedp.SendKeys(css(`input[name=url]`), receiver.URL+"/hook"),
	)
	step("webhook-created",
		chromedp.Click(css(`form[action$="/webhooks"] button.primary`)),
		chromedp.WaitVisible(css(`#hook-secret`)),
	)
	secret := read(chromedp.Value(css(`#hook-secret`)))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret=%q", secret)
	}
	step("webhook-test-sent",
		chromedp.Click(css(`form[action$="/test"] button`)),
		chromedp.WaitVisible(css(`.deliveries td.mono`)),
	)
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		got := len(received)
		mu.Unlock()
		if got > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the receiver got no test event within 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	if !strings.Contains(received[0], "sha256=") || !strings.Contains(received[0], "webhook.test") {
		t.Fatalf("received %q", received[0])
	}
	mu.Unlock()
	// The log shows the delivery once the attempt is recorded.
	var status string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := chromedp.Do(browser, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		status = read(chromedp.Text(css(`.deliveries tbody tr .badge`)))
		if status == "succeeded" {
			break
		}
	}
	if status != "succeeded" {
		t.Fatalf("delivery status in the log=%q", status)
	}
	step("webhook-delivery-log", chromedp.WaitVisible(css(`.deliveries .code.ok`)))
	if code := read(chromedp.Text(css(`.deliveries .code.ok`))); code != "204" {
		t.Fatalf("response code in the log=%q", code)
	}

	// Rotate the secret with a grace period of an hour: the new secret is
	// shown once, and the next delivery is signed with both.
	step("webhook-rotated",
		chromedp.SetValue(css(`form[action$="/rotate-secret"] select[name=gracePeriod]`), "1h"),
		chromedp.Click(css(`form[action$="/rotate-secret"] button`)),
		chromedp.WaitVisible(css(`#hook-secret`)),
		chromedp.Click(css(`[data-copy=hook-secret]`)),
	)
	rotated := read(chromedp.Value(css(`#hook-secret`)))
	if len(rotated) != 64 || rotated == secret {
		t.Fatalf("rotated secret=%q", rotated)
	}
	if got := read(chromedp.Text(css(`#previous-expires`))); !strings.Contains(got, "still signs beside the new one until") {
		t.Fatalf("previous secret: %q", got)
	}
	mu.Lock()
	seen := len(standard)
	mu.Unlock()
	step("webhook-test-after-rotation",
		chromedp.Click(css(`form[action$="/test"] button`)),
		chromedp.WaitNotPresent(css(`#hook-secret`)), // the page after the redirect
		chromedp.WaitVisible(css(`.deliveries td.mono`)),
	)
	var d stdDelivery
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		if len(standard) > seen {
			d = standard[seen]
		}
		mu.Unlock()
		if d.id != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the receiver got no test event after the rotation within 15s")
		}
	}
	sigs := strings.Fields(d.signature)
	if len(sigs) != 2 || sigs[0] != d.sign(rotated) || sigs[1] != d.sign(secret) {
		t.Fatalf("webhook-signature during the grace period=%q, want the new secret's then the old one's", d.signature)
	}

	campaignFlowInBrowser(t, base, appPath, key, step, read)
}

// stdDelivery is what a Standard Webhooks receiver checks.
type stdDelivery struct {
	id, timestamp, signature string
	body                     []byte
}

// sign is the Standard Webhooks v1 signature of the delivery with secret
// as a raw key.
func (d stdDelivery) sign(secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(d.id + "." + d.timestamp + "."))
	mac.Write(d.body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// campaignFlowInBrowser goes on where the first flow ended: a campaign
// created, started, fed 200 users and 40 goal events through the SDK
// routes, read on its results page, paused and completed from its
// buttons; an audience with an attribute and an event rule, checked for a
// matching and a non-matching user; and the event explorer filtered.
func campaignFlowInBrowser(t *testing.T, base, appPath, key string, step func(string, ...chromedp.Action[chromedp.Void]), read func(chromedp.Action[string]) string) {
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	count := func(sel string) int {
		t.Helper()
		n := read(chromedp.Evaluate[string](fmt.Sprintf("String(document.querySelectorAll(%q).length)", sel)))
		var v int
		fmt.Sscan(n, &v)
		return v
	}
	api := func(method, path string, body any) map[string]any {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+"/v1"+path, strings.NewReader(string(raw)))
		req.Header.Set("Authorization", "Bearer "+key)
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

	// A campaign with two variants over the published block.
	step("campaign-new",
		chromedp.Click(css(`nav.side a[href$="/campaigns"]`)),
		chromedp.WaitVisible(css(`a[href$="/campaigns/new"]`)),
		chromedp.Click(css(`a[href$="/campaigns/new"]`)),
		chromedp.WaitVisible(css(`form.campaign-form`)),
		chromedp.SendKeys(css(`form.campaign-form input[name=name]`), "Checkout test"),
		chromedp.SetValue(css(`input[name=endDate]`), time.Now().Add(30*24*time.Hour).UTC().Format("2006-01-02T15:04")),
		chromedp.SendKeys(css(`input[name=goalEventId]`), "purchase"),
		chromedp.SetValue(css(`select[name=statsEngine]`), "bayesian"),
	)
	block := read(chromedp.Value(css(`select[name="variants[0].contentViewId"] option:nth-child(2)`)))
	step("campaign-created",
		chromedp.SetValue(css(`select[name="variants[0].contentViewId"]`), block),
		chromedp.SetValue(css(`select[name="variants[1].contentViewId"]`), block),
		chromedp.Click(css(`form.campaign-form .actions button[value=save]`)),
		chromedp.WaitVisible(css(`.notice`)),
	)
	campaignPath := strings.TrimPrefix(read(chromedp.Location()), base)
	campaignPath = campaignPath[:strings.Index(campaignPath, "?")]
	campaignID := campaignPath[strings.LastIndex(campaignPath, "/")+1:]
	step("campaign-started",
		chromedp.Click(css(`.statusbar form button.primary`)), // Start
		chromedp.WaitVisible(css(`.statusbar .badge.s-active`)),
	)

	// 200 users through the SDK route; 40 of them reach the goal, most
	// of them in the second variant.
	converted := map[string]bool{}
	perVariant := map[float64]int{}
	for i := 0; i < 200; i++ {
		user := fmt.Sprintf("user-%03d", i)
		ans := api("POST", "/apps-external/"+strings.TrimPrefix(appPath, "/apps/")+"/campaigns/"+campaignID+"/variant",
			map[string]any{"userId": user, "attributes": map[string]any{"country": "DE"}})
		v, _ := ans["variantId"].(float64)
		perVariant[v]++
		converted[user] = false
	}
	var variants []float64
	for v := range perVariant {
		variants = append(variants, v)
	}
	if len(variants) != 2 {
		t.Fatalf("200 users went to %d variants", len(variants))
	}
	low, high := min(variants[0], variants[1]), max(variants[0], variants[1]) // the control is the first variant
	goals := map[float64]int{low: 4, high: 36}
	for i := 0; i < 200 && goals[low]+goals[high] > 0; i++ {
		user := fmt.Sprintf("user-%03d", i)
		ans := api("POST", "/apps-external/"+strings.TrimPrefix(appPath, "/apps/")+"/campaigns/"+campaignID+"/variant", map[string]any{"userId": user})
		v, _ := ans["variantId"].(float64)
		if goals[v] > 0 {
			goals[v]--
			converted[user] = true
			api("POST", appPath+"/events", map[string]any{"eventId": "purchase", "userId": user})
		}
	}
	if goals[low]+goals[high] > 0 {
		t.Fatalf("could not place 40 conversions: %v left (split %v)", goals, perVariant)
	}

	step("campaign-results",
		chromedp.Click(css(`nav.subtabs a[href$="/results"]`)),
		chromedp.WaitVisible(css(`#results`)),
	)
	summary := read(chromedp.Text(css(`.toolbar .muted`)))
	if !strings.Contains(summary, "200 impressions") || !strings.Contains(summary, "40 conversions") {
		t.Fatalf("results summary=%q", summary)
	}
	// The Bayesian engine decides, and the banner says so in its terms.
	if verdict := read(chromedp.Text(css(`#verdict`))); !strings.Contains(verdict, "chance to beat") {
		t.Fatalf("verdict=%q", verdict)
	}
	if engine := read(chromedp.Evaluate[string](`document.querySelector("#engine").dataset.value`)); engine != "bayesian" {
		t.Fatalf("deciding engine=%q", engine)
	}
	if n := count(`#compare tbody tr`); n != 1 {
		t.Fatalf("%d rows of sequential and Bayesian figures, want 1", n)
	}
	// Three charts, each drawn wide and narrow for the stylesheet to pick.
	if n, m := count(`svg.chart.wide`), count(`svg.chart.narrow`); n != 3 || m != 3 {
		t.Fatalf("%d wide and %d narrow charts on the results page", n, m)
	}
	step("campaign-preview",
		chromedp.Click(css(`nav.subtabs a[href$="/preview"]`)),
		chromedp.WaitVisible(css(`.preview-grid .pv-heading`)),
	)
	step("campaign-paused",
		chromedp.Click(css(`nav.subtabs a[href="`+campaignPath+`"]`)),
		chromedp.WaitVisible(css(`.statusbar`)),
		chromedp.Click(css(`.statusbar form:nth-of-type(1) button`)), // Pause
		chromedp.WaitVisible(css(`.statusbar .badge.s-paused`)),
	)
	step("campaign-completed",
		chromedp.Click(css(`.statusbar form:nth-of-type(2) button`)), // Complete
		chromedp.WaitVisible(css(`.statusbar .badge.s-completed`)),
	)
	step("campaign-list",
		chromedp.Click(css(`nav.side a[href$="/campaigns"]`)),
		chromedp.WaitVisible(css(`table.table`)),
	)

	// An audience: German users who reached the goal in the last 7 days.
	step("audience-new",
		chromedp.Click(css(`nav.side a[href$="/audiences"]`)),
		chromedp.WaitVisible(css(`a[href$="/audiences/new"]`)),
		chromedp.Click(css(`a[href$="/audiences/new"]`)),
		chromedp.WaitVisible(css(`input[name="rules[0].field"]`)),
		chromedp.SendKeys(css(`input[name=name]`), "German buyers"),
		chromedp.SendKeys(css(`input[name="rules[0].field"]`), "country"),
		chromedp.SendKeys(css(`input[name="rules[0].value"]`), "DE"),
		chromedp.Click(css(`button[value=addevent]`)),
		chromedp.WaitVisible(css(`input[name="rules[1].eventId"]`)),
		chromedp.SendKeys(css(`input[name="rules[1].eventId"]`), "purchase"),
	)
	step("audience-created",
		chromedp.Click(css(`.actions button[value=save]`)),
		chromedp.WaitVisible(css(`#customer-count`)),
	)
	if got := read(chromedp.Text(css(`#customer-count`))); got != "40" {
		t.Fatalf("audience counts %s customers, want 40", got)
	}
	var buyer, browser string
	for u, c := range converted {
		if c && buyer == "" {
			buyer = u
		}
		if !c && browser == "" {
			browser = u
		}
	}
	step("audience-check-match",
		chromedp.SendKeys(css(`form[action$="/check"] input[name=userId]`), buyer),
		chromedp.Click(css(`form[action$="/check"] button`)),
		chromedp.WaitVisible(css(`#check-result`)),
	)
	if got := read(chromedp.Text(css(`#check-result`))); !strings.Contains(got, buyer+" matches this audience") {
		t.Fatalf("check of %s: %q", buyer, got)
	}
	step("audience-check-nomatch",
		chromedp.SetValue(css(`form[action$="/check"] input[name=userId]`), browser),
		chromedp.Click(css(`form[action$="/check"] button`)),
		chromedp.WaitVisible(css(`#check-result.alert`)),
	)
	if got := read(chromedp.Text(css(`#check-result`))); !strings.Contains(got, "Rule 2 failed") {
		t.Fatalf("check of %s: %q", browser, got)
	}

	// The event explorer, filtered to the goal event.
	step("events",
		chromedp.Click(css(`nav.side a[href$="/events"]`)),
		chromedp.WaitVisible(css(`#events`)),
		chromedp.SendKeys(css(`form.filters input[name=eventId]`), "purchase"),
	)
	step("events-filtered",
		chromedp.Click(css(`form.filters button[type=submit]`)),
		chromedp.WaitVisible(css(`a.btn.ghost[href$="/events"]`)),
	)
	if n := count(`#events tbody tr[data-id]`); n != 40 {
		t.Fatalf("explorer shows %d purchase events, want 40", n)
	}
	step("user-timeline",
		chromedp.Click(css(`#events tbody tr[data-id] td:nth-child(3) a`)),
		chromedp.WaitVisible(css(`#assignments`)),
	)
	step("settings",
		chromedp.Click(css(`nav.side a[href$="/settings"]`)),
		chromedp.WaitVisible(css(`textarea[name=allowedOrigins]`)),
	)
}
