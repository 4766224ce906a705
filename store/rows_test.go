package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestMultiRowStatements checks the multi-row INSERTs the group commit
// writes with: each takes sixty-four rows a statement, none binds more
// than maxParams parameters, and chunks cover any number of rows exactly
// once, in order, with statements of the length they claim.
func TestMultiRowStatements(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       multiRow
		perRow  int
		maxRows int
	}{
		{"events", eventsInsert, 7, 64},
		{"users", usersInsert, 4, 64},
		{"assignments", assignInsert, 4, 64},
		{"assignments returning", assignReturning, 4, 64},
		{"event_users", indexValues, 6, 64},
		{"event_users from events", indexFromEvents, 1, 64},
		{"metric conversions", metricConversionsInsert, 4, 64},
		{"metric values", metricValuesAdd, 5, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.m.max != tc.maxRows {
				t.Errorf("%d rows a statement, want %d", tc.m.max, tc.maxRows)
			}
			for n, q := range tc.m.texts {
				if got := strings.Count(q, "?"); got != n*tc.perRow || got > maxParams {
					t.Errorf("the %d-row statement has %d parameters, want %d and at most %d", n, got, n*tc.perRow, maxParams)
				}
			}
			for _, rows := range []int{0, 1, 15, 16, 17, 64, 100, 1000} {
				next := 0
				err := tc.m.chunks(rows, func(i, n int, q string) error {
					if i != next || n < 1 || n > tc.m.max || q != tc.m.texts[n] {
						t.Fatalf("%d rows: chunk [%d, %d) after %d, statement for %d rows: %t", rows, i, i+n, next, n, q == tc.m.texts[n])
					}
					next = i + n
					return nil
				})
				if err != nil || next != rows {
					t.Errorf("%d rows: chunks covered %d, err %v", rows, next, err)
				}
			}
		})
	}
}

