package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"service/handlers"
	"service/internal/storetest"
	"service/metrics"
	"service/store"
)

type env struct {
	t      *testing.T
	db     *store.DB
	srv    *handlers.Server
	m      *metrics.Metrics
	app    *store.App
	admin  string
	client string
}

func newEnv(t *testing.T, plan string, limit int) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.DB(t, filepath.Join(t.TempDir(), "m.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m := metrics.New(db)
	db.Observe = m.Store()
	srv := handlers.New(db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.Observe = m
	app, err := db.CreateApp(ctx, "m", plan, limit)
	if err != nil {
		t.Fatal(err)
	}
	_, admin, err := db.CreateKey(ctx, app.ID, store.RoleAdmin, "a")
	if err != nil {
		t.Fatal(err)
	}
	_, client, err := db.CreateKey(ctx, app.ID, store.RoleClient, "c")
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, db: db, srv: srv, m: m, app: app, admin: admin, client: client}
}

func (e *env) do(method, path, key, body string) int {
	e.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec.Code
}

// value reads one series from the registry: the counter, gauge or
// untyped value, or a histogram's sample count. Absent reads as -1.
func value(t *testing.T, m *metrics.Metrics, name string, labels ...string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range s.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue series
				}
			}
			return sampleValue(f.GetType(), s)
		}
	}
	return -1
}

func sampleValue(typ dto.MetricType, s *dto.Metric) float64 {
	switch typ {
	case dto.MetricType_COUNTER:
		return s.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return s.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return float64(s.GetHistogram().GetSampleCount())
	}
	return s.GetUntyped().GetValue()
}

func TestRequestsByRoutePattern(t *testing.T) {
	e := newEnv(t, "enterprise", 1_000_000)
	app := strconv.FormatInt(e.app.ID, 10)
	tests := []struct {
		method, path, key, body string
		status                  int
		route                   string
	}{
		{"POST", "/v1/apps/" + app + "/events", e.client, `{"eventId":"signup","userId":"u1"}`, 201, "/apps/:appId/events"},
		{"POST", "/api/v1/apps/" + app + "/events", e.client, `{"eventId":"signup","userId":"u2"}`, 201, "/apps/:appId/events"},
		{"POST", "/v1/apps/" + app + "/events", e.client, `{`, 400, "/apps/:appId/events"},
		{"GET", "/v1/campaigns/99999", e.admin, "", 404, "/campaigns/:id"},
		{"GET", "/v1/campaigns/1", "", "", 401, "/campaigns/:id"},
		{"GET", "/v1/nothing/here", e.admin, "", 404, handlers.Unmatched},
		{"GET", "/healthz", "", "", 200, "/healthz"},
		{"GET", "/v1/openapi.json", "", "", 200, "/openapi.json"},
	}
	want := map[[3]string]float64{}
	for _, tc := range tests {
		if got := e.do(tc.method, tc.path, tc.key, tc.body); got != tc.status {
			t.Fatalf("%s %s: status=%d, want %d", tc.method, tc.path, got, tc.status)
		}
		want[[3]string{tc.route, tc.method, strconv.Itoa(tc.status)}]++
	}
	for k, n := range want {
		if got := value(t, e.m, "service_http_requests_total", "route", k[0], "method", k[1], "status", k[2]); got != n {
			t.Errorf("requests_total{route=%q,method=%q,status=%q}=%v, want %v", k[0], k[1], k[2], got, n)
		}
		if got := value(t, e.m, "service_http_request_duration_seconds", "route", k[0], "method", k[1], "status", k[2]); got != n {
			t.Errorf("duration histogram count{route=%q,method=%q,status=%q}=%v, want %v", k[0], k[1], k[2], got, n)
		}
	}
	// No series is ever labelled with a raw path.
	fams, _ := e.m.Registry().Gather()
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "route" && strings.Contains(l.GetValue(), app) && !strings.Contains(l.GetValue(), ":") {
					t.Errorf("raw path %q used as a route label", l.GetValue())
				}
			}
		}
	}
}

