package store

import (
	"context"
	"errors"
	"sync"
)

// maxBatch bounds one group commit, so one transaction never holds the
// writer long enough to starve API writes queued behind it.
const maxBatch = 256

// batcher is the group commit for the hot write paths (impressions, events):
// one goroutine gathers the operations waiting at that moment, runs them in
// one transaction, commits once, and only then answers each caller. An
// answered request is therefore on disk, and throughput is not bound by one
// commit (one WAL fsync-free append plus locking round) per request.
type batcher struct {
	db   *DB
	ch   chan *batchReq
	mu   sync.RWMutex
	shut bool
	done chan struct{}
}

type batchReq struct {
	op  func(tx *Tx) error
	err chan error
}

var reqPool = sync.Pool{New: func() any { return &batchReq{err: make(chan error, 1)} }}

// errClosed answers writes that arrive during shutdown.
var errClosed = errors.New("store: closed")

func newBatcher(db *DB) *batcher {
	b := &batcher{db: db, ch: make(chan *batchReq, 4*maxBatch), done: make(chan struct{})}
	go b.loop()
	return b
}

// do runs op inside a shared write transaction and returns once that
// transaction has committed (nil) or failed. op may run twice: if any
// operation of a batch fails, the batch is rolled back and each operation
// is retried alone, so one bad request never sinks its neighbours. An op
// therefore keeps its side effects inside tx, or registers them with
// tx.after to run after the commit.
func (b *batcher) do(_ context.Context, op func(tx *Tx) error) error { // a queued write outlives its caller: see below
	r := reqPool.Get().(*batchReq)
	r.op = op
	b.mu.RLock()
	if b.shut {
		b.mu.RUnlock()
		return errClosed
	}
	b.ch <- r
	b.mu.RUnlock()
	// The request is queued and will be answered even if ctx ends: waiting
	// for it keeps the pooled request from being reused while in flight.
	err := <-r.err
	r.op = nil
	reqPool.Put(r)
	return err
}

func (b *batcher) close() {
	b.mu.Lock()
	b.shut = true
	close(b.ch)
	b.mu.Unlock()
	<-b.done
}

func (b *batcher) loop() {
	defer close(b.done)
	batch := make([]*batchReq, 0, maxBatch)
	for r := range b.ch {
		batch = append(batch[:0], r)
	fill:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-b.ch:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		b.run(batch)
	}
}

func (b *batcher) run(batch []*batchReq) {
	defer b.db.observeBatch(len(batch))()
	err := b.db.withTx(context.Background(), func(tx *Tx) error {
		for _, r := range batch {
			if err := r.op(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || len(batch) == 1 {
		for _, r := range batch {
			r.err <- err
		}
		return
	}
	for _, r := range batch {
		r.err <- b.db.withTx(context.Background(), r.op)
	}
}
