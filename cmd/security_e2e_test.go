package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// secServer is a running `service serve` whose log lines are kept, so a
// test can look for what the server said.
type secServer struct {
	*e2eServer
	mu   sync.Mutex
	logs []string
}

// secServe starts `service serve` with extra environment and args on a
// free port, and returns once it serves.
func secServe(t *testing.T, env []string, args ...string) *secServer {
	t.Helper()
	cmd := exec.Command(cliBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = cliEnv(env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &secServer{e2eServer: &e2eServer{cmd: cmd, done: make(chan struct{})}}
	addr := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs = append(s.logs, sc.Text())
			s.mu.Unlock()
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
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(s.kill)
	select {
	case a := <-addr:
		s.base = "http://" + a + "/v1"
	case <-s.done:
		t.Fatalf("serve exited before serving:\n%s", s.log())
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not log its address within 15s")
	}
	return s
}

func (s *secServer) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.logs, "\n")
}

// stop ends the server as a signal would, so it closes the database
// cleanly (with a checkpoint).
func (s *secServer) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop within 30s of SIGINT")
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("serve exited with %v:\n%s", err, s.log())
	}
}

// secServeFails runs serve and wants it to exit with an error before
// serving, its output containing every one of want.
func secServeFails(t *testing.T, env []string, want []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = cliEnv(env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("serve %v: err=%v, want a non-zero exit\n%s", args, err, out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Fatalf("serve %v output lacks %q:\n%s", args, w, out)
		}
	}
	if strings.Contains(string(out), `"msg":"serving"`) {
		t.Fatalf("serve %v served before failing:\n%s", args, out)
	}
}

// secReceiver is a local receiver that checks every signature against
// secret and keeps the delivery ids it got.
type secReceiver struct {
	URL    string
	secret string
	mu     sync.Mutex
	ids    map[string]int
	bad    []string
}

func secListen(t *testing.T, secret string) *secReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &secReceiver{URL: "http://" + ln.Addr().String() + "/hook", secret: secret, ids: map[string]int{}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ok := false
		if i := bytes.Index(body, []byte(`,"data":`)); i >= 0 && len(body) > 0 {
			ok = webhooks.Verify(r.secret, body[i+len(`,"data":`):len(body)-1], req.Header.Get("X-Service-Signature"))
		}
		r.mu.Lock()
		r.ids[req.Header.Get("X-Service-Delivery-ID")]++
		if !ok {
			r.bad = append(r.bad, string(body))
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

// got returns how many distinct deliveries arrived and the requests whose
// signature did not verify.
func (r *secReceiver) got() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ids), append([]string(nil), r.bad...)
}

func secPublish(s *e2eServer, t *testing.T, app int64, key, name string) {
	t.Helper()
	s.call(t, http.StatusCreated, "POST", fmt.Sprintf("/apps/%d/content", app), key, map[string]any{
		"name": name, "status": "published", "items": []any{map[string]any{"type": "text", "content": name}}})
}

func secApp(t *testing.T, db string) (int64, string) {
	t.Helper()
	migratedAt(t, db)
	app := e2eNum(e2eCLI(t, "apps", "create", "--db", db, "--name", "sec"), "id")
	key, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", strconv.FormatInt(app, 10), "--role", "admin")["key"].(string)
	return app, key
}

