package dashboard_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"service/dashboard"
	"service/handlers"
	"service/internal/storetest"
	"service/internal/testlog"
	"service/store"
)

// TestRequestLogDurationMS: the dashboard's request lines carry the
// request's duration as duration_ms, in milliseconds, the field the API's
// lines and README name, and no nanosecond duration beside it.
func TestRequestLogDurationMS(t *testing.T) {
	db, err := store.Open(context.Background(), storetest.DB(t, filepath.Join(t.TempDir(), "log.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var logs testlog.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	srv := httptest.NewServer(dashboard.Mount(handlers.New(db, log), dashboard.New(db, log)))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name, method, path string
		origin             string
		want               int
	}{
		{"Page", "GET", "/signin", "", http.StatusOK},
		{"Redirect", "GET", "/", "", http.StatusSeeOther},
		{"RefusedForm", "POST", "/signin", "https://elsewhere.example", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(logs.String())
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status=%d, want %d", resp.StatusCode, tc.want)
			}
			var line map[string]any
			for _, s := range strings.Split(strings.TrimSpace(logs.String()[before:]), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(s), &m); err != nil {
					t.Fatalf("log line %q: %v", s, err)
				}
				if m["msg"] == "request" && m["path"] == tc.path {
					line = m
				}
			}
			if line == nil {
				t.Fatalf("no request line for %s %s in %s", tc.method, tc.path, logs.String()[before:])
			}
			if ms, ok := line["duration_ms"].(float64); !ok || ms < 0 {
				t.Fatalf("request line=%v, want a numeric duration_ms", line)
			}
			if _, ok := line["duration"]; ok {
				t.Fatalf("request line=%v still has duration", line)
			}
			if got := line["status"]; got != float64(tc.want) {
				t.Fatalf("request line status=%v, want %d", got, tc.want)
			}
		})
	}
}
