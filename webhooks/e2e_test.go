package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"service/handlers"
	"service/internal/storetest"
	"service/internal/testwait"
	"service/store"
	"service/webhooks"
)

// e2eEnv is the real API on a real database, with a dispatcher sending to
// real local receivers.
type e2eEnv struct {
	t     testing.TB
	DB    *store.DB
	API   *handlers.Server
	App   int64
	Admin string
	Cli   string
}

func e2eNew(t testing.TB) *e2eEnv {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.DB(t, filepath.Join(t.TempDir(), "hooks.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app, err := db.CreateApp(ctx, "e2e", "enterprise", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	_, admin, err := db.CreateKey(ctx, app.ID, store.RoleAdmin, "admin")
	if err != nil {
		t.Fatal(err)
	}
	_, cli, err := db.CreateKey(ctx, app.ID, store.RoleClient, "sdk")
	if err != nil {
		t.Fatal(err)
	}
	api := handlers.New(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &e2eEnv{t: t, DB: db, API: api, App: app.ID, Admin: admin, Cli: cli}
}

// start runs a dispatcher until the test ends. It must be called before the
// test writes concurrently, since it installs DB.Notify.
func (e *e2eEnv) start(base time.Duration, mod func(*webhooks.Dispatcher)) {
	e.t.Helper()
	d := &webhooks.Dispatcher{DB: e.DB, RetryBase: base, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(d)
	}
	e.DB.Notify = d.Wake
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("dispatcher: %v", err)
		}
	})
}

