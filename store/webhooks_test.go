package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"service/internal/testclock"
)

// webhookEnv is a database with one app and a controllable clock.
type webhookEnv struct {
	t     *testing.T
	db    *DB
	app   int64
	clock *testclock.Clock
}

func newWebhookEnv(t *testing.T) *webhookEnv {
	t.Helper()
	db, app, clock := mustOpenApp(t, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	return &webhookEnv{t: t, db: db, app: app, clock: clock}
}

func (e *webhookEnv) hook(in WebhookInput) *Webhook {
	e.t.Helper()
	if in.URL == nil {
		in.URL = ptr("http://127.0.0.1:1/hook")
	}
	if in.Events == nil {
		in.Events = &[]string{"*"}
	}
	w, err := e.db.CreateWebhook(context.Background(), e.app, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func (e *webhookEnv) test(hookID int64) *Delivery {
	e.t.Helper()
	d, err := e.db.SendTestDelivery(context.Background(), e.app, hookID)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *webhookEnv) claim(limit, perHook int) []*ClaimedDelivery {
	e.t.Helper()
	c, err := e.db.ClaimDueDeliveries(context.Background(), e.clock.Now(), ClaimOptions{Limit: limit, PerWebhook: perHook, Lease: 10 * time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *webhookEnv) record(c *ClaimedDelivery, status int, msg string) {
	e.t.Helper()
	res := AttemptResult{At: e.clock.Now(), Duration: 5 * time.Millisecond, Status: status, Err: msg}
	if err := e.db.RecordAttempt(context.Background(), c, res, time.Minute); err != nil {
		e.t.Fatal(err)
	}
}

func (e *webhookEnv) delivery(hookID, id int64) *Delivery {
	e.t.Helper()
	d, err := e.db.FindDeliveryByID(context.Background(), e.app, hookID, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func (e *webhookEnv) webhook(id int64) *Webhook {
	e.t.Helper()
	w, err := e.db.FindWebhookByID(context.Background(), e.app, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func TestWebhookValidation(t *testing.T) {
	e := newWebhookEnv(t)
	many := map[string]string{}
	for i := range 21 {
		many[fmt.Sprintf("X-H%d", i)] = "v"
	}
	for _, tc := range []struct {
		name string
		in   WebhookInput
		want map[string]string
	}{
		{"Missing", WebhookInput{}, map[string]string{"url": "is required", "events": "must be a non-empty array of event kinds"}},
		{"Everything wrong", WebhookInput{
			URL: ptr("ftp://x/"), Events: &[]string{"content.published", "nope", "webhook.test"},
			Secret: ptr(strings.Repeat("s", 257)), MaxRetries: ptr(11), TimeoutSeconds: ptr(0),
			Description: ptr(strings.Repeat("d", 1001)), Status: ptr("active"),
			Headers: &map[string]string{"Content-Type": "text/plain", "x-service-event": "x", "Bad Name": "v", "X-Ok": "a\r\nb", "user-agent": "u"},
		}, map[string]string{
			"url": "must be an absolute http or https URL", "events[1]": "", "events[2]": "",
			"secret": "must be at most 256 characters", "maxRetries": "must be between 0 and 10",
			"timeoutSeconds": "must be between 1 and 120", "description": "must be at most 1000 characters",
			"status":               "must be one of ACTIVE, FAILED",
			"headers.Content-Type": "is set by the service and cannot be overridden", "headers.x-service-event": "is set by the service and cannot be overridden",
			"headers.user-agent": "is set by the service and cannot be overridden", "headers.Bad Name": "must be a valid HTTP header name",
			"headers.X-Ok": "must be at most 1024 characters without control characters",
		}},
		{"Relative URL", WebhookInput{URL: ptr("/hook"), Events: &[]string{"*"}}, map[string]string{"url": "must be an absolute http or https URL"}},
		{"No host", WebhookInput{URL: ptr("http:///x"), Events: &[]string{"*"}}, map[string]string{"url": "must be an absolute http or https URL"}},
		{"Empty events", WebhookInput{URL: ptr("https://x.example/"), Events: &[]string{}}, map[string]string{"events": "must be a non-empty array of event kinds"}},
		{"Too many headers", WebhookInput{URL: ptr("https://x.example/"), Events: &[]string{"*"}, Headers: &many}, map[string]string{"headers": "must have at most 20 headers"}},
		{"Duplicate header", WebhookInput{URL: ptr("https://x.example/"), Events: &[]string{"*"}, Headers: &map[string]string{"X-A": "1", "x-a": "2"}},
			map[string]string{"headers.x-a": "duplicates header X-A"}},
		{"Negative retries", WebhookInput{URL: ptr("https://x.example/"), Events: &[]string{"*"}, MaxRetries: ptr(-1), TimeoutSeconds: ptr(121)},
			map[string]string{"maxRetries": "must be between 0 and 10", "timeoutSeconds": "must be between 1 and 120"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.db.CreateWebhook(context.Background(), e.app, tc.in)
			wantCode(t, err, EINVALID)
			fields, _ := err.(*Error).Details["fields"].(map[string]any)
			if got, want := len(fields), len(tc.want); got != want {
				t.Fatalf("fields=%v, want %v", fields, tc.want)
			}
			for k, reason := range tc.want {
				got, ok := fields[k]
				if !ok || (reason != "" && got != reason) {
					t.Fatalf("fields[%q]=%v, want %q (all: %v)", k, got, reason, fields)
				}
			}
		})
	}
}

func TestWebhookCreateDefaultsAndUpdate(t *testing.T) {
	e := newWebhookEnv(t)
	ctx := context.Background()
	w := e.hook(WebhookInput{Events: &[]string{"webhook.content_published", "content.published", "webhook.campaign_winner_declared",
		"webhook.campaign_guardrail_regressed", "campaign.guardrail_regressed"},
		Secret: ptr("s3cret"), Headers: &map[string]string{"X-Tenant": "acme"}})
	if got, want := strings.Join(w.Events, ","), "content.published,campaign.winner_declared,campaign.guardrail_regressed"; got != want {
		t.Fatalf("events=%s, want %s", got, want)
	}
	if got, want := joinFmt(w.MaxRetries, w.TimeoutSeconds, w.Status, w.HasSecret, w.Headers["X-Tenant"]), "3 30 ACTIVE true acme"; got != want {
		t.Fatalf("defaults=%s, want %s", got, want)
	}
	b, _ := json.Marshal(w)
	if strings.Contains(string(b), "s3cret") {
		t.Fatalf("secret leaked: %s", b)
	}

	w, err := e.db.UpdateWebhook(ctx, e.app, w.ID, WebhookInput{Secret: ptr(""), Headers: &map[string]string{}, Events: &[]string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := joinFmt(w.HasSecret, len(w.Headers), w.Events), "false 0 [*]"; got != want {
		t.Fatalf("after update=%s, want %s", got, want)
	}

	other, err := e.db.CreateApp(ctx, "other", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.db.FindWebhookByID(ctx, other.ID, w.ID)
	wantCode(t, err, ENOTFOUND)
	_, err = e.db.UpdateWebhook(ctx, other.ID, w.ID, WebhookInput{Status: ptr(WebhookActive)})
	wantCode(t, err, ENOTFOUND)
	wantCode(t, e.db.DeleteWebhook(ctx, other.ID, w.ID), ENOTFOUND)
	_, err = e.db.SendTestDelivery(ctx, other.ID, w.ID)
	wantCode(t, err, ENOTFOUND)
}

func TestWebhookRetryScheduleAndFailure(t *testing.T) {
	e := newWebhookEnv(t)
	w := e.hook(WebhookInput{MaxRetries: ptr(3), Secret: ptr("topsecret")})
	d := e.test(w.ID)
	if d.Status != DeliveryPending || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(e.clock.Now()) {
		t.Fatalf("queued delivery=%+v", d)
	}
	start := e.clock.Now()
	// Retry k waits base * 2^(k-1) after the failure: 1, 2, 4 minutes.
	var offsets []time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		if attempt > 1 {
			due := e.delivery(w.ID, d.ID).NextAttemptAt.Time
			e.clock.Set(due.Add(-time.Millisecond))
			if early := e.claim(10, 1); len(early) != 0 {
				t.Fatalf("attempt %d claimable before it is due", attempt)
			}
			e.clock.Set(due)
		}
		got := e.claim(10, 1)
		if len(got) != 1 || got[0].ID != d.ID || got[0].Attempt != attempt {
			t.Fatalf("attempt %d: claimed %+v", attempt, got)
		}
		offsets = append(offsets, e.clock.Now().Sub(start))
		if again := e.claim(10, 5); len(again) != 0 {
			t.Fatalf("claimed twice: %+v", again)
		}
		e.record(got[0], 0, "dial tcp: connection refused; secret topsecret")
		if next, ok, err := e.db.NextDeliveryDue(context.Background(), e.clock.Now()); attempt < 4 &&
			(err != nil || !ok || !next.Equal(e.clock.Now().Add(RetryDelay(time.Minute, attempt)))) {
			t.Fatalf("next due %v %v %v after attempt %d", next, ok, err, attempt)
		}
	}
	if got, want := joinFmt(offsets), "[0s 1m0s 3m0s 7m0s]"; got != want {
		t.Fatalf("attempts at %s, want %s", got, want)
	}
	got := e.delivery(w.ID, d.ID)
	if got.Status != DeliveryFailed || got.AttemptCount != 4 || len(got.Attempts) != 4 || got.NextAttemptAt != nil {
		t.Fatalf("delivery=%+v", got)
	}
	if msg := *got.Attempts[0].Error; strings.Contains(msg, "topsecret") || got.Attempts[0].ResponseStatus != nil {
		t.Fatalf("attempt=%+v", got.Attempts[0])
	}
	hook := e.webhook(w.ID)
	if got, want := joinFmt(hook.Status, hook.ConsecutiveFailures, hook.TotalFailures, hook.TotalSuccesses), "ACTIVE 4 4 0"; got != want {
		t.Fatalf("webhook=%s, want %s", got, want)
	}

	// A redelivery keeps the id, gets a fresh budget, and success resets
	// the consecutive failures.
	e.clock.Add(time.Hour)
	rd, err := e.db.RedeliverDelivery(context.Background(), e.app, w.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rd.ID != d.ID || rd.Status != DeliveryPending || !rd.NextAttemptAt.Equal(e.clock.Now()) {
		t.Fatalf("redelivered=%+v", rd)
	}
	c := e.claim(10, 1)
	if len(c) != 1 || c[0].Attempt != 1 {
		t.Fatalf("claimed %+v", c)
	}
	e.record(c[0], 204, "")
	got = e.delivery(w.ID, d.ID)
	if got.Status != DeliverySucceeded || got.AttemptCount != 5 || *got.Attempts[4].ResponseStatus != 204 {
		t.Fatalf("delivery=%+v", got)
	}
	hook = e.webhook(w.ID)
	if got, want := joinFmt(hook.ConsecutiveFailures, hook.TotalFailures, hook.TotalSuccesses), "0 4 1"; got != want {
		t.Fatalf("webhook=%s, want %s", got, want)
	}
	if c := e.claim(10, 1); len(c) != 0 {
		t.Fatalf("succeeded delivery claimed again: %+v", c)
	}
}

func TestWebhookFailedAfterTenAndReenable(t *testing.T) {
	e := newWebhookEnv(t)
	w := e.hook(WebhookInput{MaxRetries: ptr(0)})
	var last *Delivery
	var queued *Delivery // queued while the last attempts fail
	for i := range WebhookFailureThreshold {
		last = e.test(w.ID)
		c := e.claim(10, 1)
		if i == WebhookFailureThreshold-1 {
			queued = e.test(w.ID)
		}
		if len(c) != 1 {
			t.Fatalf("attempt %d: claimed %d", i+1, len(c))
		}
		e.record(c[0], 500, "")
	}
	hook := e.webhook(w.ID)
	if got, want := joinFmt(hook.Status, hook.ConsecutiveFailures), "FAILED 10"; got != want {
		t.Fatalf("webhook=%s, want %s", got, want)
	}
	if d := e.delivery(w.ID, last.ID); d.Status != DeliveryFailed {
		t.Fatalf("last delivery %s", d.Status)
	}
	// Its pending deliveries wait, unscheduled, and new events skip it.
	if d := e.delivery(w.ID, queued.ID); d.Status != DeliveryPending || d.NextAttemptAt != nil {
		t.Fatalf("queued delivery of a FAILED webhook=%+v", d)
	}
	name, pub := "x", ContentPublished
	if _, err := e.db.CreateContent(context.Background(), e.app, ContentInput{Name: &name, Status: &pub}); err != nil {
		t.Fatal(err)
	}
	waiting := e.test(w.ID)
	if waiting.NextAttemptAt != nil {
		t.Fatalf("test delivery of a FAILED webhook scheduled at %v", waiting.NextAttemptAt)
	}
	if _, err := e.db.RedeliverDelivery(context.Background(), e.app, w.ID, last.ID); err != nil {
		t.Fatal(err)
	}
	if c := e.claim(10, 1); len(c) != 0 {
		t.Fatalf("FAILED webhook claimed %+v", c)
	}
	if _, ok, _ := e.db.NextDeliveryDue(context.Background(), e.clock.Now()); ok {
		t.Fatal("NextDeliveryDue reports a delivery of a FAILED webhook")
	}
	notified := 0
	e.db.Notify = func() { notified++ }
	hook, err := e.db.UpdateWebhook(context.Background(), e.app, w.ID, WebhookInput{Status: ptr(WebhookActive)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := joinFmt(hook.Status, hook.ConsecutiveFailures, hook.TotalFailures, notified), "ACTIVE 0 10 1"; got != want {
		t.Fatalf("re-enabled=%s, want %s", got, want)
	}
	if d := e.delivery(w.ID, queued.ID); d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(e.clock.Now()) {
		t.Fatalf("re-enabled webhook's delivery=%+v, want due now", d)
	}
	c := e.claim(10, 5)
	if len(c) != 3 {
		t.Fatalf("after re-enable claimed %d, want the 3 waiting deliveries", len(c))
	}
}

func TestWebhookLeaseAndStaleClaim(t *testing.T) {
	e := newWebhookEnv(t)
	w := e.hook(WebhookInput{TimeoutSeconds: ptr(5)})
	d := e.test(w.ID)
	first := e.claim(10, 1)
	if len(first) != 1 {
		t.Fatal("not claimed")
	}
	// Lease = timeout (5s) + 10s; the claim is held until then.
	e.clock.Add(15*time.Second - time.Millisecond)
	if c := e.claim(10, 1); len(c) != 0 {
		t.Fatal("claimed before the lease expired")
	}
	e.clock.Add(time.Millisecond)
	second := e.claim(10, 1)
	if len(second) != 1 || second[0].Claim == first[0].Claim {
		t.Fatalf("reclaim %+v", second)
	}
	// The first sender finally answers: its attempt is recorded, but the
	// delivery belongs to the second claim.
	e.record(first[0], 200, "")
	if got := e.delivery(w.ID, d.ID); got.Status != DeliveryPending || got.AttemptCount != 1 {
		t.Fatalf("stale claim changed the delivery: %+v", got)
	}
	e.record(second[0], 200, "")
	if got := e.delivery(w.ID, d.ID); got.Status != DeliverySucceeded || got.AttemptCount != 2 {
		t.Fatalf("delivery=%+v", got)
	}
	// Released claims are claimable at once.
	d2 := e.test(w.ID)
	c := e.claim(10, 1)
	if err := e.db.ReleaseDelivery(context.Background(), c[0]); err != nil {
		t.Fatal(err)
	}
	if c := e.claim(10, 1); len(c) != 1 || c[0].ID != d2.ID {
		t.Fatalf("released delivery not claimable: %+v", c)
	}
	// A delivery deleted with its webhook mid-send is ignored.
	if err := e.db.DeleteWebhook(context.Background(), e.app, w.ID); err != nil {
		t.Fatal(err)
	}
	e.record(c[0], 200, "")
}

func TestWebhookClaimFairness(t *testing.T) {
	e := newWebhookEnv(t)
	slow := e.hook(WebhookInput{})
	fast := e.hook(WebhookInput{})
	for range 50 {
		e.test(slow.ID)
	}
	e.clock.Add(time.Second)
	f := e.test(fast.ID)
	c := e.claim(4, 2)
	if len(c) != 3 {
		t.Fatalf("claimed %d, want 3 (2 of the backlog, 1 of the other)", len(c))
	}
	var gotFast bool
	for _, x := range c {
		gotFast = gotFast || x.ID == f.ID
	}
	if !gotFast {
		t.Fatal("the backlog of one webhook starved another")
	}
	// The caller's sends in flight count against the cap.
	inFlight := map[int64]int{slow.ID: 2, fast.ID: 1}
	more, err := e.db.ClaimDueDeliveries(context.Background(), e.clock.Now(), ClaimOptions{Limit: 4, PerWebhook: 2, InFlight: inFlight})
	if err != nil || len(more) != 0 {
		t.Fatalf("claimed %d beyond the per-webhook cap: %v", len(more), err)
	}
	inFlight[slow.ID] = 1
	if more, _ = e.db.ClaimDueDeliveries(context.Background(), e.clock.Now(), ClaimOptions{Limit: 4, PerWebhook: 2, InFlight: inFlight}); len(more) != 1 {
		t.Fatalf("claimed %d with one slot free, want 1", len(more))
	}
}

func TestWebhookDeliveryListPaging(t *testing.T) {
	e := newWebhookEnv(t)
	ctx := context.Background()
	w := e.hook(WebhookInput{})
	for range 3 {
		e.test(w.ID)
	}
	c := e.claim(1, 1)
	e.record(c[0], 503, "")
	list, p, err := e.db.FindDeliveries(ctx, e.app, w.ID, "", ListOptions{Limit: 2, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID <= list[1].ID || !p.HasMore || p.Total != 3 {
		t.Fatalf("list=%v p=%+v", list, p)
	}
	var payload struct {
		WebhookID int64  `json:"webhookId"`
		Message   string `json:"message"`
		SentAt    string `json:"sentAt"`
	}
	if err := json.Unmarshal(list[0].Payload, &payload); err != nil || payload.WebhookID != w.ID || payload.Message != WebhookTestMessage {
		t.Fatalf("payload=%s", list[0].Payload)
	}
	list, _, err = e.db.FindDeliveries(ctx, e.app, w.ID, DeliveryPending, ListOptions{Limit: 20, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("pending=%d", len(list))
	}
	if a := list[2].Attempts; len(a) != 1 || *a[0].ResponseStatus != 503 || a[0].DurationMS != 5 {
		t.Fatalf("attempts=%+v", a)
	}
}

func TestWebhookRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want time.Duration
	}{{0, time.Minute}, {1, time.Minute}, {2, 2 * time.Minute}, {3, 4 * time.Minute}, {11, 1024 * time.Minute}} {
		if got := RetryDelay(time.Minute, tc.k); got != tc.want {
			t.Fatalf("RetryDelay(1m, %d)=%s, want %s", tc.k, got, tc.want)
		}
	}
	if got := RetryDelay(time.Hour, 1000); got <= 0 {
		t.Fatalf("RetryDelay overflowed: %s", got)
	}
}

func TestFormDataValidation(t *testing.T) {
	fields := []FormField{
		{Name: "email", Type: "email", Required: true},
		{Name: "name", Type: "text", MinLength: ptr(2), MaxLength: ptr(5)},
		{Name: "age", Type: "number"},
		{Name: "agree", Type: "checkbox", Required: true},
		{Name: "news", Type: "checkbox"},
		{Name: "plan", Type: "select", Options: []string{"a", "b"}},
		{Name: "code", Type: "text", Pattern: `[A-Z]{3}`},
		{Name: "msg", Type: "textarea"},
	}
	for _, tc := range []struct {
		name, data string
		want       map[string]string
	}{
		{"Valid", `{"email":"a@b.co","name":"Zoë","age":"42.5","agree":true,"news":false,"plan":"b","code":"ABC","msg":"hi"}`, nil},
		{"Minimal", `{"email":"a@b.co","agree":true,"age":"","name":""}`, nil},
		{"Number as number", `{"email":"a@b.co","agree":true,"age":-1e3}`, nil},
		{"Missing required", `{"news":true}`, map[string]string{"data.email": "is required", "data.agree": "is required"}},
		{"Null and empty", `{"email":"","agree":null}`, map[string]string{"data.email": "is required", "data.agree": "is required"}},
		{"Wrong everything", `{"email":"nope","name":"x","age":"12abc","agree":false,"news":"yes","plan":"c","code":"ABCD","msg":5,"extra":1}`,
			map[string]string{
				"data.email": "must be an email address", "data.name": "must be at least 2 characters",
				"data.age": "must be a number", "data.agree": "must be checked", "data.news": "must be a boolean",
				"data.plan": "must be one of a, b", "data.code": "must match the pattern [A-Z]{3}", "data.msg": "must be a string",
				"data.extra": "is not a field of this form",
			}},
		{"Too long and unanchored", `{"email":"a@b.co","agree":true,"name":"abcdef","code":"xABC"}`,
			map[string]string{"data.name": "must be at most 5 characters", "data.code": "must match the pattern [A-Z]{3}"}},
		{"Bad numbers", `{"email":"a@b.co","agree":true,"age":"Infinity"}`, map[string]string{"data.age": "must be a number"}},
		{"Hex number", `{"email":"a@b.co","agree":true,"age":"0x10"}`, map[string]string{"data.age": "must be a number"}},
		{"Boolean number", `{"email":"a@b.co","agree":true,"age":true}`, map[string]string{"data.age": "must be a number"}},
		{"Object text", `{"email":{"a":1},"agree":true}`, map[string]string{"data.email": "must be a string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := FormSubmissionInput{ContentViewID: ptr[int64](1), Data: json.RawMessage(tc.data)}
			data, fe := in.validate()
			if len(fe) != 0 {
				t.Fatalf("body errors %v", fe)
			}
			validateFormData(fields, data, fe)
			if got, want := len(fe), len(tc.want); got != want {
				t.Fatalf("errors=%v, want %v", fe, tc.want)
			}
			for k, v := range tc.want {
				if fe[k] != v {
					t.Fatalf("%s=%q, want %q (all %v)", k, fe[k], v, fe)
				}
			}
		})
	}
}

func TestFormSubmitStoresAndEmits(t *testing.T) {
	e := newWebhookEnv(t)
	ctx := context.Background()
	hook := e.hook(WebhookInput{Events: &[]string{"webhook.form_submitted"}})
	name, pub := "Contact", ContentPublished
	c, err := e.db.CreateContent(ctx, e.app, ContentInput{Name: &name, Status: &pub,
		Items: json.RawMessage(`[{"type":"form","fields":[{"name":"z","type":"text"},{"name":"10","type":"text"},{"name":"a","type":"number"}]}]`)})
	if err != nil {
		t.Fatal(err)
	}
	user := "u1"
	sub, err := e.db.SubmitForm(ctx, e.app, FormSubmissionInput{ContentViewID: &c.ID, UserID: &user,
		Data: json.RawMessage(`{"z":"<b>&\"é\"</b>","a":1.50,"10":"ten"}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Key order as JSON.parse + JSON.stringify leave it: the integer-like
	// key first, then insertion order; numbers as JavaScript writes them.
	data := `{"10":"ten","z":"<b>&\"é\"</b>","a":1.5}`
	want := fmt.Sprintf(`{"formSubmissionId":%d,"contentViewId":%d,"contentViewName":"Contact","submittedAt":%q,"data":%s,"userId":"u1","sessionId":null,"environment":null}`,
		sub.ID, c.ID, e.clock.Stamp(), data)
	list, _, err := e.db.FindDeliveries(ctx, e.app, hook.ID, "", ListOptions{Limit: 10, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Event != EventFormSubmitted || string(list[0].Payload) != want {
		t.Fatalf("deliveries=%v\npayload %s\nwant    %s", len(list), list[0].Payload, want)
	}
	subs, p, err := e.db.FindFormSubmissions(ctx, e.app, c.ID, ListOptions{Limit: 10, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 1 || string(subs[0].Data) != data || *subs[0].UserID != "u1" || subs[0].SessionID != nil {
		t.Fatalf("stored=%+v", subs[0])
	}

	// Unpublished or formless blocks refuse, and nothing is stored.
	draft := ContentDraft
	if _, err := e.db.UpdateContent(ctx, e.app, c.ID, ContentInput{Status: &draft}); err != nil {
		t.Fatal(err)
	}
	_, err = e.db.SubmitForm(ctx, e.app, FormSubmissionInput{ContentViewID: &c.ID, Data: json.RawMessage(`{}`)})
	wantCode(t, err, EINVALID)
	_, err = e.db.SubmitForm(ctx, e.app, FormSubmissionInput{ContentViewID: ptr[int64](999), Data: json.RawMessage(`{}`)})
	wantCode(t, err, ENOTFOUND)
	if _, p, _ := e.db.FindFormSubmissions(ctx, e.app, 0, ListOptions{Limit: 10, Page: 1}); p.Total != 1 {
		t.Fatalf("total=%d after refusals", p.Total)
	}
}
