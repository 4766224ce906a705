package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"service/internal/testwait"
)

// TestMain lets this test binary be the checkpointer process too: started
// with STORE_CHECKPOINTER_DB set, it runs RunCheckpointer as serve's
// checkpointer command would, instead of the tests.
func TestMain(m *testing.M) {
	if path := os.Getenv("STORE_CHECKPOINTER_DB"); path != "" {
		limit, _ := strconv.ParseInt(os.Getenv("STORE_CHECKPOINTER_LIMIT"), 10, 64)
		stop := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stop)
		}()
		if err := RunCheckpointer(path, limit, stop); err != nil {
			fmt.Fprintln(os.Stderr, "checkpointer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testCheckpointCommand is Options.CheckpointCommand for this test binary.
func testCheckpointCommand(path string, walLimit int64) *exec.Cmd {
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), "STORE_CHECKPOINTER_DB="+path, "STORE_CHECKPOINTER_LIMIT="+strconv.FormatInt(walLimit, 10))
	c.Stderr = os.Stderr
	return c
}

// checkpointModes are the two places checkpoints run: serve's child
// process, and a goroutine (the CLI, tests, and the fallback).
var checkpointModes = []struct {
	name string
	cmd  func(string, int64) *exec.Cmd
}{
	{"process", testCheckpointCommand},
	{"goroutine", nil},
}

// mustOpenAppWith is mustOpenApp with options.
func mustOpenAppWith(tb testing.TB, opts Options) (*DB, int64) {
	tb.Helper()
	db, err := OpenWith(context.Background(), tempDBPath(tb), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	db.Now = func() time.Time { return eventsT0 }
	app, err := db.CreateApp(context.Background(), "test", "enterprise", 0)
	if err != nil {
		tb.Fatal(err)
	}
	return db, app.ID
}

// TestCheckpointerMovesWALIntoTheDatabase: automatic checkpoints are off,
// so only the checkpointer copies committed pages into the main file; it
// must do so while the database stays open, from its process or its
// goroutine.
func TestCheckpointerMovesWALIntoTheDatabase(t *testing.T) {
	sqliteOnly(t)
	for _, mode := range checkpointModes {
		t.Run(mode.name, func(t *testing.T) {
			db, app := mustOpenAppWith(t, Options{CheckpointCommand: mode.cmd})
			if mode.cmd != nil && db.ckpt.PID() == 0 {
				testwait.Until(t, 30*time.Second, "the checkpointer process to start", func() bool { return db.ckpt.PID() != 0 })
			}
			writePadded(t, db, app, 600, 32<<10) // about 20 MiB, five times the old automatic threshold
			testwait.Until(t, 30*time.Second, "the ~20 MiB written checkpointed into the main file", func() bool { return fileSize(db.path) >= 18<<20 })
			if mode.cmd != nil && db.ckpt.PID() == 0 {
				t.Fatal("the checkpointer process is gone: the goroutine did the work")
			}
		})
	}
}

// writePadded logs n events whose metadata is about size bytes.
func writePadded(t *testing.T, db *DB, app int64, n, size int) {
	t.Helper()
	meta := []byte(`{"pad":"` + strings.Repeat("x", size) + `"}`)
	for i := range n {
		in := EventInput{EventID: "view", SessionID: "s", Metadata: meta}
		if _, err := db.LogEvent(context.Background(), app, &in); err != nil {
			t.Fatal(i, err)
		}
	}
}

// TestCheckpointerRestartsWALUnderConstantWrites: with writers that never
// pause, a passive checkpoint rarely finds the WAL fully copied, so the
// WAL would grow for ever; past its limit the checkpointer makes it start
// over. A restart shows as a new checkpoint sequence number in the WAL
// header.
func TestCheckpointerRestartsWALUnderConstantWrites(t *testing.T) {
	sqliteOnly(t)
	for _, mode := range checkpointModes {
		t.Run(mode.name, func(t *testing.T) {
			db, app := mustOpenAppWith(t, Options{CheckpointCommand: mode.cmd, walLimit: 2 << 20})
			ctx := context.Background()
			meta := []byte(`{"pad":"` + strings.Repeat("x", 8<<10) + `"}`)
			first := walSequence(t, db.path)
			var stop atomic.Bool
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						in := EventInput{EventID: "view", SessionID: "s", Metadata: meta}
						if _, err := db.LogEvent(ctx, app, &in); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			defer func() { stop.Store(true); wg.Wait() }()
			// Generous: the restarting checkpoint competes with eight
			// writers for the write lock, and the machine may be busy.
			testwait.Until(t, 30*time.Second, "the WAL to start over under constant writes", func() bool { return walSequence(t, db.path) != first })
		})
	}
}

// TestCheckpointerProcessStopsWithTheDatabase: closing the database ends
// the child, so no process outlives the server that started it.
func TestCheckpointerProcessStopsWithTheDatabase(t *testing.T) {
	sqliteOnly(t)
	db, err := OpenWith(context.Background(), tempDBPath(t), Options{CheckpointCommand: testCheckpointCommand})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "the checkpointer process to start", func() bool { return db.ckpt.PID() != 0 })
	pid := int(db.ckpt.PID())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waited for the child, so its pid is reaped: signal 0 finds
	// nothing.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("checkpointer pid %d after Close: kill(0) = %v, want ESRCH", pid, err)
	}
}

