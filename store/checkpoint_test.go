package store

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCheckpointerMovesWALIntoTheDatabase: automatic checkpoints are off,
// so only the checkpointer copies committed pages into the main file; it
// must do so while the database stays open, and once the WAL passes its
// limit it must start over instead of growing with everything written.
func TestCheckpointerMovesWALIntoTheDatabase(t *testing.T) {
	db, app, _ := evOpen(t)
	db.ckpt.limit.Store(4 << 20)
	ctx := context.Background()
	meta := []byte(`{"pad":"` + strings.Repeat("x", 32<<10) + `"}`)
	const events = 600 // about 20 MiB, five times the old automatic threshold
	for i := range events {
		in := EventInput{EventID: "view", SessionID: "s", Metadata: meta}
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			t.Fatal(i, err)
		}
	}
	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return st.Size()
	}
	deadline := time.Now().Add(10 * time.Second)
	for size(db.path) < 18<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("main file %d bytes after 10 s, want the ~20 MiB written checkpointed into it", size(db.path))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// More writes reuse the checkpointed WAL from its start.
	for range events {
		in := EventInput{EventID: "view", SessionID: "s", Metadata: meta}
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			t.Fatal(err)
		}
	}
	if wal := size(db.path + "-wal"); wal > 24<<20 {
		t.Fatalf("WAL is %d bytes after 40 MiB written with a 4 MiB limit, want it restarted rather than grown", wal)
	}
}
