package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"service/store"
)

// webhookCreate registers a webhook through the API and returns its body.
func webhookCreate(e *testEnv, body map[string]any) map[string]any {
	e.t.Helper()
	if _, ok := body["url"]; !ok {
		body["url"] = "https://hooks.example.com/in"
	}
	if _, ok := body["events"]; !ok {
		body["events"] = []string{"*"}
	}
	return e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Admin, body)
}

// webhookKeys returns the sorted keys of a JSON object.
func webhookKeys(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

func TestWebhookAPICreateShape(t *testing.T) {
	e := newEnv(t)
	e.Srv.WebhookTimeout = 45 * time.Second
	m := webhookCreate(e, map[string]any{
		"url": "https://hooks.example.com/in", "events": []string{"webhook.campaign_started", "content.published", "content.published"},
		"secret": "whsec_abc", "headers": map[string]string{"X-Tenant": "acme"}, "description": "crm",
	})
	if got, want := webhookKeys(m), "appId,consecutiveFailures,createdAt,description,events,hasSecret,headers,id,maxRetries,previousSecretExpiresAt,secretRotatedAt,status,timeoutSeconds,totalFailures,totalSuccesses,updatedAt,url"; got != want {
		t.Fatalf("keys=%s\nwant %s", got, want)
	}
	for k, want := range map[string]any{
		"appId": float64(e.App.ID), "url": "https://hooks.example.com/in", "hasSecret": true, "maxRetries": float64(3),
		"timeoutSeconds": float64(45), "description": "crm", "status": "ACTIVE", "consecutiveFailures": float64(0),
		"totalSuccesses": float64(0), "totalFailures": float64(0),
	} {
		if m[k] != want {
			t.Fatalf("%s=%v, want %v", k, m[k], want)
		}
	}
	if !webhookJSONEqual(m["events"], []string{"campaign.started", "content.published"}) {
		t.Fatalf("events=%v", m["events"])
	}
	if h, _ := m["headers"].(map[string]any); h["X-Tenant"] != "acme" {
		t.Fatalf("headers=%v", m["headers"])
	}
	if !contentTimeRE.MatchString(m["createdAt"].(string)) {
		t.Fatalf("createdAt=%v", m["createdAt"])
	}
	id := num(m, "id")
	got := e.must(http.StatusOK, "GET", pathf("/v1/webhooks/%d", id), e.Read, nil)
	if _, ok := got["secret"]; ok || got["hasSecret"] != true {
		t.Fatalf("get=%v", got)
	}
	// An explicit timeout wins over the server default.
	m = webhookCreate(e, map[string]any{"timeoutSeconds": 5, "maxRetries": 0})
	if num(m, "timeoutSeconds") != 5 || num(m, "maxRetries") != 0 || m["hasSecret"] != false {
		t.Fatalf("created=%v", m)
	}
}

func webhookJSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestWebhookAPIValidation(t *testing.T) {
	e := newEnv(t)
	path := pathf("/v1/apps/%d/webhooks", e.App.ID)
	for _, tc := range []struct {
		name string
		body any
		want []string
	}{
		{"Empty", map[string]any{}, []string{"events", "url"}},
		{"All bad", map[string]any{"url": "mailto:a@b", "events": []string{"campaign.started", "campaign.start"}, "maxRetries": 11,
			"timeoutSeconds": 121, "headers": map[string]string{"X-Service-Signature": "x", "Content-Type": "a", "User-Agent": "b"}},
			[]string{"events[1]", "headers.Content-Type", "headers.User-Agent", "headers.X-Service-Signature", "maxRetries", "timeoutSeconds", "url"}},
		{"Wrong type", `{"url":"https://x.example","events":["*"],"maxRetries":"3"}`, []string{"maxRetries"}},
		{"Event not a string", `{"url":"https://x.example","events":["*",5]}`, []string{"events[1]"}},
		{"Header not a string", `{"url":"https://x.example","events":["*"],"headers":{"X-A":1}}`, []string{"headers.X-A"}},
		{"Zero timeout", map[string]any{"url": "https://x.example", "events": []string{"*"}, "timeoutSeconds": 0}, []string{"timeoutSeconds"}},
		{"Bad status", map[string]any{"url": "https://x.example", "events": []string{"*"}, "status": "PAUSED"}, []string{"status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", path, e.Admin, tc.body)
			if got, want := rec.Code, http.StatusBadRequest; got != want {
				t.Fatalf("status=%d, want %d: %s", got, want, rec.Body)
			}
			if got, want := errCode(t, rec), "INVALID_REQUEST"; got != want {
				t.Fatalf("code=%s, want %s", got, want)
			}
			if got, want := webhookKeys(fieldsOf(t, rec)), strings.Join(tc.want, ","); got != want {
				t.Fatalf("fields=%s, want %s (%s)", got, want, rec.Body)
			}
		})
	}
}

