package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// checkpointInterval is how often the checkpointer copies committed WAL
// frames into the database file. At the write paths' peak a WAL grows by
// a few MiB in that time.
const checkpointInterval = 50 * time.Millisecond

// checkpointer moves WAL frames into the database file on its own
// connection, so that no commit carries a checkpoint's copying and fsyncs
// (wal_autocheckpoint is off in the DSN). It runs in a process of its own
// when serve starts one (see Checkpoints), else as a goroutine.
//
// A PASSIVE checkpoint never blocks the writer or readers, and when it has
// copied every frame the next write transaction starts the WAL over from
// its beginning, so the file stops growing. A reader holding an old
// snapshot can keep a passive checkpoint from finishing; when the WAL has
// outgrown walLimit, a RESTART checkpoint waits for those readers
// (busy_timeout) and holds new writers back until it has reset the log.
//
// Durability does not depend on it: a commit is in the WAL before it is
// answered, and after a crash SQLite replays the WAL on open.
type checkpointer struct {
	conn *sql.DB
	// limit is the WAL length in bytes past which a checkpoint waits for
	// readers: walLimit, smaller in tests.
	limit int64

	walPath    string
	wal        *os.File // the WAL, opened read-only for writeback
	writebacks atomic.Int64

	// ran, when a test sets it, hears each checkpoint mode that completed.
	ran func(mode string)
}

// newCheckpointer prepares a checkpointer; its connection opens on first
// use, so one that never runs costs nothing. A limit of 0 means walLimit.
func newCheckpointer(path string, limit int64) (*checkpointer, error) {
	if limit <= 0 {
		limit = WALLimit
	}
	conn, err := sql.Open("sqlite", dsn(path, "cache_size(-256)"))
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	return &checkpointer{conn: conn, walPath: path + "-wal", limit: limit}, nil
}

// RunCheckpointer is the checkpointer process's body: it checkpoints the
// database at path until stop is closed. walLimit is the WAL length in
// bytes past which it waits for readers to restart the log (0: the
// default).
func RunCheckpointer(path string, walLimitBytes int64, stop <-chan struct{}) error {
	c, err := newCheckpointer(path, walLimitBytes)
	if err != nil {
		return err
	}
	defer c.conn.Close()
	// Fail at once on a path that is not a database, rather than retry
	// every tick behind the server's back.
	if err := c.conn.Ping(); err != nil {
		return err
	}
	c.loop(stop)
	return nil
}

// writebackInterval is how often the WAL's new pages are handed to the
// disk ahead of the checkpoint's fsync (see writeback).
const writebackInterval = 10 * time.Millisecond

func (c *checkpointer) loop(stop <-chan struct{}) {
	defer c.closeWAL()
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	w := time.NewTicker(writebackInterval)
	defer w.Stop()
	for {
		select {
		case <-stop:
			return
		case <-w.C:
			c.writeback()
		case <-t.C:
			// A failed checkpoint is retried on the next tick; the WAL
			// keeps every frame meanwhile.
			_, _ = c.checkpoint()
		}
	}
}

// writeback starts the disk writes of the WAL pages committed since the
// last call, without waiting for them, so that the checkpoint's fsync of
// the WAL (synchronous=NORMAL) finds little left to wait for. Durability
// is unchanged: SQLite still fsyncs where it did.
func (c *checkpointer) writeback() {
	if c.wal == nil {
		f, err := os.Open(c.walPath)
		if err != nil {
			return // no WAL yet: nothing to write
		}
		c.wal = f
	}
	if err := startWriteback(c.wal); err != nil {
		c.closeWAL() // reopened on the next tick
		return
	}
	c.writebacks.Add(1)
}

func (c *checkpointer) closeWAL() {
	if c.wal != nil {
		c.wal.Close()
		c.wal = nil
	}
}

// checkpoint runs one passive checkpoint, and a restarting one when the
// WAL has grown past its limit. It returns the WAL's length in frames.
func (c *checkpointer) checkpoint() (int64, error) {
	frames, err := c.run("PASSIVE")
	if err != nil || frames*pageSize <= c.limit {
		return frames, err
	}
	// The RESTART holds the writer back until it has copied every frame
	// and reset the log, so first passive passes, which block no one, catch
	// up with the writer: a quick pass means little is left to copy.
	for range catchUpPasses {
		start := time.Now()
		if _, err := c.run("PASSIVE"); err != nil {
			return 0, err
		}
		if time.Since(start) < caughtUp {
			break
		}
	}
	return c.run("RESTART")
}

// catchUpPasses bounds the passive passes before a RESTART: under a steady
// stream of commits each one copies what committed during the last, and
// they shrink fast. A pass shorter than caughtUp leaves the RESTART about
// as little to copy.
const (
	catchUpPasses = 8
	caughtUp      = 5 * time.Millisecond
)

// pageSize is SQLite's default page size, which this database keeps: a WAL
// frame is a page plus a 24-byte header.
const pageSize = 4096

func (c *checkpointer) run(mode string) (int64, error) {
	var busy, frames, copied int64
	if err := c.conn.QueryRow(fmt.Sprintf("PRAGMA wal_checkpoint(%s)", mode)).Scan(&busy, &frames, &copied); err != nil {
		return 0, err
	}
	if c.ran != nil {
		c.ran(mode)
	}
	return frames, nil
}