// TestTxBuffersStartEmpty fails a transaction after it queued user
// sightings, an event with a logId and first assignments: the next
// transaction, which takes over its buffers, must see none of them queued,
// write what it queues itself, and nothing of the failed one.
func TestTxBuffersStartEmpty(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	c := mustCreateCampaign(t, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})
	ref := assignRef{c.ID, storedKey('u', "u1")}
	ghost := assignRef{c.ID, storedKey('u', "ghost")}
	queue := func(tx *Tx) (*EventResult, error) {
		res := &EventResult{}
		if err := tx.logEvent(app, &EventInput{EventID: "view", UserID: "u1", LogID: "log-1"}, nil, nil, res); err != nil {
			return nil, err
		}
		if tx.pendingAssignment(ref) != nil || tx.pendingAssignment(ghost) != nil {
			t.Fatal("an assignment of a rolled-back transaction is still queued")
		}
		tx.assignLater(ref, c.Variants[0].ID, &assignOutcome{}, nil, 0, "")
		return res, nil
	}
	boom := errors.New("boom")
	err := db.withTx(ctx, func(tx *Tx) error {
		if _, err := queue(tx); err != nil {
			return err
		}
		// Rows only the failed transaction asked for.
		tx.touchUserLater(app, "ghost")
		tx.assignLater(ghost, c.Variants[0].ID, &assignOutcome{}, nil, 0, "")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("first transaction: %v, want boom", err)
	}
	var res *EventResult
	if err := db.withTx(ctx, func(tx *Tx) (err error) {
		res, err = queue(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if res.Duplicate || res.ID == 0 {
		t.Fatalf("event answered %+v, want a new row", res)
	}
	for _, tc := range []struct {
		query string
		args  []any
		want  int64
	}{
		{`SELECT COUNT(*) FROM events WHERE log_id = 'log-1'`, nil, 1},
		{`SELECT COUNT(*) FROM users WHERE user_id = ?`, []any{"u1"}, 1},
		{`SELECT COUNT(*) FROM users WHERE user_id = ?`, []any{"ghost"}, 0},
		{`SELECT COUNT(*) FROM assignments WHERE campaign_id = ? AND user_key = ?`, []any{c.ID, ref.key}, 1},
		{`SELECT COUNT(*) FROM assignments WHERE campaign_id = ? AND user_key = ?`, []any{c.ID, ghost.key}, 0},
	} {
		if got := countRows(t, db, tc.query, tc.args...); got != tc.want {
			t.Errorf("%s %v: %d, want %d", tc.query, tc.args, got, tc.want)
		}
	}
}

// TestMultiRowFailureWritesNothing fails one event of a request in the
// middle of its multi-row INSERT, which stops the statement with the rows
// before it written (OR FAIL): the request must fail whole, nothing of it
// may stay, and the writer must go on with the next request.
func TestMultiRowFailureWritesNothing(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	refuse := []string{`CREATE TRIGGER refuse_bad BEFORE INSERT ON events WHEN new.event_id = 'bad'
		BEGIN SELECT RAISE(FAIL, 'bad event'); END`}
	if db.pgEngine() != nil {
		refuse = []string{`CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS
			'BEGIN RAISE EXCEPTION ''bad event''; END'`,
			`CREATE TRIGGER refuse_bad BEFORE INSERT ON events FOR EACH ROW WHEN (new.event_id = 'bad') EXECUTE FUNCTION refuse_bad()`}
	}
	for _, q := range refuse {
		if _, err := db.write.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var ins []*EventInput
	for i := range 40 {
		in := &EventInput{EventID: "ok", UserID: "u-1"}
		if i == 25 {
			in.EventID = "bad"
		}
		ins = append(ins, in)
	}
	if _, err := db.LogEvents(ctx, app, ins); err == nil || !strings.Contains(err.Error(), "bad event") {
		t.Fatalf("LogEvents with a refused event: %v, want the trigger's error", err)
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM events`); n != 0 {
		t.Fatalf("%d events stored by a failed request, want 0", n)
	}
	res, err := db.LogEvents(ctx, app, ins[:25])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if got := mustScalar(t, db, `SELECT COUNT(*) FROM events WHERE id = ? AND event_id = 'ok'`, r.ID); got != 1 {
			t.Fatalf("answered id %d names no stored event", r.ID)
		}
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM events`); n != 25 {
		t.Fatalf("%d events stored, want 25", n)
	}
}

// TestRowStatementsOfADiscardedConnection discards the writer's connection
// after the group commit prepared its multi-row statements on it, as
// database/sql does when a statement on it was interrupted by a cancelled
// context: those statements died with their connection, so neither the
// next write nor Close may finalize them, and the next write prepares its
// own on the new connection.
// TestRowStatementsPreparedAtOpen: an opened store holds every multi-row
// statement of the group commit prepared on the writer's connection, where
// the commits run them, so that no commit parses one.
func TestRowStatementsPreparedAtOpen(t *testing.T) {
	sqliteOnly(t)
	db := mustOpenDB(t)
	db.rows.mu.Lock()
	defer db.rows.mu.Unlock()
	for _, m := range multiRows {
		for n, q := range m.texts {
			if db.rows.m[q] == nil {
				t.Errorf("the %d-row statement %.60s… is not prepared", n, q)
			}
		}
	}
}

func TestRowStatementsOfADiscardedConnection(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	logTwo := func(tag string) {
		t.Helper()
		res, err := db.LogEvents(ctx, app, []*EventInput{{EventID: "view", UserID: tag + "1"}, {EventID: "view", UserID: tag + "2"}})
		if err != nil || len(res) != 2 {
			t.Fatalf("logging %s: %v", tag, err)
		}
	}
	discard := func() {
		t.Helper()
		c, err := db.write.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A connection whose Raw function answers ErrBadConn is closed
		// by database/sql, not put back.
		if err := c.Raw(func(any) error { return driver.ErrBadConn }); !errors.Is(err, driver.ErrBadConn) {
			t.Fatalf("Raw: %v", err)
		}
		c.Close()
	}
	logTwo("a")
	discard()
	logTwo("b")
	discard()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := mustOpenDBAt(t, db.path)
	if n := countRows(t, db2, "SELECT COUNT(*) FROM events"); n != 4 {
		t.Fatalf("%d events stored, want 4", n)
	}
}

// TestAssignmentsOfKeysPlan checks that a commit reads the assignments of
// its users (round robin's stored answers, metric events' variants) by a
// search of the primary key for each key of its list, never by walking
// the campaign's assignments: a walk costs every commit the campaign's
// size.
func TestAssignmentsOfKeysPlan(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	c := metricCampaign(t, db, app, `{}`)
	conn, explain := planAtScale(t, db, "assignments", `INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at)
		SELECT ?, 'u:' || i, ?, 0 FROM n`, c.ID, c.Variants[0].ID)
	want := "SCAN u VIRTUAL TABLE INDEX 1:; SEARCH a USING PRIMARY KEY (campaign_id=? AND user_key=?)"
	if db.pgEngine() != nil {
		want = fmt.Sprintf("Index Cond: ((campaign_id = '%d'::bigint) AND (user_key = jsonb_array_elements_text.value))", c.ID)
	}
	if got := queryPlan(t, conn, explain+db.eng.assignmentsOfKeys(), `["u:1","u:2"]`, c.ID); !strings.Contains(got, want) {
		t.Errorf("plan %q: want %q", got, want)
	}
}

// planAtScale fills table with 20,000 rows (fill selects them from n(i),
// i = 1…20,000) and returns a connection and the EXPLAIN for the plans
// the service would get: SQLite's without statistics, as the service runs
// it, and PostgreSQL's with those its autovacuum would soon gather.
func planAtScale(t *testing.T, db *DB, table, fill string, args ...any) (*sql.Conn, string) {
	t.Helper()
	fillAtScale(t, db, 20000, table, fill, args...)
	explain := `EXPLAIN QUERY PLAN `
	if db.pgEngine() != nil {
		explain = `EXPLAIN `
	}
	conn, err := db.write.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, explain
}

// fillAtScale fills table with rows rows (fill selects them from n(i),
// i = 1…rows) and, on PostgreSQL, gathers the statistics its autovacuum
// would soon after: its plans follow them. SQLite runs without (see
// engine.go).
func fillAtScale(tb testing.TB, db *DB, rows int, table, fill string, args ...any) {
	tb.Helper()
	if _, err := db.write.Exec(fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) `, rows)+fill, args...); err != nil {
		tb.Fatal(err)
	}
	if db.pgEngine() != nil {
		if _, err := db.write.Exec(`ANALYZE ` + table); err != nil {
			tb.Fatal(err)
		}
	}
}
