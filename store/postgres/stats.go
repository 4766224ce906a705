package postgres

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL plans each query from its statistics of the tables, which
// autovacuum gathers at its first pass over a table that changed, up to a
// minute (autovacuum_naptime) later, and later still on a busy server. A
// table that filled from empty before then has none: a new database under
// traffic, or one that pg_restore loaded (a dump holds no statistics). Its
// indexes still count the rows they held when they were built, none, so
// the planner prices every index whose first columns a query names as
// equally cheap. It then counted a group commit's CUPED covariates through
// the index of events by name and time, reading every goal event of the
// app for each user, instead of the index of events by user: 0.3–1.1 s a
// commit at 80,000 goal events, and more as they grow, during which no
// write of any request went in.
//
// The leader therefore has PostgreSQL analyze such tables as soon as they
// hold a few rows (scheduler.Statistics), and autovacuum keeps the
// statistics current from then on. The planner handles statistics that
// are old far better than none: for a bound outside what they saw, it
// reads the index's real ends.

// TablesWithoutStatistics returns the tables of db's schema that
// PostgreSQL holds no column statistics for and that hold at least
// minRows rows, by its count of live rows.
func TablesWithoutStatistics(ctx context.Context, db *sql.DB, minRows int64) ([]string, error) {
	// pg_stats rather than the table's last_analyze, which a crash or a
	// statistics reset forgets while the statistics stay; and rather than
	// reltuples, which an autovacuum that only vacuumed sets without any.
	rows, err := db.QueryContext(ctx, `SELECT t.relname FROM pg_stat_user_tables t
		WHERE t.schemaname = current_schema() AND t.n_live_tup >= ?
			AND NOT EXISTS (SELECT 1 FROM pg_stats s WHERE s.schemaname = t.schemaname AND s.tablename = t.relname)
		ORDER BY t.relname`, minRows)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

// Analyze has PostgreSQL gather the statistics of the table name.
func Analyze(ctx context.Context, db *sql.DB, name string) error {
	_, err := db.ExecContext(ctx, `ANALYZE `+pgx.Identifier{name}.Sanitize())
	return err
}
