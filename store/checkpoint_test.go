package store

import (
	"context"
	"encoding/binary"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCheckpointerMovesWALIntoTheDatabase: automatic checkpoints are off,
// so only the checkpointer copies committed pages into the main file; it
// must do so while the database stays open.
func TestCheckpointerMovesWALIntoTheDatabase(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	ctx := context.Background()
	meta := []byte(`{"pad":"` + strings.Repeat("x", 32<<10) + `"}`)
	const events = 600 // about 20 MiB, five times the old automatic threshold
	for i := range events {
		in := EventInput{EventID: "view", SessionID: "s", Metadata: meta}
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			t.Fatal(i, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for fileSize(db.path) < 18<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("main file %d bytes after 10 s, want the ~20 MiB written checkpointed into it", fileSize(db.path))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCheckpointerRestartsWALUnderConstantWrites: with writers that never
// pause, a passive checkpoint rarely finds the WAL fully copied, so the
// WAL would grow for ever; past its limit the checkpointer makes it start
// over. A restart shows as a new checkpoint sequence number in the WAL
// header.
func TestCheckpointerRestartsWALUnderConstantWrites(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	db.ckpt.limit.Store(2 << 20)
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
	// Generous: the restarting checkpoint competes with eight writers for
	// the write lock, and the machine may be busy.
	deadline := time.Now().Add(30 * time.Second)
	for walSequence(t, db.path) == first {
		if time.Now().After(deadline) {
			t.Fatalf("the WAL never started over in 30 s of writes (now %d bytes)", fileSize(db.path+"-wal"))
		}
		time.Sleep(20 * time.Millisecond)
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
// pages to the disk between checkpoints (see writeback), and the call works
// on the read-only descriptor it keeps.
func TestCheckpointerStartsWALWriteback(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	ctx := context.Background()
	before := db.ckpt.writebacks.Load()
	deadline := time.Now().Add(30 * time.Second)
	for db.ckpt.writebacks.Load() < before+3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d WAL writebacks in 30 s of writes, want at least 3", db.ckpt.writebacks.Load()-before)
		}
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", SessionID: "s"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	f, err := os.Open(db.path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := startWriteback(f); err != nil {
		t.Fatalf("writeback on a read-only WAL descriptor: %v", err)
	}
}
