package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// DataVersion asks PRAGMA data_version on db's connection (the writer's
// one): it changes exactly when another connection has committed since
// the last time that connection asked.
func DataVersion(ctx context.Context, db *sql.DB) (int64, error) {
	var v int64
	err := db.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v)
	return v, err
}

// WatchDataVersion hands saw db's data_version every interval until ctx
// ends. A failed read (closed, or busy) is left to the next tick.
func WatchDataVersion(ctx context.Context, db *sql.DB, interval time.Duration, saw func(int64)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, err := DataVersion(ctx, db)
		if err != nil {
			continue
		}
		saw(v)
	}
}
