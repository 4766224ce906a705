package cmd

import (
	"testing"
	"time"

	"service/internal/testlog"
)

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
}
