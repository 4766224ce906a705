// Package testwait waits in tests for what must eventually happen, with a
// generous bound, instead of sleeping for a guessed time.
package testwait

import (
	"testing"
	"time"
)

// Until polls cond every few milliseconds until it holds, and fails the
// test when timeout passes first.
func Until(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
