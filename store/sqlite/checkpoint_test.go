package sqlite

import (
	"database/sql"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointerCatchesUpBeforeRestart: a RESTART holds the writer back
// while it copies what is left, so past the WAL's limit passive passes,
// which block no one, first copy what committed meanwhile; the RESTART
// comes last, and the next write starts the log over.
func TestCheckpointerCatchesUpBeforeRestart(t *testing.T) {
	// A database of its own: a store's checkpointer running at the same
	// moment would make a pass report busy instead of the WAL's length.
	path := filepath.Join(t.TempDir(), "store.db")
	w, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`CREATE TABLE t (pad BLOB)`); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := w.Exec(`INSERT INTO t VALUES (zeroblob(4096))`); err != nil {
			t.Fatal(err)
		}
	}
	c, err := newCheckpointer(path, pageSize)
	if err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	var modes []string
	c.ran = func(mode string) { modes = append(modes, mode) }
	first := walSequence(t, path)
	if _, err := c.checkpoint(); err != nil {
		t.Fatal(err)
	}
	// A pass over an idle WAL is quick, so one catch-up pass is the usual
	// count; a slow machine may take more, never past the bound.
	passes := strings.Count(strings.Join(modes, " "), "PASSIVE")
	if len(modes) < 3 || modes[len(modes)-1] != "RESTART" || passes != len(modes)-1 || passes > 1+catchUpPasses {
		t.Fatalf("checkpoint past the limit ran %v, want PASSIVE, 1 to %d catch-up PASSIVE passes, then RESTART", modes, catchUpPasses)
	}
	if _, err := w.Exec(`INSERT INTO t VALUES (zeroblob(4096))`); err != nil {
		t.Fatal(err)
	}
	if walSequence(t, path) == first {
		t.Fatal("the write after the RESTART did not start the WAL over")
	}
}

// walSequence returns the WAL header's checkpoint sequence number, which
// moves each time the log starts over; 0 without a WAL.
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

// TestStartWritebackReadOnly: the writeback call works on the read-only
// descriptor of the WAL the checkpointer keeps.
func TestStartWritebackReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	w, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`CREATE TABLE t (pad BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`INSERT INTO t VALUES (zeroblob(4096))`); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := startWriteback(f); err != nil {
		t.Fatalf("writeback on a read-only WAL descriptor: %v", err)
	}
}
