package cmd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"service/store"
)

// pty is a pseudo-terminal: the test types on master what the command
// reads from slave, and reads on master what the terminal shows.
type pty struct {
	master, slave *os.File
	mu            sync.Mutex
	shown         bytes.Buffer // everything the terminal displayed
	done          chan struct{}
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pty's slave: %v", err)
	}
	p := &pty{master: m, slave: s, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 1024)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.shown.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return // EIO once the last slave is closed
			}
		}
	}()
	t.Cleanup(func() {
		s.Close()
		m.Close()
	})
	return p
}

func (p *pty) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shown.String()
}

// echoOff reports whether the terminal has its echo switched off.
func (p *pty) echoOff(t *testing.T) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO == 0
}

// ptyRun runs the binary with the pty as its stdin and stderr, as in a
// terminal, and types each of typed once the nth prompt shows with the
// echo off. It returns stdout, what the terminal showed, and the exit code.
func ptyRun(t *testing.T, typed []string, args ...string) (string, string, int) {
	t.Helper()
	p := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cliBin, args...)
	c.Env = cliEnv()
	var out bytes.Buffer
	c.Stdin, c.Stderr, c.Stdout = p.slave, p.slave, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	prompts := []string{"(not shown): ", "Repeat it: "}
	for i, s := range typed {
		e2eWait(t, 20*time.Second, "the prompt "+prompts[i], func() bool { return strings.Contains(p.text(), prompts[i]) })
		// The echo goes off just after the prompt shows: typed earlier,
		// the line would be echoed by the terminal, whatever the command.
		e2eWait(t, 20*time.Second, "the echo to go off", func() bool { return p.echoOff(t) })
		if _, err := p.master.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	err := c.Wait()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if p.echoOff(t) {
		t.Error("the command left the terminal without echo")
	}
	p.slave.Close() // the reader then drains the master and stops
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	return out.String(), p.text(), code
}

// TestCLIPasswordPromptHidden types passwords on a terminal: users create
// and users set-password prompt on it, the typed password never shows,
// it is asked twice, and two that differ change nothing.
func TestCLIPasswordPromptHidden(t *testing.T) {
	db := cliDB(t)
	const first, second = "typed on a terminal", "typed again, hidden"
	out, shown, code := ptyRun(t, []string{first, first}, "users", "create", "--db", db, "--email", "ann@example.com")
	if code != 0 || !strings.Contains(out, `"email":"ann@example.com"`) {
		t.Fatalf("create: exit %d, stdout %q, terminal %q", code, out, shown)
	}
	if !strings.Contains(shown, "Password (not shown): ") || strings.Contains(shown, first) {
		t.Fatalf("create showed %q: want the prompt and not the password", shown)
	}

	ctx := context.Background()
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, shown, code = ptyRun(t, []string{second, "not the same at all"}, "users", "set-password", "--db", db, "--email", "ann@example.com")
	if code == 0 || out != "" || !strings.Contains(shown, "the two passwords differ") {
		t.Fatalf("differing passwords: exit %d, stdout %q, terminal %q", code, out, shown)
	}
	if _, err := s.AuthenticateDashboardUser(ctx, "ann@example.com", first); err != nil {
		t.Fatalf("differing passwords changed the password: %v", err)
	}

	out, shown, code = ptyRun(t, []string{second, second}, "users", "set-password", "--db", db, "--email", "ann@example.com")
	if code != 0 || !strings.Contains(out, `"passwordSet":true`) {
		t.Fatalf("set-password: exit %d, stdout %q, terminal %q", code, out, shown)
	}
	if !strings.Contains(shown, "New password (not shown): ") || !strings.Contains(shown, "Repeat it: ") || strings.Contains(shown, second) {
		t.Fatalf("set-password showed %q: want both prompts and not the password", shown)
	}

	if _, err := s.AuthenticateDashboardUser(ctx, "ann@example.com", second); err != nil {
		t.Fatalf("the typed password: %v", err)
	}
	if _, err := s.AuthenticateDashboardUser(ctx, "ann@example.com", first); err != store.ErrBadCredentials {
		t.Fatalf("the first password still works: %v", err)
	}
}
