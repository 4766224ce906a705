package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"service/store/sqlite"
)

// watchInterval bounds how long a change committed by another process on
// the same file (the CLI, a second server) can go unseen by the caches.
const watchInterval = 100 * time.Millisecond

// watcher notices commits made by other connections. SQLite's
// PRAGMA data_version, asked on one connection, changes exactly when
// another connection has committed since the last time it was asked. On
// the writer connection, which makes every commit of this process, that
// means another process (or another handle on the file): the caches then
// start over, as after a local change. The hot paths read only the
// generation, as before; the pragma costs the writer a few microseconds
// ten times a second.
type watcher struct {
	stop context.CancelFunc
	done chan struct{}
}

// foreignCommits follows PRAGMA data_version on the writer connection for
// the watcher and the event indexer, which both ask it: whichever sees a
// change counts it for both.
type foreignCommits struct {
	mu    sync.Mutex
	last  int64
	known bool
	// seen counts the changes seen: commits of other processes.
	seen atomic.Int64
}

// saw records a data_version read on the writer connection and reports
// whether another process committed since the last one.
func (db *DB) sawDataVersion(v int64) bool {
	f := &db.foreign
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.known {
		f.last, f.known = v, true
		return false
	}
	if v == f.last {
		return false
	}
	f.last = v
	f.seen.Add(1)
	db.gen.Add(1)
	// It may have been an erasure: the watcher looks (noticeErasures).
	db.erasuresDue.Store(true)
	return true
}

func (db *DB) startWatcher() {
	ctx, stop := context.WithCancel(context.Background())
	w := &watcher{stop: stop, done: make(chan struct{})}
	db.watch = w
	if v, err := sqlite.DataVersion(ctx, db.write); err == nil {
		db.sawDataVersion(v)
	}
	db.noticeErasures(ctx)
	go func() {
		defer close(w.done)
		sqlite.WatchDataVersion(ctx, db.write, watchInterval, func(v int64) {
			db.sawDataVersion(v)
			// The event indexer may have been the one to see the commit:
			// the flag, not this call's answer, says whether to look.
			if db.erasuresDue.Swap(false) {
				db.noticeErasures(ctx)
			}
		})
	}()
}

func (w *watcher) close() {
	w.stop()
	<-w.done
}
