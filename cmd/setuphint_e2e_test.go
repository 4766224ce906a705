package cmd_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeSetupHint: while no dashboard user exists, serve logs the
// command that creates one, naming the binary as it was run (a bare
// `service` runs another program on some systems) and the database as
// given; pasted into a shell in the same directory, the command works.
func TestServeSetupHint(t *testing.T) {
	dir := t.TempDir()
	spaced := filepath.Join(dir, "my tools")
	if err := os.Mkdir(spaced, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{filepath.Join(dir, "service"), filepath.Join(spaced, "service")} {
		if err := os.Symlink(cliBin, link); err != nil {
			t.Fatal(err)
		}
	}
	pathEnv := "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, tc := range []struct {
		name, arg0, db, want string
	}{
		{"Relative", "./service", "data.db", "./service users create --db data.db --email you@example.com"},
		{"FromPath", "service", "path.db", "service users create --db path.db --email you@example.com"},
		{"Quoted", filepath.Join(spaced, "service"), "my data.db",
			"'" + filepath.Join(spaced, "service") + "' users create --db 'my data.db' --email you@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := cliEnv(pathEnv)
			hint := serveSetupHint(t, dir, env, tc.arg0, tc.db)
			if hint != tc.want {
				t.Fatalf("hint %q, want %q", hint, tc.want)
			}
			sh := exec.Command("bash", "-c", "echo 'a long password' | "+hint)
			sh.Dir, sh.Env = dir, env
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("the hint failed: %v\n%s", err, out)
			}
			users := cliJSON(t, nil, "users", "list", "--db", filepath.Join(dir, tc.db))
			if b, _ := json.Marshal(users); !strings.Contains(string(b), `"email":"you@example.com"`) {
				t.Fatalf("users after the hint: %s", b)
			}
		})
	}
}

// serveSetupHint runs serve in dir as a shell would run arg0 (os.Args[0]
// is arg0) on db, and returns the command its setup line offers.
func serveSetupHint(t *testing.T, dir string, env []string, arg0, db string) string {
	t.Helper()
	cmd := &exec.Cmd{
		Path: cliBin, Dir: dir, Env: env,
		Args: []string{arg0, "serve", "--addr", "127.0.0.1:0", "--db", db},
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct {
				Msg      string `json:"msg"`
				SetupURL string `json:"setupURL"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.SetupURL != "" {
				found <- line.Msg
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, stderr) // a full pipe would block the server
	}()
	select {
	case msg, ok := <-found:
		if !ok {
			t.Fatal("serve ended without logging a setup link")
		}
		_, rest, ok := strings.Cut(msg, "(or run: ")
		hint, closed := strings.CutSuffix(rest, ")")
		if !ok || !closed {
			t.Fatalf("setup line without a command: %q", msg)
		}
		return hint
	case <-time.After(60 * time.Second):
		t.Fatal("no setup link logged within 60s")
	}
	return ""
}
