package handlers

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"service/internal/testlog"
)

// logLines returns the JSON lines logged so far, decoded.
func logLines(t *testing.T, l *testlog.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("log line %q: %v", s, err)
		}
		out = append(out, m)
	}
	return out
}

func TestRequestLogAndRequestID(t *testing.T) {
	generated := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, tc := range []struct {
		name, given string
		auth        bool
		keep        bool // the given id is echoed and logged
	}{
		{"WellFormedIDIsKept", "req-1.A_b", true, true},
		{"LongestIDIsKept", strings.Repeat("x", 128), true, true},
		{"TooLongIDIsReplaced", strings.Repeat("x", 129), true, false},
		{"BadCharactersAreReplaced", "a b/<c>", true, false},
		{"MissingIDIsGenerated", "", true, false},
		{"UnauthenticatedHasNoAppID", "anon-1", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var logs testlog.Buffer
			e.Srv.Log = slog.New(slog.NewJSONHandler(&logs, nil))
			e.Srv.AccessLog = &logs
			req := httptest.NewRequest("GET", pathf("/v1/apps/%d/campaigns", e.App.ID), nil)
			if tc.auth {
				req.Header.Set("Authorization", "Bearer "+e.Admin)
			}
			if tc.given != "" {
				req.Header.Set("X-Request-Id", tc.given)
			}
			rec := httptest.NewRecorder()
			e.Srv.ServeHTTP(rec, req)
			id := rec.Header().Get("X-Request-Id")
			if tc.keep && id != tc.given || !tc.keep && !generated.MatchString(id) {
				t.Fatalf("X-Request-Id=%q for %q", id, tc.given)
			}
			var line map[string]any
			for _, l := range logLines(t, &logs) {
				if l["msg"] == "request" {
					line = l
				}
			}
			if line == nil || line["request_id"] != id || line["method"] != "GET" {
				t.Fatalf("request line=%v, want request_id %q", line, id)
			}
			if _, ok := line["duration_ms"].(float64); !ok {
				t.Fatalf("request line=%v, want a numeric duration_ms", line)
			}
			if _, ok := line["duration"]; ok {
				t.Fatalf("request line=%v still has duration", line)
			}
			wantStatus := float64(http.StatusOK)
			if !tc.auth {
				wantStatus = http.StatusUnauthorized
			}
			if line["status"] != wantStatus {
				t.Fatalf("request line=%v, want status %v", line, wantStatus)
			}
			appID, ok := line["app_id"].(float64)
			if tc.auth && (!ok || int64(appID) != e.App.ID) || !tc.auth && ok {
				t.Fatalf("request line=%v, want app_id %d only when authenticated", line, e.App.ID)
			}
		})
	}
	t.Run("DistinctGeneratedIDs", func(t *testing.T) {
		e := newEnv(t)
		seen := map[string]bool{}
		for range 20 {
			id := e.do("GET", "/healthz", "", nil).Header().Get("X-Request-Id")
			if seen[id] {
				t.Fatalf("id %q generated twice", id)
			}
			seen[id] = true
		}
	})
}