// secWriteKey writes keys (one per line) to path, replacing it at once so
// a running server never reads half a file.
func secWriteKey(t *testing.T, path string, keys ...string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(keys, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func secGenKey(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(cliBin, "secrets", "gen-key").Output()
	if err != nil {
		t.Fatal(err)
	}
	k := strings.TrimSpace(string(out))
	if len(k) != 44 {
		t.Fatalf("gen-key printed %q, want 44 base64 characters", out)
	}
	return k
}

// TestSecurityE2EBlockPrivateFlag: against the real binary, a loopback
// receiver is reachable by default and refused with
// --webhook-block-private: a literal loopback URL is a 400 naming url, and
// a name resolving to loopback (localhost), or a webhook saved before the
// flag was set, is blocked when dialled, failed at once without a retry
// and without counting against the webhook.
func TestSecurityE2EBlockPrivateFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sec.db")
	app, key := secApp(t, db)
	const secret = "whsec_flag_test"
	rcv := secListen(t, secret)
	hooks := fmt.Sprintf("/apps/%d/webhooks", app)

	srv := secServe(t, nil, "--db", db, "--webhook-retry-base", "50ms")
	literal := e2eNum(srv.call(t, http.StatusCreated, "POST", hooks, key, map[string]any{
		"url": rcv.URL, "events": []string{"content.published"}, "secret": secret, "maxRetries": 3}), "id")
	secPublish(srv.e2eServer, t, app, key, "allowed")
	e2eWait(t, 10*time.Second, "the loopback delivery", func() bool { n, _ := rcv.got(); return n == 1 })
	if _, bad := rcv.got(); len(bad) > 0 {
		t.Fatalf("signature did not verify: %v", bad)
	}
	srv.stop(t)

	srv = secServe(t, nil, "--db", db, "--webhook-retry-base", "50ms", "--webhook-block-private")
	m := srv.call(t, http.StatusBadRequest, "POST", hooks, key, map[string]any{"url": rcv.URL, "events": []string{"*"}})
	e, _ := m["error"].(map[string]any)
	fields, _ := e["details"].(map[string]any)["fields"].(map[string]any)
	if e["code"] != "INVALID_REQUEST" || !strings.Contains(fmt.Sprint(fields["url"]), "127.0.0.1 is loopback") {
		t.Fatalf("literal loopback with the flag: %v", m)
	}
	byName := strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1)
	named := e2eNum(srv.call(t, http.StatusCreated, "POST", hooks, key, map[string]any{
		"url": byName, "events": []string{"content.published"}, "secret": secret, "maxRetries": 3}), "id")
	secPublish(srv.e2eServer, t, app, key, "blocked")
	for _, hook := range []int64{literal, named} {
		var d map[string]any
		e2eWait(t, 10*time.Second, "the blocked delivery to settle", func() bool {
			list := webhookDeliveries(srv.e2eServer, t, key, hook)
			for _, x := range list {
				if x["status"] != "succeeded" {
					d = x
				}
			}
			return d != nil && d["status"] == "failed"
		})
		attempts := d["attempts"].([]any)
		if len(attempts) != 1 || attempts[0].(map[string]any)["error"] != "blocked by network policy" {
			t.Fatalf("webhook %d: attempts=%v, want one blocked", hook, attempts)
		}
		w := srv.call(t, http.StatusOK, "GET", fmt.Sprintf("/webhooks/%d", hook), key, nil)
		if w["consecutiveFailures"] != float64(0) || w["status"] != "ACTIVE" {
			t.Fatalf("webhook %d after a blocked delivery: %v", hook, w)
		}
	}
	if n, _ := rcv.got(); n != 1 {
		t.Fatalf("receiver got %d deliveries, want only the one sent without the flag", n)
	}
	// The log is flushed in batches: wait for it.
	e2eWait(t, 10*time.Second, "the operator's log to say what was blocked", func() bool {
		return strings.Contains(srv.log(), "blocked by network policy: 127.0.0.1 is loopback")
	})
}

// TestSecurityE2ESecretsAtRest: with a key, a secret stored in plaintext
// before is encrypted on start, new secrets are encrypted before they are
// written, no plaintext secret is in the database file (while serving, and
// after the checkpoint of a clean stop), and deliveries still verify at a
// real receiver. Without the key, or with a wrong one, serve refuses to
// start.
func TestSecurityE2ESecretsAtRest(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sec.db")
	app, key := secApp(t, db)
	hooks := fmt.Sprintf("/apps/%d/webhooks", app)
	secrets := []string{"whsec_PLAINTEXT_BEFORE_KEY_4f3e2d", "whsec_WRITTEN_WITH_KEY_8a7b6c"}
	rcvs := []*secReceiver{secListen(t, secrets[0]), secListen(t, secrets[1])}
	fileHas := func(s string) bool {
		for _, p := range []string{db, db + "-wal"} {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte(s)) {
				return true
			}
		}
		return false
	}

	srv := secServe(t, nil, "--db", db)
	if !strings.Contains(srv.log(), "no secret key: webhook secrets are stored in plaintext") {
		t.Fatalf("no warning without a key:\n%s", srv.log())
	}
	srv.call(t, http.StatusCreated, "POST", hooks, key, map[string]any{"url": rcvs[0].URL, "events": []string{"*"}, "secret": secrets[0]})
	srv.stop(t)
	if !fileHas(secrets[0]) {
		t.Fatal("the plaintext secret is not in the file without a key: the check is blind")
	}

	keyFile := filepath.Join(dir, "secret.key")
	k := secGenKey(t)
	secWriteKey(t, keyFile, k)
	srv = secServe(t, nil, "--db", db, "--secret-key-file", keyFile)
	if !strings.Contains(srv.log(), `"encryptedNow":1`) {
		t.Fatalf("start did not report encrypting the stored secret:\n%s", srv.log())
	}
	srv.call(t, http.StatusCreated, "POST", hooks, key, map[string]any{"url": rcvs[1].URL, "events": []string{"*"}, "secret": secrets[1]})
	secPublish(srv.e2eServer, t, app, key, "signed")
	for i, r := range rcvs {
		e2eWait(t, 10*time.Second, "a signed delivery", func() bool { n, _ := r.got(); return n == 1 })
		if _, bad := r.got(); len(bad) > 0 {
			t.Fatalf("receiver %d: signature did not verify: %v", i, bad)
		}
	}
	for _, s := range secrets {
		if fileHas(s) {
			t.Fatalf("plaintext secret %q in the database file while serving", s)
		}
	}
	srv.stop(t)
	for _, s := range secrets {
		if fileHas(s) {
			t.Fatalf("plaintext secret %q in the database file after a clean stop", s)
		}
	}

	secServeFails(t, nil, []string{"webhook secrets are encrypted but no key is set"}, "--db", db)
	wrong := filepath.Join(dir, "wrong.key")
	secWriteKey(t, wrong, secGenKey(t))
	secServeFails(t, nil, []string{"does not decrypt the stored webhook secrets"}, "--db", db, "--secret-key-file", wrong)
	secServeFails(t, []string{"SERVICE_SECRET_KEY=" + k}, []string{"use one"}, "--db", db, "--secret-key-file", keyFile)
	secServeFails(t, []string{"SERVICE_SECRET_KEY=c2hvcnQ="}, []string{"SERVICE_SECRET_KEY", "want 32"}, "--db", db)

	// The key from the environment serves as well as the file.
	srv = secServe(t, []string{"SERVICE_SECRET_KEY=" + k}, "--db", db)
	secPublish(srv.e2eServer, t, app, key, "again")
	for _, r := range rcvs {
		e2eWait(t, 10*time.Second, "a second signed delivery", func() bool { n, _ := r.got(); return n == 2 })
		if _, bad := r.got(); len(bad) > 0 {
			t.Fatalf("signature did not verify: %v", bad)
		}
	}
}

