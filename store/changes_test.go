package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"service/internal/pgtest"
	"service/internal/testwait"
	"service/store/sqlite"
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
	// A change told of starts the caches over once: the check for changes
	// missed that comes after it finds none. Starting over again made a
	// replica read the database afresh at the moment it may not answer:
	// a PostgreSQL just thawed, answering the check it had held.
	t.Run("StartsOverOnce", func(t *testing.T) {
		e := newChangesEnv(t)
		e.seenAll(t)
		before := e.server.gen.Load()
		limit := 500
		if _, err := e.cli.UpdateApp(ctx, e.app.ID, AppUpdate{RateLimit: &limit}); err != nil {
			t.Fatal(err)
		}
		e.seenAll(t)
		if got := e.server.gen.Load() - before; got != 1 {
			t.Fatalf("the caches started over %d times for one change, want once", got)
		}
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

// seenAll waits until the server has seen every change committed so far,
// and then runs its check for changes missed once more, as its background
// check would: on PostgreSQL until its listener holds the change
// counter's value, by a notification or by that check; on SQLite until
// the writer connection's data_version has been read after them.
func (e *changesEnv) seenAll(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if e.server.pgEngine() == nil {
		v, err := sqlite.DataVersion(ctx, e.server.write)
		if err != nil {
			t.Fatal(err)
		}
		e.server.sawDataVersion(v)
		return
	}
	var counter int64
	if err := e.cli.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM change_version`).Scan(&counter); err != nil {
		t.Fatal(err)
	}
	l := e.server.pgEngine().listen
	testwait.Until(t, 30*time.Second, "the server to know the change counter's value", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.versionKnown && l.version >= counter
	})
	e.server.checkVersion(ctx)
}

// TestListenerBackStartsOverOnlyForChanges: on PostgreSQL, a change
// listener whose session ended (the server restarted, the network cut it)
// starts the caches over once it is back only when the change counter
// moved meanwhile, and once. Starting over for nothing made replicas read
// everything afresh from a database that had just come back, and answer a
// returning user late or with a 503.
func TestListenerBackStartsOverOnlyForChanges(t *testing.T) {
	if !pgtest.Selected() {
		// SQLite has no listener: PRAGMA data_version moves only with
		// another connection's commit (TestChangesSeenByOtherProcess).
		if db := mustOpenDB(t); db.pgEngine() != nil {
			t.Fatal("the SQLite run opened PostgreSQL")
		}
		return
	}
	// The periodic check would find what the listener missed, and hide
	// what the listener does.
	// Put back once the handles below have closed, and their listeners
	// with them.
	was := versionCheck
	versionCheck = time.Hour
	t.Cleanup(func() { versionCheck = was })
	ctx := context.Background()
	e := newChangesEnv(t)
	e.seenAll(t)
	raw, err := OpenSQL(e.cli.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	l := e.server.pgEngine().listen
	back := func() {
		t.Helper()
		listens := l.listens.Load()
		if _, err := raw.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN `+changesChannel+`'`); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 30*time.Second, "the listener to be back", func() bool { return l.listens.Load() > listens })
	}
	bump := func() {
		t.Helper()
		// Behind the store's back: the counter moves, no notification.
		if _, err := raw.ExecContext(ctx, `INSERT INTO change_version (id, version) VALUES (1, 1)
			ON CONFLICT (id) DO UPDATE SET version = change_version.version + 1`); err != nil {
			t.Fatal(err)
		}
	}

	// Nothing changed: the session's end costs the caches nothing.
	before := e.server.gen.Load()
	back()
	if got := e.server.gen.Load() - before; got != 0 {
		t.Fatalf("the caches started over %d times with nothing changed, want none", got)
	}

	// A change while it was away: they start over once, and the check
	// for changes missed that comes next finds none.
	bump()
	before = e.server.gen.Load()
	back()
	if got := e.server.gen.Load() - before; got != 1 {
		t.Fatalf("the caches started over %d times for a change made while the listener was away, want once", got)
	}
	e.server.checkVersion(ctx)
	if got := e.server.gen.Load() - before; got != 1 {
		t.Fatalf("the check for changes missed started the caches over again (%d times in all), for a change the listener saw", got)
	}

	// The decision itself, read now.
	if e.server.startOverIfMoved(ctx) {
		t.Fatal("started over with the counter where it was known to be")
	}
	bump()
	if !e.server.startOverIfMoved(ctx) {
		t.Fatal("did not start over after the counter moved")
	}
	if e.server.startOverIfMoved(ctx) {
		t.Fatal("started over twice for one move of the counter")
	}
}
