package store

import (
	"context"
	"database/sql"
	"time"
)

// Observer receives what the store's hot paths did, for metrics. The store
// calls it synchronously, so its functions must be cheap and must not call
// back into the store. Every field may be nil.
type Observer struct {
	// Batch is called after each group commit with the number of
	// operations it carried and how long the transaction took.
	Batch func(size int, took time.Duration)
	// Written is called after every committed write transaction with the
	// events and impressions it stored.
	Written func(events, impressions int)
}

// observeBatch starts timing a group commit; the returned func ends it.
// batcher.run defers it, so the one call there is all batch.go knows.
func (db *DB) observeBatch(size int) func() {
	o := db.Observe
	if o == nil || o.Batch == nil {
		return func() {}
	}
	start := time.Now()
	return func() { o.Batch(size, time.Since(start)) }
}

// written reads what tx stored, before commit clears the counters.
func (tx *Tx) written() (events, impressions int) {
	if tx.db.Observe == nil || tx.db.Observe.Written == nil {
		return 0, 0
	}
	for _, d := range tx.counts {
		impressions += int(d.impressions)
	}
	return len(tx.events), impressions
}

// observeWritten reports a committed transaction's events and impressions.
func (db *DB) observeWritten(events, impressions int) {
	if events+impressions == 0 || db.Observe == nil || db.Observe.Written == nil {
		return
	}
	db.Observe.Written(events, impressions)
}

// DeliveryBacklog reports the deliveries still to be sent (pending, retries
// included) and when the oldest of them was queued; oldest is zero when
// there are none. It reads the outbox, so a scrape sees the truth even
// after a restart.
func (db *DB) DeliveryBacklog(ctx context.Context) (pending int64, oldest time.Time, err error) {
	var first sql.NullInt64
	err = db.read.QueryRowContext(ctx,
		`SELECT count(*), min(created_at) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&pending, &first)
	if err != nil {
		return 0, time.Time{}, err
	}
	if first.Valid {
		oldest = fromMS(first.Int64)
	}
	return pending, oldest, nil
}

// FileSizes reports the sizes in bytes of the database file and of its
// write-ahead log (0 when there is none, e.g. right after a checkpoint
// that truncated it). On PostgreSQL it reports the database's size, and no
// log: the server's WAL is shared by all its databases.
func (db *DB) FileSizes() (main, wal int64, err error) {
	return db.eng.fileSizes()
}

// TablesWithoutStatistics returns the service's tables that PostgreSQL
// holds no column statistics for and that hold at least minRows rows, by
// its count of live rows (see store/postgres/stats.go). SQLite's queries
// name the indexes they use: there it returns none.
func (db *DB) TablesWithoutStatistics(ctx context.Context, minRows int64) ([]string, error) {
	return db.eng.tablesWithoutStatistics(ctx, minRows)
}

// AnalyzeTable has PostgreSQL gather the statistics of a table that
// TablesWithoutStatistics named. A table the database role does not own
// is skipped with a warning, not an error: TablesWithoutStatistics then
// names it again.
func (db *DB) AnalyzeTable(ctx context.Context, name string) error {
	return db.eng.analyzeTable(ctx, name)
}
