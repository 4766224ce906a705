package store

import (
	"context"
	"slices"
	"strings"
	"time"
)

// The dashboard's sign-in throttle lives in the database, so that every
// process on it counts the same failures and a lockout outlives a restart:
// a row per key (an email or a client address) holds the failures since
// the first one of the key's current window.

// SignInWindow is how long failed sign-ins count, from the first failure
// of a window; the next failure after it starts a new window.
const SignInWindow = 15 * time.Minute

// signInTrimBatch bounds the expired rows one failure's transaction
// deletes. A failure adds at most one row per key, so deleting up to this
// many keeps the table to the keys of about one window while failures
// keep coming, and no single sign-in pays for the expiry of a whole flood.
const signInTrimBatch = 100

// SignInLimit is a throttle key and the number of failures within
// SignInWindow that locks it out.
type SignInLimit struct {
	Key string
	Max int
}

// SignInLockout returns how long until none of the limits' keys is locked
// out any more, or 0 when none is now.
func (db *DB) SignInLockout(ctx context.Context, limits ...SignInLimit) (time.Duration, error) {
	if len(limits) == 0 {
		return 0, nil
	}
	now := ms(db.Now())
	args := []any{now - SignInWindow.Milliseconds()}
	marks := make([]string, len(limits))
	for i, l := range limits {
		marks[i] = "?"
		args = append(args, l.Key)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT key, first_at, failures FROM dashboard_signin_failures
		WHERE first_at > ? AND key IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var wait int64 // milliseconds
	for rows.Next() {
		var key string
		var first, failures int64
		if err := rows.Scan(&key, &first, &failures); err != nil {
			return 0, err
		}
		for _, l := range limits {
			if l.Key == key && failures >= int64(l.Max) {
				wait = max(wait, first+SignInWindow.Milliseconds()-now)
			}
		}
	}
	return time.Duration(wait) * time.Millisecond, rows.Err()
}

// RecordSignInFailure counts one failed sign-in against each key, all in
// one transaction. Each key's count is one upsert, with no read before it,
// so failures that processes record at once all count; a window that has
// ended starts over at 1. The same transaction deletes rows whose window
// has ended, a bounded number of them, so the table cannot grow without
// bound under failures from ever new addresses.
func (db *DB) RecordSignInFailure(ctx context.Context, keys ...string) error {
	// Rows locked in one order cannot deadlock with another process's
	// failure on the same keys.
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	return db.withTx(ctx, func(tx *Tx) error {
		now := ms(tx.now)
		ended := now - SignInWindow.Milliseconds()
		for _, key := range keys {
			if _, err := tx.exec(`INSERT INTO dashboard_signin_failures (key, first_at, failures) VALUES (?, ?, 1)
				ON CONFLICT (key) DO UPDATE SET
					failures = CASE WHEN dashboard_signin_failures.first_at <= ? THEN 1 ELSE dashboard_signin_failures.failures + 1 END,
					first_at = CASE WHEN dashboard_signin_failures.first_at <= ? THEN excluded.first_at ELSE dashboard_signin_failures.first_at END`,
				key, now, ended, ended); err != nil {
				return err
			}
		}
		// Any process's failure may trim; on PostgreSQL each passes over
		// the rows another holds, so trimming never waits on it.
		_, err := tx.exec(`DELETE FROM dashboard_signin_failures WHERE key IN (
			SELECT key FROM dashboard_signin_failures WHERE first_at <= ? ORDER BY first_at LIMIT ?`+tx.db.eng.skipLocked()+`)`,
			ended, signInTrimBatch)
		return err
	})
}

// ResetSignInFailures forgets the failures of key, after a sign-in that
// succeeded.
func (db *DB) ResetSignInFailures(ctx context.Context, key string) error {
	return db.withTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(`DELETE FROM dashboard_signin_failures WHERE key = ?`, key)
		return err
	})
}
