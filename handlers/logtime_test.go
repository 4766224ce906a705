package handlers

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendLogTime: the request line's time is exactly what slog's JSON
// handler writes (time.RFC3339Nano), in every zone and at every precision.
func TestAppendLogTime(t *testing.T) {
	zones := []*time.Location{time.UTC, time.Local,
		time.FixedZone("IST", 5*3600+30*60), time.FixedZone("NST", -(3*3600 + 30*60)),
		time.FixedZone("LINT", 14*3600), time.FixedZone("LMT", -(17*60 + 32)), // an offset in seconds
	}
	times := []time.Time{
		time.Unix(0, 0),
		time.Date(2026, 11, 24, 23, 2, 32, 0, time.UTC),
		time.Date(2026, 11, 24, 23, 2, 32, 100_000_000, time.UTC),
		time.Date(2026, 11, 24, 23, 2, 32, 1, time.UTC),
		time.Date(2026, 11, 24, 23, 2, 32, 123_456_780, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Now(),
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5_000 {
		ns := r.Int64N(1e9)
		if r.IntN(2) == 0 {
			ns -= ns % 1000 // fewer digits, as some clocks give
		}
		times = append(times, time.Unix(r.Int64N(200*365*86400), ns))
	}
	for _, tm := range times {
		for _, z := range zones {
			tz := tm.In(z)
			want := tz.AppendFormat([]byte("x"), time.RFC3339Nano)
			if got := appendLogTime([]byte("x"), tz); string(got) != string(want) {
				t.Fatalf("appendLogTime(%v) = %s; want %s", tz, got, want)
			}
		}
	}
}
