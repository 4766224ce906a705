package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"service/internal/pgtest"
)

// TestRateLimitWindows: the shared count of rate limits. On PostgreSQL claims
// hand out exactly the limit, whichever process asks and however the
// requests are batched; returned requests can be claimed again; windows
// are apart by app, class and minute; trimming deletes old minutes only.
// On SQLite the store keeps no shared count: each process counts its own.
func TestRateLimitWindows(t *testing.T) {
	ctx := context.Background()
	if !pgtest.Selected() {
		db := mustOpenDB(t)
		if db.SharedRateLimits() {
			t.Fatal("SQLite reports a shared count")
		}
		w := RateWindow{App: 1, Class: 0, Minute: 100}
		if _, _, err := db.ClaimRate(ctx, w, 1, 60); !errors.Is(err, ErrRateLimitsLocal) {
			t.Fatalf("ClaimRate on SQLite: err=%v, want ErrRateLimitsLocal", err)
		}
		if err := db.ReturnRate(ctx, w, 1, 60); !errors.Is(err, ErrRateLimitsLocal) {
			t.Fatalf("ReturnRate on SQLite: err=%v, want ErrRateLimitsLocal", err)
		}
		if _, err := db.TrimRateWindows(ctx, 100); !errors.Is(err, ErrRateLimitsLocal) {
			t.Fatalf("TrimRateWindows on SQLite: err=%v, want ErrRateLimitsLocal", err)
		}
		return
	}

	claim := func(t *testing.T, db *DB, w RateWindow, want, limit, wantGot, wantClaimed int) {
		t.Helper()
		got, claimed, err := db.ClaimRate(ctx, w, want, limit)
		if err != nil {
			t.Fatal(err)
		}
		if got != wantGot || claimed != wantClaimed {
			t.Fatalf("claim %d of %d: got=%d claimed=%d, want %d, %d", want, limit, got, claimed, wantGot, wantClaimed)
		}
	}

	t.Run("Exact", func(t *testing.T) {
		db := mustOpenDB(t)
		if !db.SharedRateLimits() {
			t.Fatal("PostgreSQL does not report a shared count")
		}
		w := RateWindow{App: 7, Class: 0, Minute: 1000}
		for i := 1; i <= 3; i++ {
			claim(t, db, w, 1, 3, 1, i)
		}
		claim(t, db, w, 1, 3, 0, 3)
		claim(t, db, w, 1, 3, 0, 3)
	})

	t.Run("Batches", func(t *testing.T) {
		db := mustOpenDB(t)
		w := RateWindow{App: 7, Class: 1, Minute: 1000}
		claim(t, db, w, 4, 10, 4, 4)
		claim(t, db, w, 4, 10, 4, 8)
		// The last claim gets what is left, never more.
		claim(t, db, w, 4, 10, 2, 10)
		claim(t, db, w, 4, 10, 0, 10)
		// A first claim larger than the limit gets the limit.
		claim(t, db, RateWindow{App: 8, Class: 1, Minute: 1000}, 50, 10, 10, 10)
	})

	t.Run("Returns", func(t *testing.T) {
		db := mustOpenDB(t)
		w := RateWindow{App: 7, Class: 1, Minute: 1000}
		claim(t, db, w, 6, 10, 6, 6)
		// This claim asked 6 and got 4: the 2 beyond the limit were never
		// handed out, so giving back 3 leaves exactly 3 to claim.
		claim(t, db, w, 6, 10, 4, 10)
		if err := db.ReturnRate(ctx, w, 3, 10); err != nil {
			t.Fatal(err)
		}
		claim(t, db, w, 6, 10, 3, 10)
		claim(t, db, w, 1, 10, 0, 10)
		if err := db.ReturnRate(ctx, w, 10, 10); err != nil {
			t.Fatal(err)
		}
		claim(t, db, w, 1, 10, 1, 1)
		// Nothing to give back to a window that is gone.
		if err := db.ReturnRate(ctx, RateWindow{App: 7, Class: 1, Minute: 999}, 5, 10); err != nil {
			t.Fatal(err)
		}
		claim(t, db, RateWindow{App: 7, Class: 1, Minute: 999}, 1, 10, 1, 1)
	})

	t.Run("Apart", func(t *testing.T) {
		db := mustOpenDB(t)
		base := RateWindow{App: 7, Class: 0, Minute: 1000}
		claim(t, db, base, 1, 1, 1, 1)
		claim(t, db, base, 1, 1, 0, 1)
		for _, w := range []RateWindow{{App: 8, Class: 0, Minute: 1000}, {App: 7, Class: 1, Minute: 1000}, {App: 7, Class: 0, Minute: 1001}} {
			claim(t, db, w, 1, 1, 1, 1)
		}
	})

	// Two handles on one database, as two processes: many claims at once
	// hand out exactly the limit between them.
	t.Run("Concurrent", func(t *testing.T) {
		path := tempDBPath(t)
		dbs := []*DB{mustOpenDBAt(t, path), mustOpenDBAt(t, path)}
		w := RateWindow{App: 9, Class: 1, Minute: 1000}
		const limit = 1000
		var total atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db := dbs[g%2]
				want := 1 + g*3 // batches of 1 to 22
				for {
					got, _, err := db.ClaimRate(ctx, w, want, limit)
					if err != nil {
						t.Error(err)
						return
					}
					if got == 0 {
						return
					}
					total.Add(int64(got))
				}
			}()
		}
		wg.Wait()
		if got := total.Load(); got != limit {
			t.Fatalf("handed out %d, want %d", got, limit)
		}
	})

	t.Run("Trim", func(t *testing.T) {
		db := mustOpenDB(t)
		for m := int64(1000); m < 1004; m++ {
			claim(t, db, RateWindow{App: 7, Class: 0, Minute: m}, 1, 5, 1, 1)
		}
		n, err := db.TrimRateWindows(ctx, 1002)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Fatalf("trimmed %d windows, want 2", n)
		}
		// The kept windows keep their counts; a trimmed one starts over.
		claim(t, db, RateWindow{App: 7, Class: 0, Minute: 1002}, 1, 5, 1, 2)
		claim(t, db, RateWindow{App: 7, Class: 0, Minute: 1003}, 1, 5, 1, 2)
		claim(t, db, RateWindow{App: 7, Class: 0, Minute: 1001}, 1, 5, 1, 1)
	})
}
