package cmd

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"service/internal/testlog"
)

// stalledWriter holds every Write until release is closed, like a log
// reader that has fallen behind.
type stalledWriter struct {
	release chan struct{}
	entered chan struct{} // a Write has started
	testlog.Buffer
}

func newStalledWriter() *stalledWriter {
	return &stalledWriter{release: make(chan struct{}), entered: make(chan struct{}, 1)}
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default: // one is pending already: the tests wait only for the first
	}
	<-w.release
	return w.Buffer.Write(p)
}

func TestLogBuffer(t *testing.T) {
	t.Run("FlushedWithinInterval", func(t *testing.T) {
		var out testlog.Buffer
		b := newLogBuffer(&out)
		defer b.Close()
		b.Write([]byte("line 1\n"))
		deadline := time.Now().Add(10 * time.Second)
		for out.String() != "line 1\n" {
			if time.Now().After(deadline) {
				t.Fatalf("not flushed within %v: %q", 10*time.Second, out.String())
			}
			time.Sleep(logFlushInterval / 10)
		}
	})
	t.Run("FlushedOnClose", func(t *testing.T) {
		var out testlog.Buffer
		b := newLogBuffer(&out)
		b.Write([]byte("a\n"))
		b.Write([]byte("b\n"))
		b.Close()
		if got, want := out.String(), "a\nb\n"; got != want {
			t.Fatalf("after Close: %q, want %q", got, want)
		}
	})
	t.Run("FlushNow", func(t *testing.T) {
		var out testlog.Buffer
		b := newLogBuffer(&out)
		defer b.Close()
		b.Write([]byte("serving\n"))
		b.Flush()
		if got, want := out.String(), "serving\n"; got != want {
			t.Fatalf("after Flush: %q, want %q", got, want)
		}
	})
	t.Run("StalledReaderDoesNotBlockLogging", func(t *testing.T) {
		w := newStalledWriter()
		b := newLogBuffer(w)
		b.Write([]byte("first\n"))
		go b.Flush()
		<-w.entered // the flush is stuck in the destination's Write
		// Lines keep being accepted meanwhile, past the kick size.
		var want strings.Builder
		want.WriteString("first\n")
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 2 * logKickSize / 16 {
				line := fmt.Sprintf("line %09d\n", i)
				b.Write([]byte(line))
				want.WriteString(line)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Write waited for a stalled destination below logMaxSize")
		}
		close(w.release)
		b.Close()
		if got := w.String(); got != want.String() {
			t.Fatalf("written %d bytes, want %d, in order", len(got), want.Len())
		}
	})
	t.Run("BoundedWhileStalled", func(t *testing.T) {
		w := newStalledWriter()
		b := newLogBuffer(w)
		b.Write([]byte("first\n"))
		go b.Flush()
		<-w.entered
		line := bytes.Repeat([]byte("x"), 1023)
		line = append(line, '\n')
		n := 2 * logMaxSize / len(line)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range n {
				b.Write(line)
			}
		}()
		// Twice the bound cannot fit while the destination is stalled:
		// the writer must still be waiting.
		select {
		case <-done:
			t.Fatal("Write buffered twice logMaxSize while the destination was stalled")
		case <-time.After(200 * time.Millisecond):
		}
		close(w.release)
		<-done
		b.Close()
		if got, want := w.String(), "first\n"+strings.Repeat(string(line), n); got != want {
			t.Fatalf("written %d bytes, want %d", len(got), len(want))
		}
	})
}