// TestRequestLineMatchesSlog checks that the request lines written straight
// to AccessLog are the lines slog's JSON handler writes, byte for byte but
// for the time and the duration, whatever the path holds.
func TestRequestLineMatchesSlog(t *testing.T) {
	e := newEnv(t)
	paths := []string{
		"/healthz",
		pathf("/v1/apps/%d/campaigns", e.App.ID),
		"/v1/campaigns/%22quoted%22%5Cback/analytics", // " and \
		"/v1/x%0A%0D%09%01%7F",                        // control characters
		"/v1/%FF%FEbad-utf8",                          // invalid UTF-8
		"/v1/%E2%80%A8%E2%80%A9sep",                   // U+2028, U+2029
		"/v1/%3Cscript%3E&amp;",                       // no HTML escaping
		"/v1/caf%C3%A9-%F0%9F%98%80",                  // multi-byte runes
	}
	varying := regexp.MustCompile(`"time":"[^"]*"|"duration_ms":[0-9.e+-]+`)
	timeRE := regexp.MustCompile(`"time":"([^"]*)"`)
	for _, path := range paths {
		var lines [2]string
		for i, direct := range []bool{false, true} {
			var logs testlog.Buffer
			e.Srv.Log = slog.New(slog.NewJSONHandler(&logs, nil))
			e.Srv.AccessLog = nil
			if direct {
				e.Srv.AccessLog = &logs
			}
			req := httptest.NewRequest("GET", "http://example"+path, nil)
			req.Header.Set("Authorization", "Bearer "+e.Admin)
			req.Header.Set("X-Request-Id", "same-id")
			e.Srv.ServeHTTP(httptest.NewRecorder(), req)
			out := strings.TrimSpace(logs.String())
			if strings.Count(out, "\n") != 0 || !strings.Contains(out, `"msg":"request"`) {
				t.Fatalf("%s: want one request line, got %q", path, out)
			}
			m := timeRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("%s: no time in %q", path, out)
			}
			if _, err := time.Parse(time.RFC3339Nano, m[1]); err != nil {
				t.Fatalf("%s: time %q: %v", path, m[1], err)
			}
			lines[i] = varying.ReplaceAllString(out, "")
		}
		if lines[0] != lines[1] {
			t.Errorf("%s:\nslog:   %s\ndirect: %s", path, lines[0], lines[1])
		}
	}
	// Below the info level no request line is written either way.
	var logs testlog.Buffer
	e.Srv.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.Srv.AccessLog = &logs
	e.do("GET", "/healthz", "", nil)
	if logs.String() != "" {
		t.Fatalf("warn level logged %q", logs.String())
	}
}

// recordingObserver keeps what the server reports per request.
type recordingObserver struct {
	routes   []string
	statuses []int
	took     []time.Duration
}

func (o *recordingObserver) Request(route, _ string, status int, took time.Duration) {
	o.routes = append(o.routes, route)
	o.statuses = append(o.statuses, status)
	o.took = append(o.took, took)
}

func (o *recordingObserver) RateLimited(int64)  {}
func (o *recordingObserver) RateLimitFallback() {}

// TestMetricsAndLogShareOneTiming: a request's metrics and its log line
// come from the same two clock readings, so they report the same duration
// (to the log line's microsecond), under the route's pattern.
func TestMetricsAndLogShareOneTiming(t *testing.T) {
	e := newEnv(t)
	var logs testlog.Buffer
	e.Srv.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	e.Srv.AccessLog = &logs
	o := &recordingObserver{}
	e.Srv.Observe = o
	rec := e.do("POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "view", "userId": "u-1"})
	if rec.Code != http.StatusCreated {
		t.Fatalf("status=%d: %s", rec.Code, rec.Body)
	}
	if len(o.routes) != 1 || o.routes[0] != "/apps/:appId/events" {
		t.Fatalf("observed routes=%v, want one /apps/:appId/events", o.routes)
	}
	var line map[string]any
	for _, l := range logLines(t, &logs) {
		if l["msg"] == "request" {
			line = l
		}
	}
	want := float64(o.took[0].Microseconds()) / 1000
	if line == nil || line["duration_ms"] != want {
		t.Fatalf("request line=%v, want duration_ms %v as observed", line, want)
	}
}

// TestPanicIsCountedInMetrics: a handler that panics is answered 500 by the
// router's recovery, and that 500 reaches the metrics under the route like
// any other answer (the panic unwinds past the route's own wrappers).
func TestPanicIsCountedInMetrics(t *testing.T) {
	e := newEnv(t)
	o := &recordingObserver{}
	e.Srv.Observe = o
	e.Srv.Log = slog.New(slog.NewJSONHandler(&testlog.Buffer{}, nil))
	e.Srv.router.Handler("GET", "/v1/panics", e.Srv.instrument("/panics", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/panics", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status=%d, want 500", rec.Code)
	}
	if len(o.routes) != 1 || o.routes[0] != "/panics" || o.statuses[0] != http.StatusInternalServerError {
		t.Fatalf("observed routes=%v statuses=%v, want /panics 500", o.routes, o.statuses)
	}
}
