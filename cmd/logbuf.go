package cmd

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logFlushInterval bounds how late a log line reaches its destination.
const logFlushInterval = 100 * time.Millisecond

// logBuffer batches log lines into few writes. A request log line per
// request is one write system call per request otherwise, which on the SDK
// hot paths costs more than answering. Lines are flushed every
// logFlushInterval, when the buffer fills, and on Close.
type logBuffer struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out what is buffered.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.w.Flush()
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
			b.Flush()
		}
	}
}

// Close stops the flusher and flushes the rest.
func (b *logBuffer) Close() error {
	close(b.stop)
	<-b.done
	b.Flush()
	return nil
}
