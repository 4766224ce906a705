package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"service/internal/pgtest"
	"service/store/postgres"
)

// The first read of a group commit (queryRowFirst) and its counters,
// written with the commit, are the transaction's on both engines: what a
// rollback undoes, and what fails the commit when they fail.
func TestCommitFirstReadAndCounters(t *testing.T) {
	ctx := context.Background()
	e := newCampaignTestEnv(t)
	db := e.db
	lc, err := db.liveCampaign(ctx, e.app, e.create(nil, campaignTestAt(24*time.Hour), CampaignActive))
	if err != nil {
		t.Fatal(err)
	}
	vid := lc.variants[0].id
	const addUser = `INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES (?, ?, '{}', 0, 0) RETURNING user_id`
	impressions := func() int64 {
		return countRows(t, db, `SELECT impressions FROM campaign_variants WHERE id = ?`, vid)
	}
	users := func(id string) int64 {
		return countRows(t, db, `SELECT count(*) FROM users WHERE app_id = ? AND user_id = ?`, e.app, id)
	}
	for _, c := range []struct {
		name    string
		variant int64 // the counted variant; 0 counts none
		commit  bool
		wantErr bool
		want    int64 // rows of the user, and impressions added
	}{
		{name: "rolled back", variant: vid, want: 0},
		{name: "committed", variant: vid, commit: true, want: 1},
		{name: "committed without counters", commit: true, want: 1},
		// The hours' row names a variant that does not exist: the
		// counters' statement fails, and so does all the commit.
		{name: "counters fail", variant: 1 << 40, commit: true, wantErr: true, want: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := impressions()
			user := "u-" + c.name
			tx, err := db.begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if err := db.eng.queryRowFirst(tx, addUser, []any{e.app, user}, &got); err != nil || got != user {
				tx.end()
				t.Fatalf("first read: %q, %v", got, err)
			}
			if c.variant != 0 {
				tx.countImpression(c.variant)
			}
			if c.commit {
				err = tx.commit()
			}
			tx.end()
			if (err != nil) != c.wantErr {
				t.Fatalf("commit: %v, want an error: %v", err, c.wantErr)
			}
			if n := users(user); n != c.want {
				t.Errorf("%d rows of the user, want %d", n, c.want)
			}
			added := impressions() - before
			if c.variant != vid {
				if added != 0 {
					t.Errorf("%d impressions added, want none", added)
				}
			} else if added != c.want {
				t.Errorf("%d impressions added, want %d", added, c.want)
			}
		})
	}
}

// rtConn counts round trips: the times the client writes after it has
// read, or for the first time.
type rtConn struct {
	net.Conn
	mu     sync.Mutex
	read   bool
	trips  int
	counts *rtCounter
}

type rtCounter struct {
	mu    sync.Mutex
	trips int
}

func (c *rtConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if c.read || c.trips == 0 {
		c.trips++
		c.counts.mu.Lock()
		c.counts.trips++
		c.counts.mu.Unlock()
	}
	c.read = false
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *rtConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.read = true
		c.mu.Unlock()
	}
	return n, err
}

func (r *rtCounter) take() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.trips
	r.trips = 0
	return n
}

