package handlers

import (
	"strings"
	"testing"
)

func TestHasNULEscape(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"name":"a\u0000b"}`, true},
		{`{"name":"\u0000"}`, true},
		{`{"name":"a\\u0000b"}`, false}, // an escaped backslash, then text
		{`{"name":"a\\\u0000"}`, true},
		{`{"name":"u0000"}`, false},
		{`{"name":"\u00001"}`, true},
		{`{"name":"\u0001"}`, false},
		{`{}`, false},
	} {
		if got := hasNULEscape([]byte(tc.body)); got != tc.want {
			t.Errorf("hasNULEscape(%s)=%v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestNULRefused: a NUL character, which PostgreSQL text cannot hold, is
// refused whole on both stores, on the SDK's routes as on the others, and
// nothing is stored.
func TestNULRefused(t *testing.T) {
	e := newEnv(t)
	for _, rt := range []struct{ method, path, key, body string }{
		{"POST", pathf("/v1/apps/%d/content", e.App.ID), e.Admin, `{"name":"a\u0000","status":"draft","items":[]}`},
		{"POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, `{"eventId":"signup","userId":"u\u0000"}`},
		{"POST", pathf("/v1/apps-external/%d/identify", e.App.ID), e.Cli, `{"userId":"u1","attributes":{"k":"v\u0000"}}`},
	} {
		rec := e.do(rt.method, rt.path, rt.key, rt.body)
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "NUL") {
			t.Fatalf("%s %s: %d %s, want 400 naming NUL", rt.method, rt.path, rec.Code, rec.Body.String())
		}
	}
	if rec := e.do("GET", pathf("/v1/apps/%d/events", e.App.ID), e.Admin, ""); strings.Contains(rec.Body.String(), "signup") {
		t.Fatalf("an event was stored: %s", rec.Body.String())
	}
}