func TestWritesAndGroupCommit(t *testing.T) {
	e := newEnv(t, "enterprise", 1_000_000)
	app := strconv.FormatInt(e.app.ID, 10)
	for i, body := range []string{
		`{"eventId":"a","userId":"u1"}`,
		`{"eventId":"b","userId":"u2","logId":"L1"}`,
		`{"eventId":"b","userId":"u2","logId":"L1"}`, // a duplicate stores nothing
	} {
		if got := e.do("POST", "/v1/apps/"+app+"/events", e.client, body); got != 201 && got != 200 {
			t.Fatalf("event %d: status=%d", i, got)
		}
	}
	if got := value(t, e.m, "service_events_written_total"); got != 2 {
		t.Errorf("events_written_total=%v, want 2", got)
	}
	if got := value(t, e.m, "service_store_group_commit_size"); got < 1 {
		t.Errorf("group_commit_size count=%v, want at least 1", got)
	}
	if got := value(t, e.m, "service_store_group_commit_duration_seconds"); got < 1 {
		t.Errorf("group_commit_duration count=%v, want at least 1", got)
	}
	// Impressions: a new user's first variant answer is one impression; a
	// returning user's is none.
	camp := activeCampaign(t, e)
	path := "/v1/apps-external/" + app + "/campaigns/" + camp + "/variant"
	for _, u := range []string{"x1", "x2", "x1", "x1"} {
		if got := e.do("POST", path, e.client, `{"userId":"`+u+`"}`); got != 200 {
			t.Fatalf("variant for %s: status=%d", u, got)
		}
	}
	if got := value(t, e.m, "service_impressions_written_total"); got != 2 {
		t.Errorf("impressions_written_total=%v, want 2", got)
	}
}

// activeCampaign creates two published content blocks and an active
// campaign over them, through the API.
func activeCampaign(t *testing.T, e *env) string {
	t.Helper()
	app := strconv.FormatInt(e.app.ID, 10)
	var ids []string
	for _, name := range []string{"A", "B"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/apps/"+app+"/content", strings.NewReader(
			`{"name":"`+name+`","status":"published","items":[{"type":"text","content":"x","styles":{}}]}`))
		req.Header.Set("Authorization", "Bearer "+e.admin)
		e.srv.ServeHTTP(rec, req)
		if rec.Code != 201 {
			t.Fatalf("content: %d %s", rec.Code, rec.Body.String())
		}
		ids = append(ids, idOf(t, rec.Body.String()))
	}
	end := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/apps/"+app+"/campaigns", strings.NewReader(
		`{"name":"c","status":"active","endDate":"`+end+`","variants":[{"name":"A","contentViewId":`+ids[0]+`},{"name":"B","contentViewId":`+ids[1]+`}]}`))
	req.Header.Set("Authorization", "Bearer "+e.admin)
	e.srv.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("campaign: %d %s", rec.Code, rec.Body.String())
	}
	return idOf(t, rec.Body.String())
}

func idOf(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `"id":`)
	if !ok {
		t.Fatalf("no id in %s", body)
	}
	end := strings.IndexAny(rest, ",}")
	return rest[:end]
}