func TestWebhookAPIAccessAndLifecycle(t *testing.T) {
	e := newEnv(t)
	_, otherAdmin, _, _ := e.newApp("other", "enterprise", 1_000_000)
	id := num(webhookCreate(e, map[string]any{}), "id")
	for range 2 {
		webhookCreate(e, map[string]any{})
	}
	// Roles: read may look, client may not, another app sees nothing.
	for _, tc := range []struct {
		method, path, key string
		status            int
	}{
		{"GET", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Read, http.StatusOK},
		{"POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Read, http.StatusForbidden},
		{"GET", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Cli, http.StatusForbidden},
		{"GET", pathf("/v1/apps/%d/webhooks", e.App.ID), otherAdmin, http.StatusForbidden},
		{"GET", pathf("/v1/webhooks/%d", id), otherAdmin, http.StatusNotFound},
		{"PATCH", pathf("/v1/webhooks/%d", id), otherAdmin, http.StatusNotFound},
		{"DELETE", pathf("/v1/webhooks/%d", id), otherAdmin, http.StatusNotFound},
		{"POST", pathf("/v1/webhooks/%d/test", id), otherAdmin, http.StatusNotFound},
		{"GET", pathf("/v1/webhooks/%d/deliveries", id), otherAdmin, http.StatusNotFound},
		{"GET", "/v1/webhooks/abc", e.Admin, http.StatusBadRequest},
		{"GET", "/v1/webhooks/999", e.Admin, http.StatusNotFound},
		{"GET", pathf("/v1/webhooks/%d/deliveries/x", id), e.Admin, http.StatusBadRequest},
		{"GET", pathf("/v1/webhooks/%d/deliveries/999", id), e.Admin, http.StatusNotFound},
		{"GET", pathf("/v1/webhooks/%d/deliveries?status=done", id), e.Admin, http.StatusBadRequest},
		{"GET", pathf("/v1/webhooks/%d/deliveries?limit=0", id), e.Admin, http.StatusBadRequest},
	} {
		var body any
		if tc.method == "PATCH" {
			body = map[string]any{"description": "x"}
		}
		if rec := e.do(tc.method, tc.path, tc.key, body); rec.Code != tc.status {
			t.Fatalf("%s %s: status=%d, want %d: %s", tc.method, tc.path, rec.Code, tc.status, rec.Body)
		}
	}

	list := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/webhooks?limit=2", e.App.ID), e.Admin, nil)
	data := list["data"].([]any)
	p := list["pagination"].(map[string]any)
	if len(data) != 2 || num(data[0].(map[string]any), "id") <= num(data[1].(map[string]any), "id") ||
		p["hasMore"] != true || p["total"] != float64(3) || p["nextPage"] != float64(2) || p["nextCursor"] != "2" {
		t.Fatalf("list=%v", list)
	}

	m := e.must(http.StatusOK, "PATCH", pathf("/v1/webhooks/%d", id), e.Admin, map[string]any{
		"url": "http://127.0.0.1:9/x", "events": []string{"form.submitted"}, "secret": "s", "headers": map[string]string{"X-A": "b"},
		"maxRetries": 10, "timeoutSeconds": 120, "description": "new", "status": "FAILED"})
	if m["url"] != "http://127.0.0.1:9/x" || m["hasSecret"] != true || num(m, "maxRetries") != 10 || num(m, "timeoutSeconds") != 120 ||
		m["description"] != "new" || m["status"] != "FAILED" || !webhookJSONEqual(m["events"], []string{"form.submitted"}) {
		t.Fatalf("patched=%v", m)
	}
	rec := e.do("PATCH", pathf("/v1/webhooks/%d", id), e.Admin, map[string]any{"events": []string{}, "url": "x"})
	if got, want := webhookKeys(fieldsOf(t, rec)), "events,url"; rec.Code != http.StatusBadRequest || got != want {
		t.Fatalf("bad patch: %d %s", rec.Code, rec.Body)
	}

	e.must(http.StatusOK, "DELETE", pathf("/v1/webhooks/%d", id), e.Admin, nil)
	e.must(http.StatusNotFound, "GET", pathf("/v1/webhooks/%d", id), e.Admin, nil)
}

func TestWebhookAPIReenableResetsFailures(t *testing.T) {
	e := newEnv(t)
	id := num(webhookCreate(e, map[string]any{"maxRetries": 0}), "id")
	ctx := context.Background()
	for range store.WebhookFailureThreshold {
		e.must(http.StatusAccepted, "POST", pathf("/v1/webhooks/%d/test", id), e.Admin, nil)
		claimed, err := e.DB.ClaimDueDeliveries(ctx, time.Now(), store.ClaimOptions{Limit: 10, PerWebhook: 1, Lease: time.Second})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d: %v", len(claimed), err)
		}
		if err := e.DB.RecordAttempt(ctx, claimed[0], store.AttemptResult{At: time.Now(), Status: 500}, time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	m := e.must(http.StatusOK, "GET", pathf("/v1/webhooks/%d", id), e.Admin, nil)
	if m["status"] != "FAILED" || num(m, "consecutiveFailures") != 10 || num(m, "totalFailures") != 10 {
		t.Fatalf("webhook=%v", m)
	}
	m = e.must(http.StatusOK, "PATCH", pathf("/v1/webhooks/%d", id), e.Admin, map[string]any{"status": "ACTIVE"})
	if m["status"] != "ACTIVE" || num(m, "consecutiveFailures") != 0 || num(m, "totalFailures") != 10 {
		t.Fatalf("re-enabled=%v", m)
	}
}

func TestWebhookAPITestAndRedeliver(t *testing.T) {
	e := newEnv(t)
	id := num(webhookCreate(e, map[string]any{"events": []string{"campaign.started"}}), "id")
	d := e.must(http.StatusAccepted, "POST", pathf("/v1/webhooks/%d/test", id), e.Admin, nil)
	if got, want := webhookKeys(d), "attemptCount,attempts,createdAt,event,id,nextAttemptAt,payload,status,webhookId"; got != want {
		t.Fatalf("keys=%s, want %s", got, want)
	}
	payload := d["payload"].(map[string]any)
	if d["event"] != "webhook.test" || d["status"] != "pending" || num(d, "webhookId") != id || num(d, "attemptCount") != 0 ||
		len(d["attempts"].([]any)) != 0 || d["nextAttemptAt"] != d["createdAt"] ||
		num(payload, "webhookId") != id || payload["message"] != store.WebhookTestMessage || payload["sentAt"] != d["createdAt"] {
		t.Fatalf("test delivery=%v", d)
	}
	did := num(d, "id")

	ctx := context.Background()
	claimed, err := e.DB.ClaimDueDeliveries(ctx, time.Now(), store.ClaimOptions{Limit: 10, PerWebhook: 1, Lease: time.Second})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d: %v", len(claimed), err)
	}
	res := store.AttemptResult{At: time.Now(), Duration: 12 * time.Millisecond, Status: 201}
	if err := e.DB.RecordAttempt(ctx, claimed[0], res, time.Minute); err != nil {
		t.Fatal(err)
	}
	got := e.must(http.StatusOK, "GET", pathf("/v1/webhooks/%d/deliveries/%d", id, did), e.Read, nil)
	attempts := got["attempts"].([]any)
	if got["status"] != "succeeded" || got["nextAttemptAt"] != nil || len(attempts) != 1 || num(got, "attemptCount") != 1 {
		t.Fatalf("delivery=%v", got)
	}
	a := attempts[0].(map[string]any)
	if got, want := webhookKeys(a), "at,durationMs,error,responseStatus"; got != want {
		t.Fatalf("attempt keys=%s", got)
	}
	if num(a, "responseStatus") != 201 || a["error"] != nil || num(a, "durationMs") != 12 {
		t.Fatalf("attempt=%v", a)
	}

	r := e.must(http.StatusAccepted, "POST", pathf("/v1/webhooks/%d/deliveries/%d/redeliver", id, did), e.Admin, nil)
	if num(r, "id") != did || r["status"] != "pending" || r["nextAttemptAt"] == nil || num(r, "attemptCount") != 1 {
		t.Fatalf("redelivered=%v", r)
	}
	list := e.must(http.StatusOK, "GET", pathf("/v1/webhooks/%d/deliveries?status=pending", id), e.Admin, nil)
	if data := list["data"].([]any); len(data) != 1 || num(data[0].(map[string]any), "id") != did {
		t.Fatalf("pending=%v", list)
	}
	e.must(http.StatusNotFound, "POST", pathf("/v1/webhooks/%d/deliveries/%d/redeliver", id, did+1), e.Admin, nil)
	e.must(http.StatusForbidden, "POST", pathf("/v1/webhooks/%d/deliveries/%d/redeliver", id, did), e.Read, nil)
	// Another webhook of the same app does not own the delivery.
	other := num(webhookCreate(e, map[string]any{}), "id")
	e.must(http.StatusNotFound, "GET", pathf("/v1/webhooks/%d/deliveries/%d", other, did), e.Admin, nil)
}