// A transaction's BEGIN goes with its first statement, and its COMMIT
// with the statement ExecCommit sends; a transaction that runs nothing
// costs no round trip. Each case runs twice and counts the second run,
// once pgx has prepared its statements.
func TestPostgresTransactionRoundTrips(t *testing.T) {
	if !pgtest.Selected() {
		// SQLite runs in the process: there are no round trips to count,
		// and TestCommitFirstReadAndCounters checks what the same
		// transactions write on both engines.
		db := mustOpenDB(t)
		if db.pgEngine() != nil {
			t.Fatal("the SQLite run opened PostgreSQL")
		}
		return
	}
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	counter := &rtCounter{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &rtConn{Conn: c, counts: counter}, nil
	}
	pool := sql.OpenDB(postgres.Connector(stdlib.GetConnector(*cfg), nil))
	t.Cleanup(func() { pool.Close() })
	pool.SetMaxOpenConns(1)
	if _, err := pool.ExecContext(ctx, `CREATE TABLE rt (id BIGINT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	var next int64
	insert := func() []any { next++; return []any{next} }
	// found is what a case read back; seen checks that a statement put
	// off ran before the one that read it.
	var found int64
	seen := func(err error) error {
		if err == nil && found != 1 {
			return fmt.Errorf("read %d rows of a statement put off, want 1", found)
		}
		return err
	}
	// rows counts on the pool, or on sc, the pool's one connection, when
	// a test holds it.
	rows := func(sc ...*sql.Conn) int64 {
		var n int64
		var err error
		if len(sc) > 0 {
			err = sc[0].QueryRowContext(ctx, `SELECT count(*) FROM rt`).Scan(&n)
		} else {
			err = pool.QueryRowContext(ctx, `SELECT count(*) FROM rt`).Scan(&n)
		}
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		name  string
		opts  *sql.TxOptions
		run   func(sc *sql.Conn, tx *sql.Tx) error
		end   func(tx *sql.Tx) error
		trips int
		added int64
	}{
		{name: "empty", end: (*sql.Tx).Commit, trips: 0},
		{name: "empty rolled back", end: (*sql.Tx).Rollback, trips: 0},
		{name: "exec first", run: func(_ *sql.Conn, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO rt (id) VALUES (?)`, insert()...)
			return err
		}, end: (*sql.Tx).Commit, trips: 2, added: 1},
		{name: "exec first rolled back", run: func(_ *sql.Conn, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO rt (id) VALUES (?)`, insert()...)
			return err
		}, end: (*sql.Tx).Rollback, trips: 2},
		{name: "query first", run: func(_ *sql.Conn, tx *sql.Tx) error {
			var id int64
			return tx.QueryRowContext(ctx, `INSERT INTO rt (id) VALUES (?) RETURNING id`, insert()...).Scan(&id)
		}, end: (*sql.Tx).Commit, trips: 3, added: 1},
		{name: "first read and commit", run: func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error {
				var id int64
				if err := postgres.RawQueryRow(ctx, dc, `INSERT INTO rt (id) VALUES (?) RETURNING id`, insert(), &id); err != nil {
					return err
				}
				return postgres.ExecCommit(ctx, dc, `INSERT INTO rt (id) VALUES (?)`, insert()...)
			})
		}, end: (*sql.Tx).Commit, trips: 2, added: 2},
		{name: "first read rolled back", run: func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error {
				var id int64
				return postgres.RawQueryRow(ctx, dc, `INSERT INTO rt (id) VALUES (?) RETURNING id`, insert(), &id)
			})
		}, end: (*sql.Tx).Rollback, trips: 2},
		{name: "commit alone", run: func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error {
				return postgres.ExecCommit(ctx, dc, `INSERT INTO rt (id) VALUES (?)`, insert()...)
			})
		}, end: (*sql.Tx).Commit, trips: 1, added: 1},
		{name: "put off, then a first read", run: func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error {
				id := insert()
				if err := postgres.Defer(dc, `INSERT INTO rt (id) VALUES (?)`, id, nil); err != nil {
					return err
				}
				return seen(postgres.RawQueryRow(ctx, dc, `SELECT count(*) FROM rt WHERE id = ?`, id, &found))
			})
		}, end: (*sql.Tx).Commit, trips: 2, added: 1},
		{name: "put off, then a query", run: func(sc *sql.Conn, tx *sql.Tx) error {
			id := insert()
			if err := sc.Raw(func(dc any) error {
				return postgres.Defer(dc, `INSERT INTO rt (id) VALUES (?)`, id, nil)
			}); err != nil {
				return err
			}
			return seen(tx.QueryRowContext(ctx, `SELECT count(*) FROM rt WHERE id = ?`, id...).Scan(&found))
		}, end: (*sql.Tx).Commit, trips: 3, added: 1},
		{name: "put off, then committed", run: func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error {
				return postgres.Defer(dc, `INSERT INTO rt (id) VALUES (?) RETURNING id`, insert(), func(r pgx.CollectableRow) error {
					return r.Scan(&found)
				})
			})
		}, end: (*sql.Tx).Commit, trips: 1, added: 1},
		{name: "put off, then rolled back", run: func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error {
				return postgres.Defer(dc, `INSERT INTO rt (id) VALUES (?)`, insert(), nil)
			})
		}, end: (*sql.Tx).Rollback, trips: 0},
		{name: "prepare first rolled back", run: func(_ *sql.Conn, tx *sql.Tx) error {
			st, err := tx.PrepareContext(ctx, `INSERT INTO rt (id) VALUES (?)`)
			if err != nil {
				return err
			}
			defer st.Close()
			_, err = st.ExecContext(ctx, insert()...)
			return err
		}, end: (*sql.Tx).Rollback, trips: 5},
		{name: "read only", opts: &sql.TxOptions{ReadOnly: true}, run: func(_ *sql.Conn, tx *sql.Tx) error {
			var n int64
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM rt`).Scan(&n)
		}, end: (*sql.Tx).Commit, trips: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			// once runs the case and counts its round trips; a failure
			// returns the connection first, for the next cases.
			once := func() int {
				sc, err := pool.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer sc.Close()
				counter.take()
				tx, err := sc.BeginTx(ctx, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback() // sql.ErrTxDone once ended
				if c.run != nil {
					if err := c.run(sc, tx); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.end(tx); err != nil {
					t.Fatal(err)
				}
				return counter.take()
			}
			for round := range 2 {
				before := rows()
				trips := once()
				if round == 1 && trips != c.trips {
					t.Errorf("%d round trips, want %d", trips, c.trips)
				}
				if added := rows() - before; added != c.added {
					t.Errorf("%d rows added, want %d", added, c.added)
				}
			}
		})
	}

	// RawQueryRow answers no row as database/sql does.
	t.Run("no row", func(t *testing.T) {
		sc, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		var id int64
		err = sc.Raw(func(dc any) error {
			return postgres.RawQueryRow(ctx, dc, `SELECT id FROM rt WHERE id = ?`, []any{int64(-1)}, &id)
		})
		if !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("RawQueryRow of no row: %v, want sql.ErrNoRows", err)
		}
	})

	// A duplicate key (the id of the row the transaction wrote first),
	// sent with ExecCommit, put off before it or before the commit, fails
	// there; the transaction is rolled back with what ran before it, and
	// the connection is back outside any transaction. After a statement
	// that failed, PostgreSQL answers the COMMIT with ROLLBACK, which
	// raised no error of its own: the commit fails all the same.
	dup := `INSERT INTO rt (id) VALUES (?)`
	for _, c := range []struct {
		name string
		fail func(sc *sql.Conn, tx *sql.Tx) error
		want error // nil: a unique violation
	}{
		{"commit fails", func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error { return postgres.ExecCommit(ctx, dc, dup, next) })
		}, nil},
		{"put off fails", func(sc *sql.Conn, _ *sql.Tx) error {
			return sc.Raw(func(dc any) error {
				if err := postgres.Defer(dc, dup, []any{next}, nil); err != nil {
					return err
				}
				return postgres.ExecCommit(ctx, dc, `INSERT INTO rt (id) VALUES (?)`, insert()...)
			})
		}, nil},
		{"put off fails at the commit", func(sc *sql.Conn, tx *sql.Tx) error {
			if err := sc.Raw(func(dc any) error { return postgres.Defer(dc, dup, []any{next}, nil) }); err != nil {
				return err
			}
			return tx.Commit()
		}, nil},
		{"commit after a failed statement", func(_ *sql.Conn, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, dup, next); !postgres.IsCode(err, postgres.UniqueViolation) {
				return fmt.Errorf("%v, want a unique violation", err)
			}
			return tx.Commit()
		}, pgx.ErrTxCommitRollback},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := rows()
			sc, err := pool.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			tx, err := sc.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() // sql.ErrTxDone once ended
			if _, err := tx.ExecContext(ctx, `INSERT INTO rt (id) VALUES (?)`, insert()...); err != nil {
				t.Fatal(err)
			}
			if err := c.fail(sc, tx); c.want == nil && !postgres.IsCode(err, postgres.UniqueViolation) {
				t.Fatalf("%v, want a unique violation", err)
			} else if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("%v, want %v", err, c.want)
			}
			if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
				t.Fatal(err)
			}
			if added := rows(sc) - before; added != 0 {
				t.Errorf("%d rows added, want none", added)
			}
			if _, err := sc.ExecContext(ctx, `INSERT INTO rt (id) VALUES (?)`, insert()...); err != nil {
				t.Fatal(err)
			}
			if added := rows(sc) - before; added != 1 {
				t.Errorf("%d rows after a statement of its own, want 1", added)
			}
		})
	}
}
