package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"service/internal/testclock"
)

// throttleDBs opens one database n times, each handle standing for a
// process of its own, all on one clock standing at t0.
func throttleDBs(t *testing.T, n int, t0 time.Time) ([]*DB, *testclock.Clock) {
	t.Helper()
	path := tempDBPath(t)
	clock := testclock.New(t0)
	var dbs []*DB
	for range n {
		db := mustOpenDBAt(t, path)
		db.Now = clock.Now
		dbs = append(dbs, db)
	}
	return dbs, clock
}

// wantLockout fails unless the lockout of limits is want.
func wantLockout(t *testing.T, db *DB, want time.Duration, limits ...SignInLimit) {
	t.Helper()
	got, err := db.SignInLockout(context.Background(), limits...)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("lockout of %v: %v, want %v", limits, got, want)
	}
}

func mustFail(t *testing.T, db *DB, keys ...string) {
	t.Helper()
	if err := db.RecordSignInFailure(context.Background(), keys...); err != nil {
		t.Fatal(err)
	}
}

// failuresOf returns the stored row of key: its failures and the start of
// its window, or -1 and the zero time when it has none.
func failuresOf(t *testing.T, db *DB, key string) (int64, time.Time) {
	t.Helper()
	var n, first int64
	if countRows(t, db, `SELECT COUNT(*) FROM dashboard_signin_failures WHERE key = ?`, key) == 0 {
		return -1, time.Time{}
	}
	if err := db.read.QueryRow(`SELECT failures, first_at FROM dashboard_signin_failures WHERE key = ?`, key).Scan(&n, &first); err != nil {
		t.Fatal(err)
	}
	return n, fromMS(first)
}

