package cmd_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// opsApp creates an app with an admin and a client key in db through the
// CLI and returns the app id and the keys.
func opsApp(t *testing.T, db string) (app int64, admin, client string) {
	t.Helper()
	migratedAt(t, db)
	app = cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "ops", "--plan", "enterprise", "--rate-limit", "1000000"), "id")
	admin = cliJSON(t, nil, "keys", "create", "--db", db, "--app", fmt.Sprint(app), "--role", "admin")["key"].(string)
	client = cliJSON(t, nil, "keys", "create", "--db", db, "--app", fmt.Sprint(app), "--role", "client")["key"].(string)
	return app, admin, client
}

// opsLoad posts events with unique logIds from two goroutines until stop,
// recording each one the server acknowledged (201) in order.
type opsLoad struct {
	mu    sync.Mutex
	acked []string
	errs  []string
	stop  chan struct{}
	wg    sync.WaitGroup
}

func startLoad(base string, app int64, client string) *opsLoad {
	l := &opsLoad{stop: make(chan struct{})}
	cl := &http.Client{Timeout: 10 * time.Second}
	for w := range 2 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				body := fmt.Sprintf(`{"eventId":"load","userId":"u%d","logId":%q}`, i%50, id)
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/v1/apps/%d/events", base, app), strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+client)
				req.Header.Set("Content-Type", "application/json")
				resp, err := cl.Do(req)
				if err != nil {
					l.fail(err.Error())
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					l.fail(fmt.Sprintf("event %s: status %d", id, resp.StatusCode))
					return
				}
				l.mu.Lock()
				l.acked = append(l.acked, id)
				l.mu.Unlock()
			}
		}()
	}
	return l
}

func (l *opsLoad) fail(s string) {
	l.mu.Lock()
	l.errs = append(l.errs, s)
	l.mu.Unlock()
}

// snapshot returns the events acknowledged so far.
func (l *opsLoad) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

// waitFor blocks until at least n events were acknowledged.
func (l *opsLoad) waitFor(t *testing.T, n int) {
	t.Helper()
	e2eWait(t, 30*time.Second, fmt.Sprintf("%d acknowledged events", n), func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(l.errs) > 0 {
			t.Fatalf("load failed: %v", l.errs)
		}
		return len(l.acked) >= n
	})
}

// end stops the load and returns every acknowledged event.
func (l *opsLoad) end(t *testing.T) []string {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	if len(l.errs) > 0 {
		t.Fatalf("load failed: %v", l.errs)
	}
	return l.snapshot()
}

// apiLogIDs reads every event of the app back through the API, paging
// with the before cursor, and returns the set of their logIds.
func apiLogIDs(t *testing.T, s *cliServer, app int64, admin string) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	before := ""
	for {
		code, m := s.do(t, "GET", fmt.Sprintf("/v1/apps/%d/events?limit=1000%s", app, before), admin, "")
		if code != http.StatusOK {
			t.Fatalf("list events: %d %v", code, m)
		}
		data, _ := m["data"].([]any)
		if len(data) == 0 {
			return got
		}
		var last float64
		for _, d := range data {
			ev := d.(map[string]any)
			if id, ok := ev["logId"].(string); ok {
				got[id] = true
			}
			last = ev["id"].(float64)
		}
		before = fmt.Sprintf("&before=%d", int64(last))
	}
}

func missing(want []string, got map[string]bool) []string {
	var out []string
	for _, id := range want {
		if !got[id] {
			out = append(out, id)
		}
	}
	return out
}

func integrityOK(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check of %s: %q, %v", path, res, err)
	}
}

// TestBackupDuringWritesAndRestore backs up a database while the real
// server writes to it, restores the copy into a new file, serves that, and
// reads back through the API every event acknowledged before the backup
// started.
func TestBackupDuringWritesAndRestore(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	app, admin, client := opsApp(t, live)
	srv := cliServe(t, live)
	load := startLoad(srv.base, app, client)
	load.waitFor(t, 200)

	before := load.snapshot()
	copyPath := filepath.Join(dir, "copy.db")
	out := cliJSON(t, nil, "backup", "--db", live, "--out", copyPath)
	if out["out"] != copyPath || cliNum(t, out, "bytes") <= 0 {
		t.Fatalf("backup printed %v", out)
	}
	load.waitFor(t, len(before)+50) // writes go on during and after the backup
	all := load.end(t)
	integrityOK(t, copyPath)

	t.Run("RefusesExistingOut", func(t *testing.T) {
		cliFail(t, nil, "backup", "--db", live, "--out", copyPath)
	})
	t.Run("RefusesOpenDatabase", func(t *testing.T) {
		r := cliRun(t, nil, "restore", "--from", copyPath, "--db", live)
		if r.code == 0 || !strings.Contains(r.stderr, "open in another process") {
			t.Fatalf("restore over a served database: exit %d, stderr %q", r.code, r.stderr)
		}
	})

	restored := filepath.Join(dir, "restored.db")
	if m := cliJSON(t, nil, "restore", "--from", copyPath, "--db", restored); m["db"] != restored {
		t.Fatalf("restore printed %v", m)
	}
	integrityOK(t, restored)
	rs := cliServe(t, restored)
	got := apiLogIDs(t, rs, app, admin)
	if miss := missing(before, got); len(miss) > 0 {
		t.Fatalf("%d of %d events acknowledged before the backup are missing from the restored database, e.g. %v",
			len(miss), len(before), miss[:min(5, len(miss))])
	}
	if len(got) > len(all) {
		t.Fatalf("restored database has %d events, more than the %d ever acknowledged", len(got), len(all))
	}

	t.Run("RefusesNewerDatabase", func(t *testing.T) {
		stop(t, srv)
		// The live database went on being written after the copy was taken.
		r := cliRun(t, nil, "restore", "--from", copyPath, "--db", live)
		if r.code == 0 || !strings.Contains(r.stderr, "newer than the copy") {
			t.Fatalf("restore over a newer database: exit %d, stderr %q", r.code, r.stderr)
		}
		cliJSON(t, nil, "restore", "--from", copyPath, "--db", live, "--force")
		integrityOK(t, live)
		// Restoring the same copy again finds nothing newer.
		cliJSON(t, nil, "restore", "--from", copyPath, "--db", live)
	})
	t.Run("RefusesNonDatabase", func(t *testing.T) {
		junk := filepath.Join(dir, "junk.db")
		if err := os.WriteFile(junk, bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
		cliFail(t, nil, "restore", "--from", junk, "--db", filepath.Join(dir, "other.db"))
	})
}

// stop ends serve with SIGINT and waits for its clean exit.
func stop(t *testing.T, s *cliServer) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop within 20s of SIGINT")
	}
}

