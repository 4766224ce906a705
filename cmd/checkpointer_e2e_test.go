package cmd_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"service/internal/testwait"
)

// TestServeCheckpointsInAChildProcess: serve runs its WAL checkpoints in a
// child process of the same binary. The child copies what the server
// commits into the database file, and ends with the server even when the
// server is killed with SIGKILL, so no process outlives it.
func TestServeCheckpointsInAChildProcess(t *testing.T) {
	db := migratedAt(t, filepath.Join(t.TempDir(), "ckpt.db"))
	app := e2eCLI(t, "apps", "create", "--db", db, "--name", "ckpt", "--plan", "enterprise", "--rate-limit", "100000000")
	appID := fmt.Sprint(e2eNum(app, "id"))
	client, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "client")["key"].(string)

	s := e2eServe(t, "--db", db)
	child := waitChild(t, s.cmd.Process.Pid, "checkpointer")

	// About 12 MiB of events; only a checkpoint moves them out of the WAL.
	pad := strings.Repeat("x", 60<<10)
	for i := range 200 {
		s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/events", client,
			map[string]any{"eventId": "view", "userId": fmt.Sprint("u-", i), "metadata": map[string]any{"pad": pad}})
	}
	testwait.Until(t, 30*time.Second, "the events checkpointed into the database file", func() bool {
		st, err := os.Stat(db)
		return err == nil && st.Size() >= 10<<20
	})
	if !alive(child) {
		t.Fatalf("checkpointer %d is gone while serve runs", child)
	}
	for _, l := range s.Logs() {
		if l["level"] == "WARN" && strings.Contains(fmt.Sprint(l["msg"]), "checkpointer") {
			t.Fatalf("serve logged %v: the checkpoints did not run in the child", l)
		}
	}

	s.kill()
	testwait.Until(t, 30*time.Second, "the checkpointer to end with its killed server", func() bool { return !alive(child) })
}

// waitChild returns the pid of parent's child process whose command line
// contains word, waiting up to 30 s for it to appear.
func waitChild(t *testing.T, parent int, word string) int {
	t.Helper()
	var pid int
	testwait.Until(t, 30*time.Second, word+" child of "+strconv.Itoa(parent), func() bool {
		pid = findChild(parent, word)
		return pid != 0
	})
	return pid
}

func findChild(parent int, word string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so parse after
		// its closing parenthesis.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if strings.Contains(string(cmdline), word) {
			return pid
		}
	}
	return 0
}

// alive reports whether pid is a running process: a zombie, which has
// exited and waits only for its parent to collect it, is not.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestCheckpointerLeavesItsEndingToServe: an interrupt that reaches the
// child too (Ctrl-C and service managers signal the whole process group)
// does not end it; serve's clean shutdown does, with no warning.
func TestCheckpointerLeavesItsEndingToServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ckpt.db")
	s := e2eServe(t, "--db", db)
	child := waitChild(t, s.cmd.Process.Pid, "checkpointer")
	// main installs its signal handling before anything opens the
	// database: until then a signal ends any process by default.
	testwait.Until(t, 30*time.Second, "the checkpointer to open the database", func() bool { return hasOpen(child, db) })
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if err := syscall.Kill(child, sig); err != nil {
			t.Fatal(err)
		}
	}
	// The signals are delivered at once; give the child a moment in which
	// acting on them would show.
	time.Sleep(300 * time.Millisecond)
	if !alive(child) {
		t.Fatal("the checkpointer ended on a signal; only serve should end it")
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve still running 30 s after SIGTERM")
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("serve exited with %v after SIGTERM, want 0", err)
	}
	if alive(child) {
		t.Fatalf("checkpointer %d outlived serve's clean shutdown", child)
	}
	for _, l := range s.Logs() {
		if l["level"] == "WARN" && strings.Contains(fmt.Sprint(l["msg"]), "checkpointer") {
			t.Fatalf("serve logged %v on a clean shutdown", l)
		}
	}
}

// hasOpen reports whether process pid has the file at path open.
func hasOpen(pid int, path string) bool {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // /proc shows the resolved path
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, _ := os.ReadDir(dir)
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}
