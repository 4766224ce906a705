package cmd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"service/webhooks"
)

// The real binary for the webhook end-to-end test, built once per test
// process (cli_test.go owns TestMain, so this file builds lazily).
var (
	webhookBinOnce sync.Once
	webhookBinPath string
	webhookBinErr  error
)

// webhookBuildServiceBinary builds the service from the module root. The
// build goes to a private directory and is renamed over a fixed path, an
// atomic replace, so concurrent test processes never run a partial file
// and no per-process directory is left behind.
func webhookBuildServiceBinary(t *testing.T) string {
	t.Helper()
	webhookBinOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "service-webhook-e2e")
		if webhookBinErr = os.MkdirAll(dir, 0o755); webhookBinErr != nil {
			return
		}
		tmp, err := os.MkdirTemp(dir, "build-")
		if err != nil {
			webhookBinErr = err
			return
		}
		defer os.RemoveAll(tmp)
		build := exec.Command("go", "build", "-o", filepath.Join(tmp, "service"), ".")
		build.Dir = ".."
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			webhookBinErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		webhookBinPath = filepath.Join(dir, "service")
		webhookBinErr = os.Rename(filepath.Join(tmp, "service"), webhookBinPath)
	})
	if webhookBinErr != nil {
		t.Fatal(webhookBinErr)
	}
	return webhookBinPath
}

// webhookEnv is the environment without SERVICE_* variables, which would
// configure the binary behind the test's back.
func webhookEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SERVICE_") {
			env = append(env, kv)
		}
	}
	return env
}

// webhookCLI runs a one-shot command and decodes the JSON object it prints.
func webhookCLI(t *testing.T, bin string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = webhookEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("service %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("service %s printed %q: %v", strings.Join(args, " "), out, err)
	}
	return m
}

// webhookServer is a running `service serve`.
type webhookServer struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

// webhookServe starts the binary on a free port and returns once it has
// logged the address it serves on.
func webhookServe(t *testing.T, bin string, args ...string) *webhookServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = webhookEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &webhookServer{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" && line.Addr != "" {
				select {
				case addr <- line.Addr:
				default:
				}
			}
		}
		// Drained to the end: a full pipe would block the server's logging.
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(s.kill)
	select {
	case a := <-addr:
		s.base = "http://" + a + "/v1"
	case <-s.done:
		t.Fatal("serve exited before serving")
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not log its address within 15s")
	}
	return s
}

// kill ends the process with SIGKILL, as a crash would.
func (s *webhookServer) kill() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	_ = s.cmd.Wait()
}

var webhookHTTP = &http.Client{Timeout: 10 * time.Second}

// call sends a JSON request and decodes the JSON answer, failing unless
// the status is want.
func (s *webhookServer) call(t *testing.T, want int, method, path, key string, body any) map[string]any {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := webhookHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status=%d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return m
}