// TestMetricsAddr serves metrics on a separate address and checks that a
// request, a scheduler run and a webhook delivery move their series.
func TestMetricsAddr(t *testing.T) {
	db := cliDB(t)
	app, admin, client := opsApp(t, db)
	hook := make(chan struct{}, 16)
	rcv := newReceiver(t, func() { hook <- struct{}{} })
	srv := cliServe(t, db, "--metrics-addr", "127.0.0.1:0", "--scheduler-interval", "100ms")
	maddr := ""
	e2eWait(t, 10*time.Second, "the metrics address in the log", func() bool {
		for {
			select {
			case l := <-srv.logs:
				if l["msg"] == "metrics" {
					maddr, _ = l["addr"].(string)
					return true
				}
			default:
				return false
			}
		}
	})
	// Metrics are not on the API address.
	if code, _ := srv.do(t, "GET", "/metrics", "", ""); code != http.StatusNotFound {
		t.Fatalf("GET /metrics on the API address: %d, want 404", code)
	}
	if code, _ := srv.do(t, "POST", fmt.Sprintf("/v1/apps/%d/events", app), client, `{"eventId":"x","userId":"u"}`); code != http.StatusCreated {
		t.Fatalf("event: %d", code)
	}
	code, m := srv.do(t, "POST", fmt.Sprintf("/v1/apps/%d/webhooks", app), admin, `{"url":"`+rcv+`","events":["*"]}`)
	if code != http.StatusCreated {
		t.Fatalf("webhook: %d %v", code, m)
	}
	if code, _ := srv.do(t, "POST", fmt.Sprintf("/v1/webhooks/%d/test", int64(m["id"].(float64))), admin, ""); code != http.StatusAccepted {
		t.Fatalf("test delivery: %d", code)
	}
	select {
	case <-hook:
	case <-time.After(10 * time.Second):
		t.Fatal("the test delivery never arrived")
	}
	for _, want := range []string{
		`service_http_requests_total{method="POST",route="/apps/:appId/events",status="201"} 1`,
		`service_events_written_total 1`,
		`service_webhook_deliveries_total{outcome="success"} 1`,
		`service_scheduler_runs_total{result="ok"}`,
		`service_db_size_bytes`,
		`service_leader 1`,
		`go_goroutines`,
	} {
		e2eWait(t, 10*time.Second, "series "+want, func() bool {
			return strings.Contains(scrape(t, "http://"+maddr+"/metrics"), want)
		})
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestMetricsOnAPIAddress serves /metrics beside the API with --metrics.
func TestMetricsOnAPIAddress(t *testing.T) {
	db := cliDB(t)
	srv := cliServe(t, db, "--metrics")
	if code, _ := srv.do(t, "GET", "/healthz", "", ""); code != http.StatusOK {
		t.Fatalf("healthz: %d", code)
	}
	body := scrape(t, srv.base+"/metrics")
	if !strings.Contains(body, `service_http_requests_total{method="GET",route="/healthz",status="200"} 1`) {
		t.Fatalf("healthz request not counted:\n%s", body)
	}
	// Without either flag there is no /metrics.
	plain := cliServe(t, cliDB(t))
	if code, _ := plain.do(t, "GET", "/metrics", "", ""); code != http.StatusNotFound {
		t.Fatalf("GET /metrics without --metrics: %d, want 404", code)
	}
}

func newReceiver(t *testing.T, hit func()) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hit()
	})}
	ln := listenLocal(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/hook"
}

// TestHealthcheck runs the container's probe against a live and a dead
// address.
func TestHealthcheck(t *testing.T) {
	srv := cliServe(t, cliDB(t))
	addr := strings.TrimPrefix(srv.base, "http://")
	if r := cliRun(t, nil, "healthcheck", "--addr", addr); r.code != 0 {
		t.Fatalf("healthcheck of a live server: exit %d %s", r.code, r.stderr)
	}
	if r := cliRun(t, nil, "healthcheck", "--addr", srv.base); r.code != 0 {
		t.Fatalf("healthcheck by URL: exit %d %s", r.code, r.stderr)
	}
	ln := listenLocal(t)
	dead := ln.Addr().String()
	ln.Close()
	if r := cliRun(t, nil, "healthcheck", "--addr", dead, "--timeout", "2s"); r.code == 0 {
		t.Fatal("healthcheck of a closed port: exit 0")
	}
	// A server that answers, but not 200, is unhealthy too.
	bad := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	bl := listenLocal(t)
	go bad.Serve(bl)
	defer bad.Close()
	if r := cliRun(t, nil, "healthcheck", "--addr", bl.Addr().String()); r.code == 0 {
		t.Fatal("healthcheck of a 503: exit 0")
	}
}

func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