func TestSignInThrottle(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	email := SignInLimit{Key: "email:ann@example.com", Max: 5}
	addr := SignInLimit{Key: "addr:192.0.2.1", Max: 20}

	t.Run("Window", func(t *testing.T) {
		dbs, clock := throttleDBs(t, 1, t0)
		db := dbs[0]
		wantLockout(t, db, 0, email)
		for i := range 4 {
			clock.Set(t0.Add(time.Duration(i) * time.Minute))
			mustFail(t, db, email.Key)
			wantLockout(t, db, 0, email)
		}
		clock.Set(t0.Add(5 * time.Minute))
		mustFail(t, db, email.Key)
		// Locked until the window that began with the first failure ends.
		wantLockout(t, db, 10*time.Minute, email)
		if n, first := failuresOf(t, db, email.Key); n != 5 || !first.Equal(t0) {
			t.Fatalf("failures=%d since %v, want 5 since %v", n, first, t0)
		}
		// More failures while locked count, and do not move the window.
		clock.Set(t0.Add(14 * time.Minute))
		mustFail(t, db, email.Key)
		wantLockout(t, db, time.Minute, email)
		clock.Set(t0.Add(SignInWindow - time.Millisecond))
		wantLockout(t, db, time.Millisecond, email)
		clock.Set(t0.Add(SignInWindow))
		wantLockout(t, db, 0, email)
		// The first failure after the window starts a new one at 1.
		clock.Set(t0.Add(20 * time.Minute))
		mustFail(t, db, email.Key)
		if n, first := failuresOf(t, db, email.Key); n != 1 || !first.Equal(t0.Add(20*time.Minute)) {
			t.Fatalf("failures=%d since %v, want 1 since %v", n, first, t0.Add(20*time.Minute))
		}
		wantLockout(t, db, 0, email)
		wantLockout(t, db, 15*time.Minute, SignInLimit{Key: email.Key, Max: 1})
	})

	t.Run("EachKeyItsOwnLimit", func(t *testing.T) {
		dbs, clock := throttleDBs(t, 1, t0)
		db := dbs[0]
		for range 5 {
			mustFail(t, db, email.Key, addr.Key)
		}
		wantLockout(t, db, 15*time.Minute, email, addr)
		wantLockout(t, db, 0, addr)
		clock.Add(time.Minute)
		for i := range 15 {
			mustFail(t, db, fmt.Sprintf("email:other%d@example.com", i), addr.Key)
		}
		wantLockout(t, db, 14*time.Minute, addr)
		// Of two locked keys, the one locked longer decides.
		clock.Add(time.Minute)
		for range 5 {
			mustFail(t, db, "email:bob@example.com")
		}
		wantLockout(t, db, 15*time.Minute, email, addr, SignInLimit{Key: "email:bob@example.com", Max: 5})
		wantLockout(t, db, 0)
		// A key passed twice counts once.
		mustFail(t, db, "email:twice@example.com", "email:twice@example.com")
		if n, _ := failuresOf(t, db, "email:twice@example.com"); n != 1 {
			t.Fatalf("failures=%d, want 1", n)
		}
	})

	t.Run("Reset", func(t *testing.T) {
		dbs, _ := throttleDBs(t, 1, t0)
		db := dbs[0]
		for range 5 {
			mustFail(t, db, email.Key, addr.Key)
		}
		if err := db.ResetSignInFailures(ctx, email.Key); err != nil {
			t.Fatal(err)
		}
		wantLockout(t, db, 0, email)
		if n, _ := failuresOf(t, db, email.Key); n != -1 {
			t.Fatalf("failures=%d after a reset, want no row", n)
		}
		if n, _ := failuresOf(t, db, addr.Key); n != 5 {
			t.Fatalf("the address's failures=%d after the email's reset, want 5", n)
		}
		if err := db.ResetSignInFailures(ctx, "email:nobody@example.com"); err != nil {
			t.Fatalf("reset of a key without failures: %v", err)
		}
	})

	// Failures recorded at once through several handles (processes) on
	// one database all count: on PostgreSQL their writers run at once.
	t.Run("ConcurrentFailuresAllCount", func(t *testing.T) {
		dbs, clock := throttleDBs(t, 4, t0)
		const n = 20
		run := func(key string) {
			t.Helper()
			var wg sync.WaitGroup
			errs := make(chan error, n)
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs <- dbs[i%len(dbs)].RecordSignInFailure(ctx, key, fmt.Sprintf("addr:198.51.100.%d", i))
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		run(email.Key)
		if got, _ := failuresOf(t, dbs[0], email.Key); got != n {
			t.Fatalf("failures=%d, want %d", got, n)
		}
		// Once the window has ended, the first of the concurrent failures
		// starts it over and the others count in the new one.
		clock.Add(SignInWindow)
		run(email.Key)
		if got, first := failuresOf(t, dbs[0], email.Key); got != n || !first.Equal(clock.Now()) {
			t.Fatalf("failures=%d since %v, want %d since %v", got, first, n, clock.Now())
		}
		for _, db := range dbs {
			wantLockout(t, db, SignInWindow, email)
		}
	})

	// Expiry goes by the database's clock, whichever process looks.
	t.Run("ExpiresByTheClock", func(t *testing.T) {
		dbs, clock := throttleDBs(t, 2, t0)
		for i := range 5 {
			mustFail(t, dbs[i%2], email.Key)
		}
		wantLockout(t, dbs[1], SignInWindow, email)
		clock.Add(SignInWindow / 3)
		wantLockout(t, dbs[0], SignInWindow*2/3, email)
		clock.Add(SignInWindow * 2 / 3)
		wantLockout(t, dbs[0], 0, email)
		wantLockout(t, dbs[1], 0, email)
	})

	t.Run("ExpiredRowsTrimmed", func(t *testing.T) {
		dbs, clock := throttleDBs(t, 1, t0)
		db := dbs[0]
		const spray = 250
		for i := range spray {
			mustFail(t, db, fmt.Sprintf("addr:203.0.113.%d", i))
		}
		clock.Add(10 * time.Minute)
		for range 5 {
			mustFail(t, db, email.Key)
		}
		// Past the spray's window, within the lockout's.
		clock.Add(6 * time.Minute)
		expired := func() int64 {
			return countRows(t, db, `SELECT COUNT(*) FROM dashboard_signin_failures WHERE first_at <= ?`, ms(clock.Now().Add(-SignInWindow)))
		}
		if n := expired(); n != spray {
			t.Fatalf("%d expired rows before any trim, want %d", n, spray)
		}
		mustFail(t, db, "addr:192.0.2.200")
		// One failure trims a bounded batch, the next ones the rest.
		if n := expired(); n != spray-signInTrimBatch {
			t.Fatalf("%d expired rows after one failure, want %d", n, spray-signInTrimBatch)
		}
		mustFail(t, db, "addr:192.0.2.200")
		mustFail(t, db, "addr:192.0.2.200")
		if n := expired(); n != 0 {
			t.Fatalf("%d expired rows after three failures, want 0", n)
		}
		// Live rows stay: the lockout and the latest failures.
		wantLockout(t, db, 9*time.Minute, email)
		if n, _ := failuresOf(t, db, "addr:192.0.2.200"); n != 3 {
			t.Fatalf("failures=%d, want 3", n)
		}
		if n := countRows(t, db, `SELECT COUNT(*) FROM dashboard_signin_failures`); n != 2 {
			t.Fatalf("%d rows, want 2", n)
		}
	})

	// A spray of failures from ever new addresses, over several windows,
	// leaves the table at about one window's worth of keys.
	t.Run("BoundedUnderASpray", func(t *testing.T) {
		dbs, clock := throttleDBs(t, 1, t0)
		db := dbs[0]
		const perMinute, minutes = 20, 40
		most := int64(0)
		for m := range minutes {
			for i := range perMinute {
				mustFail(t, db, fmt.Sprintf("addr:10.0.%d.%d", m, i))
			}
			most = max(most, countRows(t, db, `SELECT COUNT(*) FROM dashboard_signin_failures`))
			clock.Add(time.Minute)
		}
		// A key's window lasts 15 minutes; one more minute's keys are in
		// the table while their expiry waits for the next failure.
		if limit := int64(16 * perMinute); most > limit {
			t.Fatalf("the table held %d rows, want at most %d", most, limit)
		}
	})
}
