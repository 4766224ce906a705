package store

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"service/store/postgres"
)

// changesChannel is the NOTIFY channel of committed changes to what the
// caches hold (see Tx.changed): a transaction that sets Tx.changed
// notifies it, and PostgreSQL delivers the notification with the commit,
// to every listening process.
const changesChannel = "service_changes"

// notifyChanged asks PostgreSQL to tell the other processes on the
// database, once this transaction commits, that their caches are stale,
// and bumps the change counter that they also read every versionCheck, in
// case a notification goes astray. The counter's row is written last in
// the transaction, so concurrent changes queue on it only for the moment
// before they commit.
//
// The notification carries this process's token, so that its own
// listener passes over what its commit already told its caches, and the
// counter's new value is noted once the commit is done, for the same
// reason: a process starting its caches over at its own every change would
// also make them forget what they know at the moment they may need it most,
// when the database stops answering (see Authenticate). It carries the
// counter's value too, which the other processes note as they start over:
// their next read of the counter must not take the change they were told
// of for one they missed, and start over a second time.
func (tx *Tx) notifyChanged() error {
	var v int64
	if err := tx.queryRow(`INSERT INTO change_version (id, version) VALUES (1, 1)
		ON CONFLICT (id) DO UPDATE SET version = change_version.version + 1 RETURNING version`).Scan(&v); err != nil {
		return err
	}
	if _, err := tx.exec(`SELECT pg_notify('`+changesChannel+`', ?)`, tx.db.pgEngine().self+":"+strconv.FormatInt(v, 10)); err != nil {
		return err
	}
	if l := tx.db.pgEngine().listen; l != nil {
		tx.after = append(tx.after, func() { l.committed(v) })
	}
	return nil
}

// listenBackoff bounds the pause between two attempts to get the
// listener's connection back.
const listenBackoff = time.Second

// versionCheck is how often a process reads the change counter: the
// longest a change can go unseen should its notification be lost. Tests
// hold it back to see what the listener alone does.
var versionCheck = 2 * time.Second

// listener holds a session of its own that LISTENs for changes and starts
// the caches over at each: PostgreSQL's counterpart of SQLite's
// data_version watcher. A notification only says "look again", so one
// that is lost costs staleness, never a wrong write; that is why a lost
// connection also starts the caches over once it is back, for the
// notifications it may have missed meanwhile (unless the change counter
// shows there were none: startOverIfMoved), and why the change counter is
// read every versionCheck besides.
type listener struct {
	stop context.CancelFunc
	done sync.WaitGroup
	// version is the change counter as last read, or as this process's
	// own last change left it; known once it was read.
	mu           sync.Mutex
	version      int64
	versionKnown bool
	// listens counts the LISTENs put in place: one at the start, one after
	// each connection lost; startsOver, those that started the caches over.
	listens, startsOver atomic.Int64
}

// committed notes the counter's value after a change of this process:
// when it follows the value known, nothing else changed meanwhile, and
// the next read need not start the caches over.
func (l *listener) committed(v int64) {
	l.mu.Lock()
	if l.versionKnown && l.version == v-1 {
		l.version = v
	}
	l.mu.Unlock()
}

// notified notes the counter's value v that another process's change
// left, once the caches started over for it: whatever committed up to v
// is read afresh from then on, so a read of the counter that finds v
// finds nothing missed.
func (l *listener) notified(v int64) {
	l.mu.Lock()
	if !l.versionKnown || v > l.version {
		l.version, l.versionKnown = v, true
	}
	l.mu.Unlock()
}

func (db *DB) startListener() {
	ctx, stop := context.WithCancel(context.Background())
	l := &listener{stop: stop}
	db.pgEngine().listen = l
	ready := make(chan struct{})
	l.done.Add(2)
	go func() {
		defer l.done.Done()
		first := true
		for ctx.Err() == nil {
			err := db.listenOnce(ctx, func() {
				// Whatever committed while no connection listened moved
				// the change counter.
				db.startOverIfMoved(ctx)
				l.listens.Add(1)
				db.noticeErasures(ctx)
				if first {
					first = false
					close(ready)
				}
			})
			if ctx.Err() != nil {
				return
			}
			if db.pgEngine().log != nil {
				db.pgEngine().log.Warn("postgres: the change listener lost its connection; the caches start over once it is back, if anything changed meanwhile", "db", db.pgEngine().where, "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(listenBackoff):
			}
		}
	}()
	go func() {
		defer l.done.Done()
		t := time.NewTicker(versionCheck)
		defer t.Stop()
		for {
			db.checkVersion(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	// Opening waits for the first LISTEN, so that nothing committed after
	// Open returns can go unseen; a server that refuses it is reported by
	// the listener's loop instead of failing the start.
	select {
	case <-ready:
	case <-time.After(postgres.ConnectTimeout):
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (db *DB) listenOnce(ctx context.Context, listening func()) error {
	e := db.pgEngine()
	return postgres.Listen(ctx, e.cfg, changesChannel, e.self, listening, func(v int64) {
		db.gen.Add(1)
		if v > 0 {
			e.listen.notified(v)
		}
		// Another process's change, which may be an erasure.
		db.noticeErasures(ctx)
	})
}

// startOverIfMoved starts the caches over, now that the listener listens
// again, unless the change counter stands at the value known: every change
// moves it in its own transaction, so then nothing the caches hold changed
// while no connection listened. Keeping them spares a replica the reads of
// starting over just after the database came back, when they are slowest.
// A counter not known yet, or not read, counts as moved. The value read is
// noted as known when it starts over, for the same reason as a
// notification's: the periodic check that finds it must not start over a
// second time. It reports whether it started over.
func (db *DB) startOverIfMoved(ctx context.Context) bool {
	l := db.pgEngine().listen
	l.mu.Lock()
	known, was := l.versionKnown, l.version
	l.mu.Unlock()
	var v int64
	read := false
	if known {
		ctx, cancel := context.WithTimeout(ctx, db.timeout)
		read = db.read.QueryRowContext(ctx, changeCounter).Scan(&v) == nil
		cancel()
		if read && v == was {
			return false
		}
	}
	db.gen.Add(1)
	l.startsOver.Add(1)
	if read {
		l.notified(v)
	}
	return true
}

// changeCounter reads the change counter.
const changeCounter = `SELECT COALESCE(MAX(version), 0) FROM change_version`

// checkVersion reads the change counter and starts the caches over when it
// moved since the last read: a change whose notification never came. A
// failed read is left to the next one. So is a read during which the
// caches started over, once a value is known: a notification that came
// meanwhile may be noted after the value read, or before it. The first
// value read is known all the same, or a change missed before the next
// read would become the value known.
func (db *DB) checkVersion(ctx context.Context) {
	gen := db.gen.Load()
	var v int64
	if err := db.read.QueryRowContext(ctx, changeCounter).Scan(&v); err != nil {
		return
	}
	l := db.pgEngine().listen
	l.mu.Lock()
	if db.gen.Load() != gen && l.versionKnown {
		l.mu.Unlock()
		return
	}
	moved := l.versionKnown && v != l.version
	l.version, l.versionKnown = v, true
	l.mu.Unlock()
	if moved {
		db.gen.Add(1)
		db.noticeErasures(ctx)
	}
}

func (l *listener) close() {
	l.stop()
	l.done.Wait()
}
