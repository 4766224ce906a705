package store

import (
	"context"
	"time"
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

func (db *DB) startWatcher() {
	ctx, stop := context.WithCancel(context.Background())
	w := &watcher{stop: stop, done: make(chan struct{})}
	db.watch = w
	last, _ := db.dataVersion(ctx)
	go func() {
		defer close(w.done)
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			v, err := db.dataVersion(ctx)
			if err != nil {
				continue // closed, or busy: the next tick asks again
			}
			if v != last {
				last = v
				db.gen.Add(1)
			}
		}
	}()
}

func (db *DB) dataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.write.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v)
	return v, err
}

func (w *watcher) close() {
	w.stop()
	<-w.done
}