// TestSecurityE2EKeyRotatedWhileDelivering: deliveries go on while the key
// is rotated under a running server (new key put first in its key file,
// rotate-key run, then the old key dropped from the file); every delivery
// arrives, every signature verifies, none is held for want of a key, and
// afterwards the new key alone opens every secret.
func TestSecurityE2EKeyRotatedWhileDelivering(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sec.db")
	app, key := secApp(t, db)
	const secret = "whsec_rotation_e2e_51d0"
	rcv := secListen(t, secret)
	oldKey, newKey := secGenKey(t), secGenKey(t)
	keyFile, oldFile, newFile := filepath.Join(dir, "serve.key"), filepath.Join(dir, "old.key"), filepath.Join(dir, "new.key")
	secWriteKey(t, keyFile, oldKey)
	secWriteKey(t, oldFile, oldKey)
	secWriteKey(t, newFile, newKey)

	srv := secServe(t, nil, "--db", db, "--secret-key-file", keyFile, "--webhook-retry-base", "100ms")
	srv.call(t, http.StatusCreated, "POST", fmt.Sprintf("/apps/%d/webhooks", app), key, map[string]any{
		"url": rcv.URL, "events": []string{"content.published"}, "secret": secret, "maxRetries": 10})

	// Publish steadily until told to stop.
	var published int
	stop, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				stopped <- nil
				return
			case <-time.After(20 * time.Millisecond):
			}
			b, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("p%d", published), "status": "published",
				"items": []any{map[string]any{"type": "text", "content": "x"}}})
			req, _ := http.NewRequest("POST", srv.base+fmt.Sprintf("/apps/%d/content", app), bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := e2eHTTP.Do(req)
			if err != nil {
				stopped <- err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				stopped <- fmt.Errorf("publish: status %d", resp.StatusCode)
				return
			}
			published++
		}
	}()
	progress := func(more int) {
		t.Helper()
		n0, _ := rcv.got()
		e2eWait(t, 15*time.Second, "deliveries to continue", func() bool { n, _ := rcv.got(); return n >= n0+more })
	}
	progress(5)
	secWriteKey(t, keyFile, newKey, oldKey)
	progress(3)
	out := e2eCLI(t, "secrets", "rotate-key", "--db", db, "--old-key-file", oldFile, "--new-key-file", newFile)
	if e2eNum(out, "resealed") != 1 {
		t.Fatalf("rotate-key printed %v, want 1 resealed", out)
	}
	progress(5)
	secWriteKey(t, keyFile, newKey)
	progress(5)
	close(stop)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	e2eWait(t, 20*time.Second, "every published delivery", func() bool { n, _ := rcv.got(); return n == published })
	if n, bad := rcv.got(); len(bad) > 0 || n != published {
		t.Fatalf("%d of %d deliveries arrived; %d did not verify", n, published, len(bad))
	}
	srv.stop(t) // flushes the log
	if l := srv.log(); strings.Contains(l, "cannot be decrypted") || !strings.Contains(l, "secret key file reloaded") {
		t.Fatalf("a delivery was held, or the key file was never reloaded:\n%s", l)
	}

	// Only the new key opens the secrets now.
	secServeFails(t, nil, []string{"does not decrypt"}, "--db", db, "--secret-key-file", oldFile)
	srv = secServe(t, nil, "--db", db, "--secret-key-file", newFile)
	srv.stop(t)
	// Rotating again to the same key changes nothing.
	if out := e2eCLI(t, "secrets", "rotate-key", "--db", db, "--old-key-file", oldFile, "--new-key-file", newFile); e2eNum(out, "resealed") != 0 {
		t.Fatalf("second rotate-key printed %v", out)
	}
}
