package store

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxBatch bounds one group commit, so one transaction never holds the
// writer long enough to starve API writes queued behind it.
const maxBatch = 256

// batcher is the group commit for the hot write paths (impressions, events):
// one goroutine gathers the operations waiting at that moment, runs them in
// one transaction, commits once, and only then answers each caller. An
// answered request is therefore on disk, and throughput is not bound by one
// commit (one WAL fsync-free append plus locking round) per request.
//
// Gathering has to be deliberate. A channel send to a parked receiver makes
// the receiver the next goroutine to run, so with one scheduler thread
// (GOMAXPROCS=1) the batcher used to wake for the first request and commit
// it alone, while the handlers holding the other requests sat in the run
// queue behind it. The batcher therefore yields after taking what is
// queued, lets every runnable handler reach the queue, and commits once a
// yield brings nothing new. With many threads the handlers run in parallel
// and the yield costs next to nothing.
type batcher struct {
	db   *DB
	ch   chan *batchReq
	mu   sync.RWMutex
	shut bool
	done chan struct{}

	// noGather commits whatever is queued without yielding first: the
	// benchmarks' point of comparison.
	noGather bool
	// commits and ops count batches and the operations in them.
	commits, ops atomic.Int64
}

type batchReq struct {
	op  func(tx *Tx) error
	err chan error
	// timer bounds the caller's wait by its context's deadline. It goes
	// with the pooled request, so that waiting costs no allocation: a
	// context's own Done channel and timer would cost two per event.
	timer *time.Timer
}

var reqPool = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &batchReq{err: make(chan error, 1), timer: t}
}}

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
//
// A caller whose ctx reaches its deadline first (the database did not
// answer within the request's time) gets ctx's error at once; its write
// stays queued and may still commit, which retrying makes no worse: events
// carry a logId and assignments are sticky.
func (b *batcher) do(ctx context.Context, op func(tx *Tx) error) error {
	r := reqPool.Get().(*batchReq)
	r.op = op
	b.mu.RLock()
	if b.shut {
		b.mu.RUnlock()
		return errClosed
	}
	b.ch <- r
	b.mu.RUnlock()
	// Only a deadline ends the wait early: a request's context is never
	// cancelled by the client going away (handlers.request), and a queued
	// write is answered whatever becomes of its caller.
	deadline, ok := ctx.Deadline()
	if !ok {
		err := <-r.err
		r.op = nil
		reqPool.Put(r)
		return err
	}
	r.timer.Reset(time.Until(deadline))
	select {
	case err := <-r.err:
		r.timer.Stop()
		r.op = nil
		reqPool.Put(r)
		return err
	case <-r.timer.C:
		// r is still the batcher's, which answers into its buffered
		// channel later: it is left to the garbage collector, not reused.
		return context.DeadlineExceeded
	}
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
		batch = b.gather(append(batch[:0], r))
		b.run(batch)
	}
}

// maxYields bounds the yields of one gathering, so that a steady trickle
// of requests cannot hold a batch open indefinitely.
const maxYields = 16

// gather adds to batch what is queued, yielding to the runnable handlers
// until a yield brings nothing new (see batcher).
func (b *batcher) gather(batch []*batchReq) []*batchReq {
	for yields := 0; len(batch) < maxBatch; yields++ {
		n := len(batch)
	drain:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-b.ch:
				if !ok {
					return batch
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		if b.noGather || yields == maxYields || (yields > 0 && len(batch) == n) {
			return batch
		}
		runtime.Gosched()
	}
	return batch
}

// stats returns the commits made and the operations they carried.
func (b *batcher) stats() (commits, ops int64) { return b.commits.Load(), b.ops.Load() }

func (b *batcher) run(batch []*batchReq) {
	defer b.db.observeBatch(len(batch))()
	// A database that does not answer holds up no more than one timeout:
	// its error answers the whole batch, which no retry alone would mend.
	ctx, cancel := context.WithTimeout(context.Background(), b.db.timeout)
	err := b.db.withTx(ctx, func(tx *Tx) error {
		for _, r := range batch {
			if err := r.op(tx); err != nil {
				return err
			}
		}
		return nil
	})
	cancel()
	b.commits.Add(1)
	b.ops.Add(int64(len(batch)))
	if err == nil || (len(batch) == 1 && !b.db.lostToConcurrent(err)) || IsUnavailable(err) {
		for _, r := range batch {
			r.err <- err
		}
		return
	}
	for _, r := range batch {
		r.err <- b.alone(r.op)
	}
}

// maxConflictRetries bounds how often an operation is run again after it
// lost to another process's concurrent transaction.
const maxConflictRetries = 8

// alone runs op in a transaction of its own, again while it loses to
// another process's concurrent transaction (lostToConcurrent). Running it
// again is what resolves the conflict: PostgreSQL reports a unique
// violation only once the other inserter has committed, and a deadlock's
// other party goes on once this one is rolled back, so the next run reads
// what the other wrote (the logId stored, the user assigned) and answers
// from it, as it would have had it come second.
func (b *batcher) alone(op func(tx *Tx) error) error {
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), b.db.timeout)
		err := b.db.withTx(ctx, op)
		cancel()
		if err == nil || i == maxConflictRetries || !b.db.lostToConcurrent(err) {
			return err
		}
	}
}