// call sends a request through the real router and wants status.
func (e *e2eEnv) call(want int, method, path, key string, body any) map[string]any {
	e.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	e.API.ServeHTTP(rec, req)
	if rec.Code != want {
		e.t.Fatalf("%s %s: status=%d, want %d: %s", method, path, rec.Code, want, rec.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return m
}

func (e *e2eEnv) hook(body map[string]any) int64 {
	e.t.Helper()
	if _, ok := body["events"]; !ok {
		body["events"] = []string{"*"}
	}
	return e2eNum(e.call(http.StatusCreated, "POST", fmt.Sprintf("/v1/apps/%d/webhooks", e.App), e.Admin, body), "id")
}

func (e *e2eEnv) webhook(id int64) map[string]any {
	e.t.Helper()
	return e.call(http.StatusOK, "GET", fmt.Sprintf("/v1/webhooks/%d", id), e.Admin, nil)
}

func (e *e2eEnv) deliveries(hook int64) []map[string]any {
	e.t.Helper()
	m := e.call(http.StatusOK, "GET", fmt.Sprintf("/v1/webhooks/%d/deliveries?limit=100", hook), e.Admin, nil)
	var out []map[string]any
	for _, d := range m["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

func (e *e2eEnv) publish(name string) map[string]any {
	e.t.Helper()
	return e.call(http.StatusCreated, "POST", fmt.Sprintf("/v1/apps/%d/content", e.App), e.Admin, map[string]any{
		"name": name, "status": "published", "items": []any{map[string]any{"type": "text", "content": name}}})
}

func e2eNum(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

// e2eHit is one request a receiver got.
type e2eHit struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// Event returns the X-Service-Event header.
func (h e2eHit) Event() string { return h.Header.Get("X-Service-Event") }

// Data returns the raw bytes of the envelope's data member.
func (h e2eHit) Data(t testing.TB) []byte {
	t.Helper()
	i := bytes.Index(h.Body, []byte(`,"data":`))
	if i < 0 || h.Body[len(h.Body)-1] != '}' {
		t.Fatalf("not an envelope: %s", h.Body)
	}
	return h.Body[i+len(`,"data":`) : len(h.Body)-1]
}

// e2eReceiver is a local webhook receiver answering status(n) to its n-th
// request (1-based), 200 when status is nil.
type e2eReceiver struct {
	URL    string
	mu     sync.Mutex
	hits   []e2eHit
	status func(n int) int
	got    chan struct{}
}

func e2eListen(t testing.TB, status func(n int) int) *e2eReceiver {
	t.Helper()
	r := &e2eReceiver{status: status, got: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.hits = append(r.hits, e2eHit{time.Now(), req.Header.Clone(), body})
		n := len(r.hits)
		r.mu.Unlock()
		select {
		case r.got <- struct{}{}:
		default:
		}
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hook"
	return r
}

// Hits returns a copy of the requests so far.
func (r *e2eReceiver) Hits() []e2eHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]e2eHit(nil), r.hits...)
}

// wait returns once n requests arrived, failing after timeout.
func (r *e2eReceiver) wait(t testing.TB, n int, timeout time.Duration) []e2eHit {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if h := r.Hits(); len(h) >= n {
			return h
		}
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("receiver got %d requests in %s, want %d", len(r.Hits()), timeout, n)
		}
	}
}

// e2ePatience bounds every wait for something that must happen. It is
// generous on purpose: on a loaded machine (and under -race) a delivery due
// in milliseconds may take seconds, and a wait that succeeds ends at once.
const e2ePatience = 30 * time.Second

// e2eEventually polls cond until it holds or timeout passes.
var e2eEventually = testwait.Until

// e2eNodeVerify checks every hit's signature the way a JavaScript receiver
// does: HMAC-SHA256 over JSON.stringify(JSON.parse(body).data).
func e2eNodeVerify(t *testing.T, secret string, hits []e2eHit) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is required for this test: %v", err)
	}
	dir := t.TempDir()
	type sample struct {
		Body      string `json:"body"`
		Signature string `json:"signature"`
	}
	var samples []sample
	for _, h := range hits {
		samples = append(samples, sample{string(h.Body), h.Header.Get("X-Service-Signature")})
	}
	input, _ := json.Marshal(map[string]any{"secret": secret, "samples": samples})
	script := `
const crypto = require('crypto');
const fs = require('fs');
const {secret, samples} = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let ok = 0;
for (const s of samples) {
  const parsed = JSON.parse(s.body);
  const expected = 'sha256=' + crypto.createHmac('sha256', secret).update(JSON.stringify(parsed.data)).digest('hex');
  const a = Buffer.from(expected), b = Buffer.from(s.signature);
  if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) {
    console.log('MISMATCH ' + parsed.event + ' ' + JSON.stringify(parsed.data));
    process.exit(1);
  }
  if (JSON.stringify(parsed) !== s.body) {
    console.log('NOT A FIXED POINT ' + s.body);
    process.exit(1);
  }
  ok++;
}
console.log('ok ' + ok);
`
	if err := os.WriteFile(filepath.Join(dir, "verify.js"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "input.json"), input, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "verify.js"), filepath.Join(dir, "input.json")).CombinedOutput()
	if got, want := strings.TrimSpace(string(out)), fmt.Sprintf("ok %d", len(hits)); err != nil || got != want {
		t.Fatalf("node verification: %v: %s", err, out)
	}
}