// TestCheckpointerFallsBackToAGoroutine: a child that dies, or cannot
// start, leaves the checkpoints to a goroutine, so the WAL is still
// copied and bounded.
func TestCheckpointerFallsBackToAGoroutine(t *testing.T) {
	sqliteOnly(t)
	for _, tc := range []struct {
		name string
		cmd  func(string, int64) *exec.Cmd
		kill bool
	}{
		{"killed", testCheckpointCommand, true},
		{"missing binary", func(string, int64) *exec.Cmd {
			return exec.Command("/nonexistent/service", "checkpointer")
		}, false},
		{"exits at once", func(string, int64) *exec.Cmd { return exec.Command("true") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, app := mustOpenAppWith(t, Options{CheckpointCommand: tc.cmd})
			if tc.kill {
				testwait.Until(t, 30*time.Second, "the checkpointer process to start", func() bool { return db.ckpt.PID() != 0 })
				if err := syscall.Kill(int(db.ckpt.PID()), syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			testwait.Until(t, 30*time.Second, "the goroutine to take over", func() bool { return db.ckpt.PID() == 0 })
			writePadded(t, db, app, 300, 32<<10)
			testwait.Until(t, 30*time.Second, "the ~10 MiB written checkpointed into the main file", func() bool { return fileSize(db.path) >= 9<<20 })
		})
	}
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// walSequence reads the checkpoint sequence number from the WAL header,
// which SQLite increments each time the WAL starts over.
func walSequence(t *testing.T, path string) uint32 {
	t.Helper()
	f, err := os.Open(path + "-wal")
	if err != nil {
		return 0
	}
	defer f.Close()
	var hdr [16]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return 0
	}
	return binary.BigEndian.Uint32(hdr[12:])
}

// TestCheckpointerStartsWALWriteback: the checkpointer hands the WAL's new
// pages to the disk between checkpoints (see sqlite.Checkpoints; the call
// on a read-only descriptor is store/sqlite's TestStartWritebackReadOnly).
func TestCheckpointerStartsWALWriteback(t *testing.T) {
	sqliteOnly(t)
	db, app, _ := mustOpenApp(t, eventsT0)
	ctx := context.Background()
	before := db.ckpt.Writebacks()
	deadline := time.Now().Add(30 * time.Second)
	for db.ckpt.Writebacks() < before+3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d WAL writebacks in 30 s of writes, want at least 3", db.ckpt.Writebacks()-before)
		}
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", SessionID: "s"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
