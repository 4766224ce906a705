package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"service/internal/testwait"
)

// changesEnv is two handles on one database, as two processes have: cli
// makes changes, server answers from its caches, whose entries would
// otherwise be trusted for an hour.
type changesEnv struct {
	cli, server *DB
	app         *App
	keyID       int64
	key         string
}

func newChangesEnv(t *testing.T) *changesEnv {
	t.Helper()
	ctx := context.Background()
	path := tempDBPath(t)
	e := &changesEnv{cli: mustOpenDBAt(t, path), server: mustOpenDBAt(t, path)}
	e.server.authTTL = time.Hour
	var err error
	if e.app, err = e.cli.CreateApp(ctx, "changes", "free", 0); err != nil {
		t.Fatal(err)
	}
	k, plain, err := e.cli.CreateKey(ctx, e.app.ID, RoleClient, "")
	if err != nil {
		t.Fatal(err)
	}
	e.keyID, e.key = k.ID, plain
	if _, err := e.server.Authenticate(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if _, err := e.server.AllowedOrigins(ctx, e.app.ID); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestChangesSeenByOtherProcess: a change committed by one process reaches
// another's cached keys and origin lists through the change signal (on
// SQLite PRAGMA data_version, on PostgreSQL NOTIFY and the change
// counter), not by their expiry: here they would be trusted for an hour.
func TestChangesSeenByOtherProcess(t *testing.T) {
	ctx := context.Background()
	t.Run("KeyRevoked", func(t *testing.T) {
		e := newChangesEnv(t)
		if _, err := e.cli.RevokeKey(ctx, e.keyID); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 30*time.Second, "the revoked key to be refused", func() bool {
			_, err := e.server.Authenticate(ctx, e.key)
			return ErrorCode(err) == EINVALID
		})
	})
	t.Run("RateLimitChanged", func(t *testing.T) {
		e := newChangesEnv(t)
		limit := 500
		if _, err := e.cli.UpdateApp(ctx, e.app.ID, AppUpdate{RateLimit: &limit}); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 30*time.Second, "the new rate limit", func() bool {
			k, err := e.server.Authenticate(ctx, e.key)
			if err != nil {
				t.Fatal(err)
			}
			return k.RateLimit == limit
		})
	})
	t.Run("OriginsChanged", func(t *testing.T) {
		e := newChangesEnv(t)
		want := []string{"https://shop.example"}
		if err := e.cli.SetAppAllowedOrigins(ctx, e.app.ID, want); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 30*time.Second, "the new origins", func() bool {
			got, err := e.server.AllowedOrigins(ctx, e.app.ID)
			if err != nil {
				t.Fatal(err)
			}
			return slices.Equal(got, want)
		})
	})
	t.Run("RevokedHereRefusedAtOnce", func(t *testing.T) {
		e := newChangesEnv(t)
		if _, err := e.server.RevokeKey(ctx, e.keyID); err != nil {
			t.Fatal(err)
		}
		_, err := e.server.Authenticate(ctx, e.key)
		wantCode(t, err, EINVALID)
	})
	// A change whose notification never came: written behind the store's
	// back, it moves only the change counter on PostgreSQL (every commit
	// moves data_version on SQLite). The periodic check finds it.
	t.Run("NotificationMissed", func(t *testing.T) {
		e := newChangesEnv(t)
		raw, err := OpenSQL(e.cli.path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		stmts := []string{`UPDATE api_keys SET revoked_at = 1 WHERE id = ?`}
		if e.cli.pgEngine() != nil {
			stmts = append(stmts, `INSERT INTO change_version (id, version) VALUES (1, 1)
				ON CONFLICT (id) DO UPDATE SET version = change_version.version + 1`)
		}
		tx, err := raw.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range stmts {
			var args []any
			if i == 0 {
				args = []any{e.keyID}
			}
			if _, err := tx.Exec(q, args...); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 30*time.Second, "the revoked key to be refused", func() bool {
			_, err := e.server.Authenticate(ctx, e.key)
			return ErrorCode(err) == EINVALID
		})
	})
}