func TestRateLimitedByApp(t *testing.T) {
	e := newEnv(t, "enterprise", 2)
	path := "/v1/apps/" + strconv.FormatInt(e.app.ID, 10) + "/campaigns"
	codes := []int{}
	for range 4 {
		codes = append(codes, e.do("GET", path, e.admin, ""))
	}
	// A minute boundary between requests may free the limit, so the test
	// counts the refusals it saw rather than expecting exactly two.
	n := 0.0
	for _, c := range codes {
		if c == 429 {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no request was refused with a limit of 2: %v", codes)
	}
	if got := value(t, e.m, "service_rate_limited_total", "app", strconv.FormatInt(e.app.ID, 10)); got != n {
		t.Errorf("rate_limited_total{app}=%v, want %v", got, n)
	}
	if got := value(t, e.m, "service_http_requests_total", "route", "/apps/:appId/campaigns", "status", "429"); got != n {
		t.Errorf("requests_total{status=429}=%v, want %v", got, n)
	}
	// The shared count answered (on SQLite none is asked): nothing fell
	// back to a process's own count.
	if got := value(t, e.m, "service_rate_limit_fallback_total"); got != 0 {
		t.Errorf("rate_limit_fallback_total=%v, want 0", got)
	}
	e.m.RateLimitFallback()
	if got := value(t, e.m, "service_rate_limit_fallback_total"); got != 1 {
		t.Errorf("rate_limit_fallback_total after one=%v, want 1", got)
	}
}

func TestScrapeTimeGauges(t *testing.T) {
	e := newEnv(t, "enterprise", 1_000_000)
	app := strconv.FormatInt(e.app.ID, 10)
	if got := value(t, e.m, "service_webhook_queue_depth"); got != 0 {
		t.Errorf("queue_depth=%v before any webhook, want 0", got)
	}
	if got := value(t, e.m, "service_webhook_oldest_pending_age_seconds"); got != 0 {
		t.Errorf("oldest_pending_age=%v with nothing pending, want 0", got)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/apps/"+app+"/webhooks", strings.NewReader(`{"url":"https://hooks.example.com/in","events":["*"]}`))
	req.Header.Set("Authorization", "Bearer "+e.admin)
	e.srv.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("webhook: %d %s", rec.Code, rec.Body.String())
	}
	hook := idOf(t, rec.Body.String())
	// No dispatcher runs here, so both test deliveries stay pending.
	for range 2 {
		if got := e.do("POST", "/v1/webhooks/"+hook+"/test", e.admin, ""); got != 202 {
			t.Fatalf("test delivery: status=%d", got)
		}
	}
	if got := value(t, e.m, "service_webhook_queue_depth"); got != 2 {
		t.Errorf("queue_depth=%v, want 2", got)
	}
	if got := value(t, e.m, "service_webhook_oldest_pending_age_seconds"); got < 0 || got > 3600 {
		t.Errorf("oldest_pending_age=%v, want a small non-negative age", got)
	}
	if got := value(t, e.m, "service_db_size_bytes"); got <= 0 {
		t.Errorf("db_size_bytes=%v, want > 0", got)
	}
	if got := value(t, e.m, "service_db_wal_size_bytes"); got < 0 {
		t.Errorf("db_wal_size_bytes absent")
	}
	if got := value(t, e.m, "go_goroutines"); got <= 0 {
		t.Errorf("go_goroutines=%v: runtime metrics missing", got)
	}
}

func TestWorkerHooks(t *testing.T) {
	m := metrics.New(nil)
	m.Delivery("success")
	m.Delivery("failure")
	m.Delivery("failure")
	m.Schedule(2, 1, nil)
	m.Schedule(0, 0, errors.New("boom"))
	for _, c := range []struct {
		name  string
		label []string
		want  float64
	}{
		{"service_webhook_deliveries_total", []string{"outcome", "success"}, 1},
		{"service_webhook_deliveries_total", []string{"outcome", "failure"}, 2},
		{"service_scheduler_runs_total", []string{"result", "ok"}, 1},
		{"service_scheduler_runs_total", []string{"result", "error"}, 1},
		{"service_scheduler_moves_total", []string{"move", "started"}, 2},
		{"service_scheduler_moves_total", []string{"move", "completed"}, 1},
	} {
		if got := value(t, m, c.name, c.label...); got != c.want {
			t.Errorf("%s%v=%v, want %v", c.name, c.label, got, c.want)
		}
	}
}

func TestHandlerServesTextFormat(t *testing.T) {
	m := metrics.New(nil)
	m.Request("/campaigns/:id", "GET", 200, time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status=%d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`service_http_requests_total{method="GET",route="/campaigns/:id",status="200"} 1`,
		`# TYPE service_http_request_duration_seconds histogram`,
		`go_gc_duration_seconds`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

// BenchmarkRequest is what metrics add to every request: compare it with
// the route's own time per request (BenchmarkVariantReturningMetrics).
func BenchmarkRequest(b *testing.B) {
	m := metrics.New(nil)
	b.ReportAllocs()
	for b.Loop() {
		m.Request("/apps-external/:appId/campaigns/:campaignIdOrKey/variant", "POST", 200, 50*time.Microsecond)
	}
}

// TestLeaderGauge: service_leader follows this process's leadership of the
// scheduled work: 0 before it leads, 1 while it does, 0 once released.
func TestLeaderGauge(t *testing.T) {
	e := newEnv(t, "free", 0)
	if got := value(t, e.m, "service_leader"); got != 0 {
		t.Fatalf("service_leader=%v before leading, want 0", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lead, err := e.db.AwaitLeadership(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, e.m, "service_leader"); got != 1 {
		t.Fatalf("service_leader=%v while leading, want 1", got)
	}
	lead.Release()
	if got := value(t, e.m, "service_leader"); got != 0 {
		t.Fatalf("service_leader=%v after release, want 0", got)
	}
}
