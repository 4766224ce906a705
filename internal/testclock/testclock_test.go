package testclock

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 678_900_000, time.FixedZone("x", 3600))
	c := New(t0)
	if got, want := c.Now(), t0.Truncate(time.Millisecond).UTC(); !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("Now=%v, want %v in UTC", got, want)
	}
	if got := c.Stamp(); got != "2030-01-02T02:04:05.678Z" {
		t.Fatalf("Stamp=%s", got)
	}
	if got := c.At(-time.Hour); got != "2030-01-02T01:04:05.678Z" {
		t.Fatalf("At(-1h)=%s", got)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { c.Add(time.Second) })
	}
	wg.Wait()
	if got := c.Now().Sub(t0.Truncate(time.Millisecond)); got != 10*time.Second {
		t.Fatalf("after ten concurrent Add(1s): moved %s", got)
	}
}