func TestE2EEventKindsSignedAndVerified(t *testing.T) {
	e := e2eNew(t)
	rcv := e2eListen(t, nil)
	e.start(50*time.Millisecond, nil)
	const secret = "whsec_e2e_ünï"
	hook := e.hook(map[string]any{"url": rcv.URL, "secret": secret,
		"headers": map[string]string{"X-Tenant": "acme", "Authorization": "Bearer receiver-token"}})
	// A webhook subscribed to something else gets none of these.
	quiet := e2eListen(t, nil)
	e.hook(map[string]any{"url": quiet.URL, "events": []string{"webhook.campaign_started"}})

	promo := e.publish("Promo")
	archived := e.call(http.StatusOK, "PATCH", fmt.Sprintf("/v1/content/%d", e2eNum(promo, "id")), e.Admin, map[string]any{"status": "archived"})
	form := e.call(http.StatusCreated, "POST", fmt.Sprintf("/v1/apps/%d/content", e.App), e.Admin, map[string]any{
		"name": "Contact <form> & \"more\"", "status": "published",
		"items": []any{map[string]any{"type": "form", "fields": []any{
			map[string]any{"name": "msg", "type": "textarea"}, map[string]any{"name": "10", "type": "text"},
			map[string]any{"name": "2", "type": "number"}, map[string]any{"name": "naïve", "type": "checkbox"},
		}}}})
	formData := `{"msg":"<b>\"Hi\" & 'bye'</b> — Zoë 中文 😀 \u2028","10":"ten","2":2.50,"naïve":true}`
	var dataObj map[string]any
	_ = json.Unmarshal([]byte(formData), &dataObj)
	sub := e.call(http.StatusCreated, "POST", fmt.Sprintf("/v1/apps-external/%d/submit-form", e.App), e.Cli, map[string]any{
		"contentViewId": e2eNum(form, "id"), "data": json.RawMessage(formData), "userId": "u-1", "sessionId": "s-1", "environment": "production"})
	test := e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)

	hits := rcv.wait(t, 5, e2ePatience)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	want := map[string]string{}
	want[fmt.Sprint(store.EventContentPublished, e2eNum(promo, "id"))] = fmt.Sprintf(`{"contentViewId":%d,"contentViewName":"Promo","publishedAt":%s,"hasItems":true}`,
		e2eNum(promo, "id"), q(promo["publishedAt"].(string)))
	want[fmt.Sprint(store.EventContentUnpublish, e2eNum(promo, "id"))] = fmt.Sprintf(`{"contentViewId":%d,"contentViewName":"Promo","unpublishedAt":%s,"previousStatus":"published"}`,
		e2eNum(promo, "id"), q(archived["updatedAt"].(string)))
	want[fmt.Sprint(store.EventContentPublished, e2eNum(form, "id"))] = fmt.Sprintf(`{"contentViewId":%d,"contentViewName":"Contact <form> & \"more\"","publishedAt":%s,"hasItems":true}`,
		e2eNum(form, "id"), q(form["publishedAt"].(string)))
	// Integer-like keys first, as JavaScript orders them; 2.50 as 2.5;
	// no HTML escaping; U+2028 raw, as JSON.stringify writes it.
	want[fmt.Sprint(store.EventFormSubmitted, e2eNum(form, "id"))] = fmt.Sprintf(`{"formSubmissionId":%d,"contentViewId":%d,"contentViewName":"Contact <form> & \"more\"","submittedAt":%s,"data":{"2":2.5,"10":"ten","msg":"<b>\"Hi\" & 'bye'</b> — Zoë 中文 😀 `+"\u2028"+`","naïve":true},"userId":"u-1","sessionId":"s-1","environment":"production"}`,
		e2eNum(sub, "formSubmissionId"), e2eNum(form, "id"), q(sub["submittedAt"].(string)))
	want[fmt.Sprint(store.EventWebhookTest, hook)] = fmt.Sprintf(`{"webhookId":%d,"message":%s,"sentAt":%s}`,
		hook, q(store.WebhookTestMessage), q(test["createdAt"].(string)))

	byID := map[string]map[string]any{}
	for _, d := range e.deliveries(hook) {
		byID[strconv.FormatInt(e2eNum(d, "id"), 10)] = d
	}
	for _, h := range hits {
		data := h.Data(t)
		var probe struct {
			ContentViewID int64 `json:"contentViewId"`
			WebhookID     int64 `json:"webhookId"`
		}
		_ = json.Unmarshal(data, &probe)
		key := fmt.Sprint(h.Event(), probe.ContentViewID+probe.WebhookID)
		if got, want := string(data), want[key]; got != want {
			t.Fatalf("%s data=%s\nwant %s", key, got, want)
		}
		delete(want, key)
		for name, v := range map[string]string{"Content-Type": "application/json", "User-Agent": "Service-Webhooks/1.0",
			"X-Tenant": "acme", "Authorization": "Bearer receiver-token"} {
			if got := h.Header.Get(name); got != v {
				t.Fatalf("%s: header %s=%q, want %q", key, name, got, v)
			}
		}
		d := byID[h.Header.Get("X-Service-Delivery-ID")]
		if d == nil || d["event"] != h.Event() {
			t.Fatalf("%s: X-Service-Delivery-ID %q names no delivery of this event", key, h.Header.Get("X-Service-Delivery-ID"))
		}
		envelope := fmt.Sprintf(`{"event":%s,"timestamp":%s,"data":%s}`, q(h.Event()), q(d["createdAt"].(string)), data)
		if string(h.Body) != envelope {
			t.Fatalf("body=%s\nwant %s", h.Body, envelope)
		}
		if !webhooks.Verify(secret, data, h.Header.Get("X-Service-Signature")) {
			t.Fatalf("%s: signature %s does not verify", key, h.Header.Get("X-Service-Signature"))
		}
	}
	if len(want) != 0 {
		t.Fatalf("events not delivered: %v", want)
	}
	e2eNodeVerify(t, secret, hits)

	e2eEventually(t, e2ePatience, "deliveries recorded", func() bool {
		for _, d := range e.deliveries(hook) {
			if d["status"] != "succeeded" {
				return false
			}
		}
		return true
	})
	w := e.webhook(hook)
	if e2eNum(w, "totalSuccesses") != 5 || e2eNum(w, "consecutiveFailures") != 0 {
		t.Fatalf("webhook=%v", w)
	}
	if n := len(quiet.Hits()); n != 0 {
		t.Fatalf("an unsubscribed webhook got %d deliveries", n)
	}
}

