package handlers

import (
	"net/http"
	"testing"
)

func TestWebhookRotateSecretRoute(t *testing.T) {
	e := newEnv(t)
	hook := num(webhookCreate(e, map[string]any{"secret": "old-secret"}), "id")
	path := pathf("/v1/webhooks/%d/rotate-secret", hook)

	t.Run("GeneratedWithDefaultGrace", func(t *testing.T) {
		m := e.must(http.StatusOK, "POST", path, e.Admin, nil)
		s, _ := m["secret"].(string)
		if len(s) != 64 || m["secretRotatedAt"] == nil || m["previousSecretExpiresAt"] == nil || num(m, "id") != hook {
			t.Fatalf("answer=%v", m)
		}
		got := e.must(http.StatusOK, "GET", pathf("/v1/webhooks/%d", hook), e.Admin, nil)
		if _, shown := got["secret"]; shown || got["hasSecret"] != true || got["secretRotatedAt"] != m["secretRotatedAt"] ||
			got["previousSecretExpiresAt"] != m["previousSecretExpiresAt"] {
			t.Fatalf("GET=%v", got)
		}
	})
	t.Run("ChosenSecretAndSeconds", func(t *testing.T) {
		m := e.must(http.StatusOK, "POST", path, e.Admin, map[string]any{"secret": "chosen-secret", "gracePeriod": 60})
		if m["secret"] != "chosen-secret" {
			t.Fatalf("answer=%v", m)
		}
	})
	for _, tc := range []struct {
		name, path, key string
		body            any
		status          int
		code, field     string
	}{
		{"BadGrace", path, e.Admin, map[string]any{"gracePeriod": "forever"}, http.StatusBadRequest, "INVALID_REQUEST", "gracePeriod"},
		{"GraceTooLong", path, e.Admin, map[string]any{"gracePeriod": 2592001}, http.StatusBadRequest, "INVALID_REQUEST", "gracePeriod"},
		{"EmptySecret", path, e.Admin, map[string]any{"secret": ""}, http.StatusBadRequest, "INVALID_REQUEST", "secret"},
		{"NotJSON", path, e.Admin, "[1]", http.StatusBadRequest, "INVALID_REQUEST", ""},
		{"ReadKey", path, e.Read, nil, http.StatusForbidden, "FORBIDDEN", ""},
		{"ClientKey", path, e.Cli, nil, http.StatusForbidden, "FORBIDDEN", ""},
		{"Unknown", pathf("/v1/webhooks/%d/rotate-secret", hook+100), e.Admin, nil, http.StatusNotFound, "NOT_FOUND", ""},
		{"NotNumeric", "/v1/webhooks/abc/rotate-secret", e.Admin, nil, http.StatusBadRequest, "INVALID_REQUEST", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", tc.path, tc.key, tc.body)
			if rec.Code != tc.status || errCode(t, rec) != tc.code {
				t.Fatalf("status=%d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.code)
			}
			if tc.field != "" && fieldsOf(t, rec)[tc.field] == nil {
				t.Fatalf("details.fields=%v, want %s", fieldsOf(t, rec), tc.field)
			}
		})
	}
	t.Run("OtherApp", func(t *testing.T) {
		_, admin, _, _ := e.newApp("other", "enterprise", 1000)
		rec := e.do("POST", path, admin, nil)
		if rec.Code != http.StatusNotFound {
			t.Fatalf("status=%d %s, want 404", rec.Code, rec.Body)
		}
	})
	t.Run("ReservedHeaderNames", func(t *testing.T) {
		rec := e.do("POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Admin, map[string]any{
			"url": "https://hooks.example.com/in", "events": []string{"*"}, "headers": map[string]string{"Webhook-Signature": "v1,forged"}})
		if rec.Code != http.StatusBadRequest || fieldsOf(t, rec)["headers.Webhook-Signature"] == nil {
			t.Fatalf("status=%d %s, want 400 naming headers.Webhook-Signature", rec.Code, rec.Body)
		}
	})
}
