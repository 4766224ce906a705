package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// changesChannel is the NOTIFY channel of committed changes to what the
// caches hold (campaigns, content, audiences, app settings): a
// transaction that sets Tx.changed notifies it, and PostgreSQL delivers
// the notification with the commit, to every listening process.
const changesChannel = "service_changes"

// notifyChanged asks PostgreSQL to tell the other processes on the
// database, once this transaction commits, that their caches are stale.
func (tx *Tx) notifyChanged() error {
	_, err := tx.ExecContext(tx.ctx, `SELECT pg_notify('`+changesChannel+`', '')`)
	return err
}

// listenBackoff bounds the pause between two attempts to get the
// listener's connection back.
const listenBackoff = time.Second

// listener holds a session of its own that LISTENs for changes and starts
// the caches over at each: PostgreSQL's counterpart of SQLite's
// data_version watcher. A notification only says "look again", so one
// that is lost costs staleness, never a wrong write; that is why a lost
// connection also starts the caches over once it is back, for the
// notifications it may have missed meanwhile.
type listener struct {
	stop context.CancelFunc
	done chan struct{}
}

func (db *DB) startListener() {
	ctx, stop := context.WithCancel(context.Background())
	l := &listener{stop: stop, done: make(chan struct{})}
	db.pg.listen = l
	ready := make(chan struct{})
	go func() {
		defer close(l.done)
		first := true
		for ctx.Err() == nil {
			err := db.listenOnce(ctx, func() {
				// Whatever committed while no connection listened is
				// unknown: start over.
				db.gen.Add(1)
				if first {
					first = false
					close(ready)
				}
			})
			if ctx.Err() != nil {
				return
			}
			if db.pg.log != nil {
				db.pg.log.Warn("postgres: the change listener lost its connection; the caches start over once it is back", "db", db.pg.where, "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(listenBackoff):
			}
		}
	}()
	// Opening waits for the first LISTEN, so that nothing committed after
	// Open returns can go unseen; a server that refuses it is reported by
	// the listener's loop instead of failing the start.
	select {
	case <-ready:
	case <-time.After(connectTimeout):
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (db *DB) listenOnce(ctx context.Context, listening func()) error {
	c, err := pgx.ConnectConfig(ctx, db.pg.cfg)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, `LISTEN `+changesChannel); err != nil {
		return err
	}
	listening()
	for {
		if _, err := c.WaitForNotification(ctx); err != nil {
			return err
		}
		db.gen.Add(1)
	}
}

func (l *listener) close() {
	l.stop()
	<-l.done
}