func TestE2ENoSignatureWithoutSecret(t *testing.T) {
	e := e2eNew(t)
	rcv := e2eListen(t, nil)
	e.start(50*time.Millisecond, nil)
	hook := e.hook(map[string]any{"url": rcv.URL})
	e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)
	h := rcv.wait(t, 1, e2ePatience)[0]
	if _, ok := h.Header["X-Service-Signature"]; ok {
		t.Fatalf("signature sent without a secret: %v", h.Header)
	}
}

func TestE2ERetryTiming(t *testing.T) {
	e := e2eNew(t)
	rcv := e2eListen(t, func(int) int { return http.StatusInternalServerError })
	const base = 50 * time.Millisecond
	e.start(base, nil)
	hook := e.hook(map[string]any{"url": rcv.URL, "maxRetries": 3})
	e.publish("Promo")
	hits := rcv.wait(t, 4, e2ePatience)
	for k := 1; k < len(hits); k++ {
		gap := hits[k].At.Sub(hits[k-1].At)
		want := base << (k - 1)
		// A retry is due base * 2^(k-1) after the previous failure was
		// recorded, which is after the receiver saw it: the gap is never
		// shorter (stored times lose up to a millisecond). It may be much
		// longer on a loaded machine, so there is no upper bound.
		if gap < want-2*time.Millisecond {
			t.Fatalf("retry %d came %s after the previous attempt, want at least %s", k, gap, want)
		}
		t.Logf("retry %d after %s (want %s)", k, gap.Round(time.Millisecond), want)
		if got, first := hits[k].Header.Get("X-Service-Delivery-ID"), hits[0].Header.Get("X-Service-Delivery-ID"); got != first {
			t.Fatalf("delivery id changed across retries: %s, then %s", first, got)
		}
	}
	var d map[string]any
	e2eEventually(t, e2ePatience, "delivery failed", func() bool {
		d = e.deliveries(hook)[0]
		return d["status"] == "failed"
	})
	attempts := d["attempts"].([]any)
	if len(attempts) != 4 || e2eNum(d, "attemptCount") != 4 || d["nextAttemptAt"] != nil {
		t.Fatalf("delivery=%v", d)
	}
	for _, a := range attempts {
		if a := a.(map[string]any); e2eNum(a, "responseStatus") != 500 || a["error"] != nil {
			t.Fatalf("attempt=%v", a)
		}
	}
	// No fifth attempt: retries are spent. (Waiting longer than a fifth
	// retry's delay can only let a wrong attempt show, never fail a right run.)
	time.Sleep(16 * base)
	if n := len(rcv.Hits()); n != 4 {
		t.Fatalf("receiver got %d requests, want 4", n)
	}
}

