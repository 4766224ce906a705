package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The real binary, built once per test process for the end-to-end tests.
var (
	campaignBinOnce sync.Once
	campaignBinPath string
	campaignBinErr  error
)

// campaignBin builds the service binary from the module root, once per
// test process. Without a TestMain nothing could delete a per-process
// directory afterwards, so the binary replaces the previous run's at one
// fixed path instead: the build goes to a private directory and is renamed
// into place, which is atomic, so concurrent test processes cannot see a
// half-written file.
func campaignBin(t *testing.T) string {
	t.Helper()
	campaignBinOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "service-campaign-e2e")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			campaignBinErr = err
			return
		}
		tmp, err := os.MkdirTemp(dir, "build-")
		if err != nil {
			campaignBinErr = err
			return
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command("go", "build", "-o", filepath.Join(tmp, "service"), ".")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			campaignBinErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		campaignBinPath = filepath.Join(dir, "service")
		campaignBinErr = os.Rename(filepath.Join(tmp, "service"), campaignBinPath)
	})
	if campaignBinErr != nil {
		t.Fatal(campaignBinErr)
	}
	return campaignBinPath
}

// campaignCLI runs a one-shot command and decodes the one JSON object it
// prints.
func campaignCLI(t *testing.T, bin string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(bin, args...)
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

// campaignServer is a running `service serve`.
type campaignServer struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
}

// campaignServe starts the binary on a free port and returns once it logs
// the address it serves on.
func campaignServe(t *testing.T, bin, db string) *campaignServer {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &campaignServer{cmd: cmd, done: make(chan struct{})}
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
		// Reading to the end keeps the pipe drained: a full pipe would
		// block the server's logging.
		io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() { s.kill() })
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

// kill ends the process the hard way, as a crash would.
func (s *campaignServer) kill() {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd.Wait()
}

var campaignHTTP = &http.Client{Timeout: 10 * time.Second}

// call sends a JSON request and decodes the JSON answer, failing unless
// the status is want.
func (s *campaignServer) call(t *testing.T, want int, method, path, key string, body any) map[string]any {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := campaignHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: status=%d, want %d; body=%s", method, path, res.StatusCode, want, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: %v; body=%s", method, path, err, b)
	}
	return m
}

func campaignNum(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

// TestCampaignE2EStickyAcrossCrash assigns users through the real binary,
// kills it with SIGKILL, restarts it on the same file and expects the same
// variants, no second impression, and every counted impression kept.
func TestCampaignE2EStickyAcrossCrash(t *testing.T) {
	bin := campaignBin(t)
	db := filepath.Join(t.TempDir(), "e2e.db")
	app := campaignCLI(t, bin, "apps", "create", "--db", db, "--name", "e2e")
	appID := fmt.Sprint(campaignNum(app, "id"))
	admin, _ := campaignCLI(t, bin, "keys", "create", "--db", db, "--app", appID, "--role", "admin")["key"].(string)
	client, _ := campaignCLI(t, bin, "keys", "create", "--db", db, "--app", appID, "--role", "client")["key"].(string)
	if admin == "" || client == "" {
		t.Fatal("keys create printed no key")
	}

	s := campaignServe(t, bin, db)
	var variants []any
	for _, name := range []string{"Control", "Treatment"} {
		cv := s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/content", admin, map[string]any{
			"name": name, "status": "published", "items": []any{map[string]any{"type": "text", "content": name}}})
		variants = append(variants, map[string]any{"contentViewId": campaignNum(cv, "id"), "name": name})
	}
	c := s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/campaigns", admin, map[string]any{
		"name": "Sticky", "status": "active", "endDate": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), "variants": variants})
	if c["status"] != "active" {
		t.Fatalf("campaign status=%v, want active", c["status"])
	}
	variantPath := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", appID, campaignNum(c, "id"))

	const users = 20
	assigned := map[string]int64{}
	seen := map[int64]bool{}
	for i := range users {
		u := fmt.Sprintf("user-%d", i)
		a := s.call(t, http.StatusOK, "POST", variantPath, client, map[string]any{"userId": u})
		if a["impressionRecorded"] != true || a["variantId"] == nil {
			t.Fatalf("%s: first answer %v", u, a)
		}
		assigned[u] = campaignNum(a, "variantId")
		seen[assigned[u]] = true
	}
	if len(seen) != 2 {
		t.Fatalf("20 users all in one variant: %v", assigned)
	}

	s.kill()
	s = campaignServe(t, bin, db)
	for u, want := range assigned {
		a := s.call(t, http.StatusOK, "POST", variantPath, client, map[string]any{"userId": u})
		if got := campaignNum(a, "variantId"); got != want || a["impressionRecorded"] != false {
			t.Fatalf("%s after restart: variant %d recorded %v, want %d recorded false", u, got, a["impressionRecorded"], want)
		}
	}
	an := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d/analytics", campaignNum(c, "id")), admin, nil)
	if got := campaignNum(an, "totalImpressions"); got != users {
		t.Fatalf("totalImpressions=%d after restart, want %d", got, users)
	}
}
