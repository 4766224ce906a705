package store

import (
	"sync"
	"sync/atomic"
)

// genCounter is the change generation (DB.gen) and a broadcast of its
// moves. The hot paths only Load it; Add, which every committed change and
// every change seen from another process calls, also wakes whoever waits
// on Changed, so that a watcher learns of changes without polling.
type genCounter struct {
	atomic.Uint64
	mu sync.Mutex
	ch chan struct{} // closed at the next Add; nil until someone waits
}

// Add moves the generation and wakes the waiters of Changed.
func (g *genCounter) Add(d uint64) uint64 {
	n := g.Uint64.Add(d)
	g.mu.Lock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
	g.mu.Unlock()
	return n
}

// changed returns a channel closed at the next move of the generation.
func (g *genCounter) changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	return g.ch
}

// Changes returns the current change generation and a channel that is
// closed when it next moves: a change committed by this process, or one
// seen from another (SQLite's data_version watcher, PostgreSQL's
// LISTEN/NOTIFY), within what those take to notice. A move says only
// "look again": it may concern nothing the caller holds.
func (db *DB) Changes() (uint64, <-chan struct{}) {
	ch := db.gen.changed()
	return db.gen.Load(), ch
}
