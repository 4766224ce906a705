// Package testclock is the settable clock tests give store.DB.Now. It is
// atomic because the store's group commit, the schedulers and request
// goroutines read it while a test moves it.
package testclock

import (
	"sync/atomic"
	"time"

	"service/jsonjs"
)

// Clock is a clock with millisecond resolution, the resolution the store
// keeps. The zero Clock stands at the Unix epoch.
type Clock struct{ ms atomic.Int64 }

// New returns a clock standing at t.
func New(t time.Time) *Clock {
	c := &Clock{}
	c.Set(t)
	return c
}

// Now returns the clock's time in UTC; it is the method tests assign to
// store.DB.Now.
func (c *Clock) Now() time.Time { return time.UnixMilli(c.ms.Load()).UTC() }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) { c.ms.Store(t.UnixMilli()) }

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// Stamp is Now as the API writes timestamps.
func (c *Clock) Stamp() string { return c.At(0) }

// At is Now + d as the API writes timestamps.
func (c *Clock) At(d time.Duration) string { return c.Now().Add(d).Format(jsonjs.TimeLayout) }
