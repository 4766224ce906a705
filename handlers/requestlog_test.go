package handlers

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

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