// deliveries lists a webhook's deliveries.
func (s *webhookServer) deliveries(t *testing.T, key string, hook int64) []map[string]any {
	t.Helper()
	m := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/webhooks/%d/deliveries", hook), key, nil)
	var out []map[string]any
	for _, d := range m["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

func webhookNum(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

func webhookWait(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebhookE2EDeliverySurvivesKill: a delivery queued while its receiver
// is down survives kill -9 of the server, and after a restart it arrives
// once, with the delivery id recorded before the crash.
func TestWebhookE2EDeliverySurvivesKill(t *testing.T) {
	bin := webhookBuildServiceBinary(t)
	db := filepath.Join(t.TempDir(), "hooks.db")
	app := webhookNum(webhookCLI(t, bin, "apps", "create", "--db", db, "--name", "hooks"), "id")
	key, _ := webhookCLI(t, bin, "keys", "create", "--db", db, "--app", strconv.FormatInt(app, 10), "--role", "admin")["key"].(string)

	// A port that refuses connections until the receiver takes it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	receiverAddr := ln.Addr().String()
	ln.Close()

	flags := []string{"--db", db, "--webhook-retry-base", "100ms"}
	srv := webhookServe(t, bin, flags...)
	const secret = "whsec_e2e"
	hook := webhookNum(srv.call(t, http.StatusCreated, "POST", fmt.Sprintf("/apps/%d/webhooks", app), key, map[string]any{
		"url": "http://" + receiverAddr + "/hook", "events": []string{"content.published"}, "secret": secret,
		"maxRetries": 10, "timeoutSeconds": 1}), "id")
	block := srv.call(t, http.StatusCreated, "POST", fmt.Sprintf("/apps/%d/content", app), key, map[string]any{
		"name": "Promo", "status": "published", "items": []any{map[string]any{"type": "text", "content": "hi"}}})

	var before map[string]any
	webhookWait(t, 10*time.Second, "a refused attempt", func() bool {
		list := srv.deliveries(t, key, hook)
		if len(list) != 1 || webhookNum(list[0], "attemptCount") < 1 {
			return false
		}
		before = list[0]
		return true
	})
	if before["status"] != "pending" {
		t.Fatalf("delivery before the crash=%v", before)
	}
	deliveryID := strconv.FormatInt(webhookNum(before, "id"), 10)
	srv.kill()

	type hit struct {
		header http.Header
		body   []byte
	}
	var mu sync.Mutex
	var hits []hit
	ln, err = net.Listen("tcp", receiverAddr)
	if err != nil {
		t.Fatalf("retake the receiver's port: %v", err)
	}
	rcv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, hit{r.Header.Clone(), body})
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})}
	go rcv.Serve(ln)
	t.Cleanup(func() { rcv.Close() })
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(hits)
	}

	srv = webhookServe(t, bin, flags...)
	webhookWait(t, 20*time.Second, "the delivery after the restart", func() bool { return count() >= 1 })
	webhookWait(t, 5*time.Second, "the success to be recorded", func() bool {
		return srv.deliveries(t, key, hook)[0]["status"] == "succeeded"
	})
	// Longer than the dispatcher's poll: nothing more may arrive.
	time.Sleep(1500 * time.Millisecond)
	if got := count(); got != 1 {
		t.Fatalf("receiver got %d requests, want exactly 1", got)
	}
	h := hits[0]
	if got := h.header.Get("X-Service-Delivery-ID"); got != deliveryID {
		t.Fatalf("X-Service-Delivery-ID=%s, want %s as recorded before the crash", got, deliveryID)
	}
	if h.header.Get("X-Service-Event") != "content.published" || h.header.Get("User-Agent") != "Service-Webhooks/1.0" {
		t.Fatalf("headers=%v", h.header)
	}
	i := bytes.Index(h.body, []byte(`,"data":`))
	if i < 0 {
		t.Fatalf("body=%s", h.body)
	}
	data := h.body[i+len(`,"data":`) : len(h.body)-1]
	if !webhooks.Verify(secret, data, h.header.Get("X-Service-Signature")) {
		t.Fatalf("signature does not verify: %s", h.body)
	}
	want := fmt.Sprintf(`{"contentViewId":%d,"contentViewName":"Promo","publishedAt":%q,"hasItems":true}`,
		webhookNum(block, "id"), block["publishedAt"])
	if string(data) != want {
		t.Fatalf("data=%s, want %s", data, want)
	}
	after := srv.deliveries(t, key, hook)[0]
	attempts := after["attempts"].([]any)
	last := attempts[len(attempts)-1].(map[string]any)
	if webhookNum(last, "responseStatus") != 200 || len(attempts) < 2 {
		t.Fatalf("attempts=%v", attempts)
	}
	for _, a := range attempts[:len(attempts)-1] {
		if msg, _ := a.(map[string]any)["error"].(string); !strings.Contains(msg, "refused") {
			t.Fatalf("attempt before the receiver was up: %v", a)
		}
	}
}
