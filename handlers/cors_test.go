package handlers

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// corsDo sends a real HTTP request to srv with the given headers.
func corsDo(t *testing.T, srv *httptest.Server, method, path string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// preflightHeaders are what a browser sends before a cross-origin POST
// with a key and a JSON body.
func preflightHeaders(origin, method string) map[string]string {
	return map[string]string{
		"Origin":                         origin,
		"Access-Control-Request-Method":  method,
		"Access-Control-Request-Headers": "authorization,content-type",
	}
}

func corsHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k)
		}
	}
	return out
}

func TestCORSPreflightSDKRoutes(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.Srv)
	defer srv.Close()
	app := e.App.ID
	for _, tc := range []struct{ path, method string }{
		{pathf("/v1/apps-external/%d/campaigns/1/variant", app), "POST"},
		{pathf("/v1/apps-external/%d/variants", app), "POST"},
		{pathf("/v1/apps-external/%d/identify", app), "POST"},
		{pathf("/v1/apps-external/%d/content/1", app), "GET"},
		{pathf("/v1/apps-external/%d/submit-form", app), "POST"},
		{"/v1/content/submit-form", "POST"},
		{pathf("/v1/apps/%d/events", app), "POST"},
		{pathf("/v1/apps/%d/events/batch", app), "POST"},
		{pathf("/api/v1/apps/%d/events/batch", app), "POST"},
		{pathf("/api/v1/apps-external/%d/variants", app), "POST"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			res := corsDo(t, srv, "OPTIONS", tc.path, preflightHeaders("https://shop.example", tc.method), "")
			h := res.Header
			if res.StatusCode != http.StatusNoContent {
				t.Fatalf("status=%d, want 204", res.StatusCode)
			}
			for k, want := range map[string]string{
				"Access-Control-Allow-Origin":  "*",
				"Access-Control-Allow-Methods": tc.method,
				"Access-Control-Allow-Headers": "Authorization, Content-Type, If-None-Match, Last-Event-ID",
				"Access-Control-Max-Age":       "7200",
				"Vary":                         "Origin",
			} {
				if got := h.Get(k); got != want {
					t.Fatalf("%s=%q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestCORSManagementRoutesSendNoHeaders(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.Srv)
	defer srv.Close()
	app := e.App.ID
	origin := map[string]string{"Origin": "https://shop.example", "Authorization": "Bearer " + e.Admin}
	for _, path := range []string{
		pathf("/v1/apps/%d/campaigns", app), pathf("/v1/apps/%d/content", app), "/v1/campaigns/1",
		pathf("/v1/apps/%d/webhooks", app), pathf("/v1/apps/%d/audiences", app), "/v1/content/1/submissions",
	} {
		t.Run("Preflight"+path, func(t *testing.T) {
			res := corsDo(t, srv, "OPTIONS", path, preflightHeaders("https://shop.example", "GET"), "")
			if res.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("status=%d, want 405", res.StatusCode)
			}
			if got := corsHeaders(res.Header); len(got) != 0 {
				t.Fatalf("CORS headers %v on a management route", got)
			}
			if allow := res.Header.Get("Allow"); allow == "" || strings.Contains(allow, "OPTIONS") {
				t.Fatalf("Allow=%q, want the route's methods without OPTIONS", allow)
			}
		})
	}
	// GET /apps/{appId}/events is management even though POST on the same
	// path is an SDK route.
	res := corsDo(t, srv, "GET", pathf("/v1/apps/%d/events", app), origin, "")
	if res.StatusCode != http.StatusOK || len(corsHeaders(res.Header)) != 0 {
		t.Fatalf("GET events: status=%d CORS headers %v, want 200 and none", res.StatusCode, corsHeaders(res.Header))
	}
	res = corsDo(t, srv, "GET", pathf("/v1/apps/%d/campaigns", app), origin, "")
	if res.StatusCode != http.StatusOK || len(corsHeaders(res.Header)) != 0 {
		t.Fatalf("GET campaigns: status=%d CORS headers %v, want 200 and none", res.StatusCode, corsHeaders(res.Header))
	}
	// A wrong method on an SDK path lists OPTIONS, which it serves.
	res = corsDo(t, srv, "GET", pathf("/v1/apps-external/%d/variants", app), origin, "")
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "OPTIONS, POST" {
		t.Fatalf("GET variants: status=%d Allow=%q, want 405 and \"OPTIONS, POST\"", res.StatusCode, res.Header.Get("Allow"))
	}
}

func TestCORSActualAnswers(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.Srv)
	defer srv.Close()
	events := pathf("/v1/apps/%d/events", e.App.ID)
	for _, tc := range []struct {
		name, key string
		status    int
	}{
		{"Created", e.Cli, http.StatusCreated},
		{"NoKey", "", http.StatusUnauthorized}, // the page can read why
		{"ReadKey", e.Read, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"Origin": "https://shop.example", "Content-Type": "application/json"}
			if tc.key != "" {
				hdr["Authorization"] = "Bearer " + tc.key
			}
			res := corsDo(t, srv, "POST", events, hdr, `{"eventId":"x"}`)
			if res.StatusCode != tc.status {
				t.Fatalf("status=%d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Fatalf("Allow-Origin=%q, want *", got)
			}
			if got := res.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(got, "X-RateLimit-Remaining") || !strings.Contains(got, "Retry-After") {
				t.Fatalf("Expose-Headers=%q, want the rate-limit headers", got)
			}
		})
	}
}

func TestCORSPerAppOrigins(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.Srv)
	defer srv.Close()
	other, _, _, _ := e.newApp("other", "enterprise", 1_000_000)
	if err := e.DB.SetAppAllowedOrigins(context.Background(), e.App.ID, []string{"https://a.example", "http://localhost:3000"}); err != nil {
		t.Fatal(err)
	}
	variants := pathf("/v1/apps-external/%d/variants", e.App.ID)
	for _, tc := range []struct{ name, origin, want string }{
		{"Listed", "https://a.example", "https://a.example"},
		{"ListedWithPort", "http://localhost:3000", "http://localhost:3000"},
		{"CaseInsensitive", "https://A.example", "https://A.example"},
		{"Unlisted", "https://evil.example", ""},
		{"OtherPort", "http://localhost:3001", ""},
		{"OtherScheme", "http://a.example", ""},
		{"NoOrigin", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := corsDo(t, srv, "OPTIONS", variants, preflightHeaders(tc.origin, "POST"), "")
			if res.StatusCode != http.StatusNoContent {
				t.Fatalf("status=%d, want 204", res.StatusCode)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tc.want {
				t.Fatalf("preflight Allow-Origin=%q, want %q", got, tc.want)
			}
			if tc.want == "" && len(corsHeaders(res.Header)) != 0 {
				t.Fatalf("refused preflight carries %v", corsHeaders(res.Header))
			}
			if res.Header.Get("Vary") != "Origin" {
				t.Fatalf("Vary=%q, want Origin", res.Header.Get("Vary"))
			}
			res = corsDo(t, srv, "POST", variants, map[string]string{"Origin": tc.origin, "Authorization": "Bearer " + e.Cli}, `{"userId":"u"}`)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("POST status=%d, want 200 (CORS is the browser's check, not the server's)", res.StatusCode)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tc.want {
				t.Fatalf("answer Allow-Origin=%q, want %q", got, tc.want)
			}
		})
	}
	// Another app keeps the default.
	res := corsDo(t, srv, "OPTIONS", pathf("/v1/apps-external/%d/variants", other.ID), preflightHeaders("https://evil.example", "POST"), "")
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Fatalf("other app Allow-Origin=%q, want *", got)
	}
	// /content/submit-form names no app: any origin.
	res = corsDo(t, srv, "OPTIONS", "/v1/content/submit-form", preflightHeaders("https://evil.example", "POST"), "")
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Fatalf("submit-form Allow-Origin=%q, want *", got)
	}
	// Back to "*": takes effect at once on this server.
	if err := e.DB.SetAppAllowedOrigins(context.Background(), e.App.ID, []string{"*"}); err != nil {
		t.Fatal(err)
	}
	res = corsDo(t, srv, "OPTIONS", variants, preflightHeaders("https://evil.example", "POST"), "")
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Fatalf("after reset Allow-Origin=%q, want *", got)
	}
	// An app that does not exist: the default, so the page reads the 403.
	res = corsDo(t, srv, "OPTIONS", "/v1/apps-external/999/variants", preflightHeaders("https://evil.example", "POST"), "")
	if got := res.Header.Get("Access-Control-Allow-Origin"); res.StatusCode != http.StatusNoContent || got != "*" {
		t.Fatalf("unknown app: status=%d Allow-Origin=%q, want 204 *", res.StatusCode, got)
	}
}

// A caller that sends no Origin (React Native, a server) is not a browser
// doing CORS: its SDK answers, and a preflight, carry no CORS headers
// beyond Vary.
func TestCORSNoOriginNoHeaders(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.Srv)
	defer srv.Close()
	path := pathf("/v1/apps-external/%d/variants", e.App.ID)
	for _, tc := range []struct {
		method string
		hdr    map[string]string
		body   string
		want   int
	}{
		{"POST", map[string]string{"Authorization": "Bearer " + e.Cli}, `{"userId":"u"}`, http.StatusOK},
		{"OPTIONS", nil, "", http.StatusNoContent},
	} {
		res := corsDo(t, srv, tc.method, path, tc.hdr, tc.body)
		if res.StatusCode != tc.want {
			t.Fatalf("%s: status=%d, want %d", tc.method, res.StatusCode, tc.want)
		}
		if got := corsHeaders(res.Header); len(got) != 0 {
			t.Fatalf("%s: CORS headers without Origin: %v", tc.method, got)
		}
		if res.Header.Get("Vary") != "Origin" {
			t.Fatalf("%s: Vary=%q, want Origin", tc.method, res.Header.Get("Vary"))
		}
	}
}
