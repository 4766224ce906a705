package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"service/internal/testwait"
)

// logManyEvents logs n goal events of users u-0 … u-(users-1) in batches.
func logManyEvents(tb testing.TB, db *DB, app int64, n, users int) {
	tb.Helper()
	ins := make([]*EventInput, 0, MaxEventBatch)
	for i := range n {
		ins = append(ins, &EventInput{EventID: "buy", UserID: fmt.Sprintf("u-%d", i%users)})
		if len(ins) == MaxEventBatch || i == n-1 {
			if _, err := db.LogEvents(context.Background(), app, ins); err != nil {
				tb.Fatal(err)
			}
			ins = ins[:0]
		}
	}
}

// TestTablesWithoutStatistics: on PostgreSQL a table that filled before
// any ANALYZE is named once it holds the rows asked for, and no longer
// once analyzed, after which the covariate count probes the
// index of events by user. SQLite names none.
func TestTablesWithoutStatistics(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	if db.pgEngine() != nil {
		// A server's autovacuum must not gather them first.
		if _, err := db.write.ExecContext(ctx, `ALTER TABLE events SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	logManyEvents(t, db, app, 1200, 400)

	if db.pgEngine() == nil {
		names, err := db.TablesWithoutStatistics(ctx, 1)
		if err != nil || len(names) != 0 {
			t.Fatalf("SQLite: %q, %v; want none", names, err)
		}
		if err := db.AnalyzeTable(ctx, "events"); err != nil {
			t.Fatal(err)
		}
		return
	}
	// PostgreSQL counts rows as its backends report them, up to 10 s
	// after their commits unless asked sooner; the writer wrote them.
	if _, err := db.write.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	var names []string
	testwait.Until(t, 30*time.Second, "events to be named", func() bool {
		var err error
		names, err = db.TablesWithoutStatistics(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(names, "events")
	})
	if slices.Contains(names, "users") {
		t.Errorf("named %q: users holds 400 rows, fewer than asked", names)
	}
	if err := db.AnalyzeTable(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	names, err := db.TablesWithoutStatistics(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, "events") {
		t.Errorf("events named after ANALYZE: %q", names)
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The users' own events, then their linked sessions' (see covariateEvents).
	plan := queryPlan(t, conn, `EXPLAIN `+db.eng.covariateEvents('u'), `["u-1","u-2"]`, app, "buy", 0, `["u-1","u-2"]`, app, "buy", 0)
	if !strings.Contains(plan, "events_app_user") {
		t.Errorf("covariate plan %q: want the index of events by user", plan)
	}
}
