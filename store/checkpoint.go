package store

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
// connection and goroutine, so that no commit carries a checkpoint's
// copying and fsyncs (wal_autocheckpoint is off in the DSN).
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
	limit atomic.Int64
	stop  chan struct{}
	done  chan struct{}

	walPath    string
	wal        *os.File // the WAL, opened read-only for writeback
	writebacks atomic.Int64
}

func newCheckpointer(path string) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", dsn(path, "cache_size(-256)"))
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	c := &checkpointer{conn: conn, walPath: path + "-wal", stop: make(chan struct{}), done: make(chan struct{})}
	c.limit.Store(walLimit)
	go c.loop()
	return c, nil
}

// writebackInterval is how often the WAL's new pages are handed to the
// disk ahead of the checkpoint's fsync (see writeback).
const writebackInterval = 10 * time.Millisecond

func (c *checkpointer) loop() {
	defer close(c.done)
	defer c.closeWAL()
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	w := time.NewTicker(writebackInterval)
	defer w.Stop()
	for {
		select {
		case <-c.stop:
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
// last call, without waiting for them. A checkpoint first fsyncs the WAL
// (synchronous=NORMAL), and a Go thread blocked in fsync keeps its
// scheduler slot until the runtime's monitor notices, up to about 10 ms
// later: with GOMAXPROCS=1 every request waits that long. Measured under
// event logging, those fsyncs were 7% of the time with nothing running
// (iowait). Pages already on their way leave the fsync little to wait
// for. Durability is unchanged: SQLite still fsyncs where it did.
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
	if err != nil || frames*pageSize <= c.limit.Load() {
		return frames, err
	}
	return c.run("RESTART")
}

// pageSize is SQLite's default page size, which this database keeps: a WAL
// frame is a page plus a 24-byte header.
const pageSize = 4096

func (c *checkpointer) run(mode string) (int64, error) {
	var busy, frames, copied int64
	if err := c.conn.QueryRow(fmt.Sprintf("PRAGMA wal_checkpoint(%s)", mode)).Scan(&busy, &frames, &copied); err != nil {
		return 0, err
	}
	return frames, nil
}

func (c *checkpointer) close() {
	close(c.stop)
	<-c.done
	c.conn.Close()
}
