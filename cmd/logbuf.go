package cmd

import (
	"io"
	"sync"
	"time"
)

// logFlushInterval bounds how late a log line reaches its destination.
const logFlushInterval = 100 * time.Millisecond

const (
	// logKickSize is how much waiting text makes the flusher write at once
	// rather than at its next tick.
	logKickSize = 64 << 10
	// logMaxSize bounds the text waiting while a write to the destination
	// is under way; past it, logging waits for that write.
	logMaxSize = 1 << 20
)

// logBuffer batches log lines into few writes. A request log line per
// request is one write system call per request otherwise, which on the SDK
// hot paths costs more than answering. Lines are written every
// logFlushInterval, when logKickSize of them wait, and on Flush and Close.
//
// The write to the destination happens outside the lock: a log reader
// that falls behind (a pipe to a collector, journald under pressure)
// blocks only the flusher, while requests go on adding lines to the next
// batch, up to logMaxSize. Only past that does a request wait, so memory
// stays bounded and no line is dropped.
type logBuffer struct {
	mu      sync.Mutex
	changed *sync.Cond // the batch was taken, or a write ended
	buf     []byte     // lines not yet taken for writing
	spare   []byte     // the last batch written, reused
	writing bool       // a batch is being written, outside mu
	w       io.Writer

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: w, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	b.changed = sync.NewCond(&b.mu)
	go b.loop()
	return b
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	for len(b.buf) >= logMaxSize {
		b.changed.Wait()
	}
	b.buf = append(b.buf, p...)
	full := len(b.buf) >= logKickSize
	b.mu.Unlock()
	if full {
		select {
		case b.kick <- struct{}{}:
		default: // a kick is pending already
		}
	}
	return len(p), nil
}

// Flush writes out every line written before it, in order, and returns
// once they are written.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	for b.writing {
		b.changed.Wait()
	}
	if len(b.buf) == 0 {
		b.mu.Unlock()
		return
	}
	out := b.buf
	b.buf, b.spare = b.spare[:0], nil
	b.writing = true
	b.changed.Broadcast() // room for waiting writers
	b.mu.Unlock()

	// A failed write is not retried: lines that cannot be written have
	// nowhere else to go.
	_, _ = b.w.Write(out)

	b.mu.Lock()
	b.writing = false
	if cap(out) <= 4*logKickSize {
		b.spare = out[:0] // a burst's larger batch is left to the GC
	}
	b.changed.Broadcast()
	b.mu.Unlock()
}

func (b *logBuffer) loop() {
	defer close(b.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.kick:
		}
		b.Flush()
	}
}

// Close stops the flusher and flushes the rest.
func (b *logBuffer) Close() error {
	close(b.stop)
	<-b.done
	b.Flush()
	return nil
}
