package jsonjs

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestAppendTime(t *testing.T) {
	est := time.FixedZone("EST", -5*3600)
	times := []time.Time{
		time.Unix(0, 0),
		time.Date(2026, 11, 24, 23, 2, 32, 999_999_999, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, est),
		time.Date(1999, 12, 31, 23, 59, 59, 1_000_000, time.UTC),
		time.Date(2024, 2, 29, 0, 0, 0, 999_999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // past the layout's four digits
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		times = append(times, time.Unix(r.Int64N(400*365*86400)-100*365*86400, r.Int64N(1e9)).In(est))
	}
	for _, tm := range times {
		want := tm.UTC().AppendFormat([]byte("x"), TimeLayout)
		if got := AppendTime([]byte("x"), tm); string(got) != string(want) {
			t.Fatalf("AppendTime(%v) = %s; want %s", tm, got, want)
		}
		if got, want := AppendQuotedTime(nil, tm), `"`+string(want[1:])+`"`; string(got) != want {
			t.Fatalf("AppendQuotedTime(%v) = %s; want %s", tm, got, want)
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	tm := time.Date(2026, 11, 24, 23, 2, 32, 123_456_789, time.UTC)
	buf := make([]byte, 0, 64)
	b.Run("AppendTime", func(b *testing.B) {
		for b.Loop() {
			buf = AppendTime(buf[:0], tm)
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		for b.Loop() {
			buf = tm.UTC().AppendFormat(buf[:0], TimeLayout)
		}
	})
}