func TestE2EFailedAfterTenConsecutiveFailures(t *testing.T) {
	e := e2eNew(t)
	var healthy sync.Mutex
	up := false
	rcv := e2eListen(t, func(int) int {
		healthy.Lock()
		defer healthy.Unlock()
		if up {
			return http.StatusNoContent
		}
		return http.StatusInternalServerError
	})
	e.start(time.Millisecond, nil)
	hook := e.hook(map[string]any{"url": rcv.URL, "maxRetries": 10})
	e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)
	rcv.wait(t, 10, e2ePatience)
	var w map[string]any
	e2eEventually(t, e2ePatience, "webhook FAILED", func() bool {
		w = e.webhook(hook)
		return w["status"] == "FAILED"
	})
	if e2eNum(w, "consecutiveFailures") != 10 || e2eNum(w, "totalFailures") != 10 {
		t.Fatalf("webhook=%v", w)
	}
	// The delivery keeps its last retry but waits, unscheduled, while the
	// webhook is FAILED, and new events do not reach it.
	d := e.deliveries(hook)[0]
	if d["status"] != "pending" || e2eNum(d, "attemptCount") != 10 || d["nextAttemptAt"] != nil {
		t.Fatalf("delivery=%v", d)
	}
	e.publish("Ignored")
	// Retry 10 would have come 512 ms after the tenth attempt.
	time.Sleep(600 * time.Millisecond)
	if n := len(rcv.Hits()); n != 10 {
		t.Fatalf("a FAILED webhook got %d requests, want 10", n)
	}
	if n := len(e.deliveries(hook)); n != 1 {
		t.Fatalf("a FAILED webhook got %d deliveries queued, want 1", n)
	}

	healthy.Lock()
	up = true
	healthy.Unlock()
	w = e.call(http.StatusOK, "PATCH", fmt.Sprintf("/v1/webhooks/%d", hook), e.Admin, map[string]any{"status": "ACTIVE"})
	if w["status"] != "ACTIVE" || e2eNum(w, "consecutiveFailures") != 0 {
		t.Fatalf("re-enabled=%v", w)
	}
	rcv.wait(t, 11, e2ePatience)
	e2eEventually(t, e2ePatience, "delivery succeeded", func() bool {
		return e.deliveries(hook)[0]["status"] == "succeeded"
	})
	w = e.webhook(hook)
	if e2eNum(w, "consecutiveFailures") != 0 || e2eNum(w, "totalSuccesses") != 1 || w["status"] != "ACTIVE" {
		t.Fatalf("webhook=%v", w)
	}
}

// e2eHanging is a receiver that never answers (until the test ends or the
// client gives up), counting the requests it holds.
type e2eHanging struct {
	URL     string
	mu      sync.Mutex
	holding int
	peak    int
}

func e2eHang(t testing.TB) *e2eHanging {
	t.Helper()
	h := &e2eHanging{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.holding++
		h.peak = max(h.peak, h.holding)
		h.mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		h.mu.Lock()
		h.holding--
		h.mu.Unlock()
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	h.URL = srv.URL + "/hang"
	return h
}

func (h *e2eHanging) Peak() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

func TestE2EHangingReceiverDoesNotBlockOthers(t *testing.T) {
	e := e2eNew(t)
	hang := e2eHang(t)
	fast := e2eListen(t, nil)
	e.start(50*time.Millisecond, nil)
	e.hook(map[string]any{"url": hang.URL, "timeoutSeconds": 120})
	e.hook(map[string]any{"url": fast.URL})

	const n = 30
	var slowest time.Duration
	for i := range n {
		start := time.Now()
		e.publish(fmt.Sprintf("block %d", i))
		slowest = max(slowest, time.Since(start))
	}
	start := time.Now()
	fast.wait(t, n, e2ePatience)
	t.Logf("%d deliveries to the healthy receiver within %s of the last write; slowest API write %s; hanging receiver holds %d",
		n, time.Since(start).Round(time.Millisecond), slowest.Round(time.Microsecond), hang.Peak())
	// The hanging receiver holds its sends for 120 s: a write that waited
	// on it would take that long. 5 s leaves room for a loaded machine.
	if slowest > 5*time.Second {
		t.Fatalf("an API write took %s while a receiver hangs", slowest)
	}
	if got, want := hang.Peak(), 2; got > want {
		t.Fatalf("the hanging receiver holds %d requests, want at most %d (PerWebhook)", got, want)
	}
}

func TestE2ETimeoutIsAFailure(t *testing.T) {
	e := e2eNew(t)
	hang := e2eHang(t)
	e.start(time.Hour, nil)
	hook := e.hook(map[string]any{"url": hang.URL, "timeoutSeconds": 1})
	e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)
	var d map[string]any
	e2eEventually(t, e2ePatience, "timed-out attempt", func() bool {
		d = e.deliveries(hook)[0]
		return e2eNum(d, "attemptCount") == 1
	})
	a := d["attempts"].([]any)[0].(map[string]any)
	if a["responseStatus"] != nil || a["error"] != "timeout after 1s" || e2eNum(a, "durationMs") < 1000 || d["status"] != "pending" {
		t.Fatalf("delivery=%v", d)
	}
}

