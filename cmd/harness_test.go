package cmd_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"service/internal/testwait"
)

// The end-to-end harness: the binary TestMain built (cliBin), run as a
// one-shot command or as a server on a free port.

// e2eCLI runs a one-shot command and decodes the one JSON object it prints.
func e2eCLI(t *testing.T, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(cliBin, args...)
	cmd.Env = cliEnv()
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

// e2eServer is a running `service serve`.
type e2eServer struct {
	cmd  *exec.Cmd
	base string
	done chan struct{}
	mu   sync.Mutex
	logs []map[string]any // every JSON line the server logged so far
}

// Logs returns the JSON lines logged so far.
func (s *e2eServer) Logs() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.logs...)
}

// e2eServe starts `service serve` with args on a free port and returns once it has
// logged the address it serves on.
func e2eServe(t *testing.T, args ...string) *e2eServer {
	t.Helper()
	cmd := exec.Command(cliBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = cliEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &e2eServer{cmd: cmd, done: make(chan struct{})}
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
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.mu.Lock()
				s.logs = append(s.logs, m)
				s.mu.Unlock()
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
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not log its address within 60s")
	}
	return s
}

// kill ends the process with SIGKILL, as a crash would.
func (s *e2eServer) kill() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	_ = s.cmd.Wait()
}

var e2eHTTP = &http.Client{Timeout: 60 * time.Second}

// call sends a JSON request and decodes the JSON answer, failing unless
// the status is want.
func (s *e2eServer) call(t *testing.T, want int, method, path, key string, body any) map[string]any {
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
	resp, err := e2eHTTP.Do(req)
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

func e2eNum(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

// e2eWait polls cond until it holds or timeout passes.
var e2eWait = testwait.Until

// term sends SIGTERM, as a supervisor does to stop or restart the
// server, and waits for the process to exit: it returns the exit code and
// how long the exit took. It calls nothing of the test's, so it may run
// on a goroutine of its own.
func (s *e2eServer) term(within time.Duration) (int, time.Duration, error) {
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, 0, err
	}
	select {
	case <-s.done:
	case <-time.After(within):
		return 0, time.Since(start), fmt.Errorf("serve did not exit within %v of SIGTERM", within)
	}
	err := s.cmd.Wait()
	took := time.Since(start)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), took, nil
	}
	return 0, took, err
}

// root is the server's address without the /v1 prefix.
func (s *e2eServer) root() string { return strings.TrimSuffix(s.base, "/v1") }