func TestE2EConnectionRefusedAndRedirect(t *testing.T) {
	e := e2eNew(t)
	// A closed port refuses the connection.
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/gone"
	closed.Close()
	target := e2eListen(t, nil)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	e.start(time.Hour, nil)
	refused := e.hook(map[string]any{"url": closedURL, "maxRetries": 0, "secret": "dont-leak-me"})
	moved := e.hook(map[string]any{"url": redirect.URL, "maxRetries": 0})
	e.publish("Promo")
	for _, tc := range []struct {
		hook  int64
		check func(a map[string]any) bool
	}{
		{refused, func(a map[string]any) bool {
			msg, _ := a["error"].(string)
			return a["responseStatus"] == nil && strings.Contains(msg, "refused") && !strings.Contains(msg, "dont-leak-me")
		}},
		{moved, func(a map[string]any) bool { return e2eNum(a, "responseStatus") == 307 && a["error"] == nil }},
	} {
		var d map[string]any
		e2eEventually(t, e2ePatience, "failed delivery", func() bool {
			d = e.deliveries(tc.hook)[0]
			return d["status"] == "failed"
		})
		if a := d["attempts"].([]any); len(a) != 1 || !tc.check(a[0].(map[string]any)) {
			t.Fatalf("delivery=%v", d)
		}
	}
	if n := len(target.Hits()); n != 0 {
		t.Fatalf("the redirect was followed %d times", n)
	}
}

func TestE2ERedeliverAndTestEndpoints(t *testing.T) {
	e := e2eNew(t)
	rcv := e2eListen(t, nil)
	e.start(50*time.Millisecond, nil)
	hook := e.hook(map[string]any{"url": rcv.URL, "events": []string{"form.submitted"}, "secret": "s"})
	test := e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)
	first := rcv.wait(t, 1, e2ePatience)[0]
	id := strconv.FormatInt(e2eNum(test, "id"), 10)
	if first.Event() != "webhook.test" || first.Header.Get("X-Service-Delivery-ID") != id {
		t.Fatalf("test delivery arrived as %s %s", first.Event(), first.Header.Get("X-Service-Delivery-ID"))
	}
	e2eEventually(t, e2ePatience, "test delivery succeeded", func() bool {
		return e.deliveries(hook)[0]["status"] == "succeeded"
	})
	r := e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/deliveries/%s/redeliver", hook, id), e.Admin, nil)
	// The answer is read after the commit, and the dispatcher, woken by
	// it, may already have sent and recorded the redelivery by then.
	if strconv.FormatInt(e2eNum(r, "id"), 10) != id || (r["status"] != "pending" && r["status"] != "succeeded") {
		t.Fatalf("redeliver answered %v", r)
	}
	second := rcv.wait(t, 2, e2ePatience)[1]
	// Same delivery, same bytes, same signature: receivers can deduplicate.
	if second.Header.Get("X-Service-Delivery-ID") != id || !bytes.Equal(second.Body, first.Body) ||
		second.Header.Get("X-Service-Signature") != first.Header.Get("X-Service-Signature") {
		t.Fatalf("redelivery differs:\n%s %s\n%s %s", first.Header, first.Body, second.Header, second.Body)
	}
	e2eEventually(t, e2ePatience, "redelivery recorded", func() bool {
		d := e.call(http.StatusOK, "GET", fmt.Sprintf("/v1/webhooks/%d/deliveries/%s", hook, id), e.Admin, nil)
		return d["status"] == "succeeded" && e2eNum(d, "attemptCount") == 2
	})
}
