package store

import (
	"context"
	"time"
)

// pgEraser is the PostgreSQL store's share of an erasure (erasure.go).
type pgEraser struct{ db *DB }

// erasedTables are the tables an erasure deletes from or rewrites rows of.
const erasedTables = `users, session_links, assignments, metric_values, events, metric_moves, form_submissions, webhook_deliveries`

// begin locks the tables the erasure writes against every other writer
// until it commits: the group commits of other processes run at the same
// time as this transaction, and without the lock one of them could commit
// an event or an assignment of the user between two of its deletes, which
// would leave, say, an event whose assignment is gone. SHARE ROW EXCLUSIVE
// lets readers (exports, the dashboard) go on, and conflicts with itself,
// so two erasures go one after the other. The lock is taken first, before
// any row is read; a group commit that meets it waits for the erasure,
// and its writes are then of a new life of the id.
func (e pgEraser) begin(tx *Tx) error {
	_, err := tx.exec(`LOCK TABLE ` + erasedTables + ` IN SHARE ROW EXCLUSIVE MODE`)
	return err
}

// events deletes through events_app_user, the index of events by user,
// or events_app_session.
func (e pgEraser) events(tx *Tx, k userRef) (int64, error) {
	res, err := tx.exec(`DELETE FROM events WHERE app_id = ? AND `+ownerIs[k.session()], k.app(), k.userID)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// scrub vacuums the erased tables: a deleted row stays in the table's file
// as a dead version until VACUUM removes it, and its index entries with
// it, so that its space is reused. VACUUM can only remove what no
// transaction may still see, so the scrub first waits, as compactSecrets
// does, for every snapshot of the database older than now to end; when one outlasts the
// wait, it vacuums all the same (whatever it can) but reports false, so
// that the next pass vacuums again. ANALYZE with it refreshes the column
// statistics, whose samples of common values may hold the erased ids.
//
// VACUUM marks the space free rather than zeroing it: the bytes stay in
// the file until new rows overwrite them (docs/operations.md says what
// that means, and how VACUUM FULL rewrites a table).
func (e pgEraser) scrub(ctx context.Context) (bool, error) {
	settled := e.db.awaitOlderSnapshots(ctx, scrubWait, thisDatabase)
	if _, err := e.db.read.ExecContext(ctx, `VACUUM (ANALYZE) `+erasedTables); err != nil {
		return false, err
	}
	return settled, nil
}

// scrubWait bounds the scrub's wait for older snapshots to end.
const scrubWait = 5 * time.Second

// eventsOf reads through events_app_user or events_app_session, sorted
// by id on the server.
func (e pgEraser) eventsOf(k userRef) (string, []any) {
	return `SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events
		WHERE app_id = ? AND ` + ownerIs[k.session()] + ` ORDER BY id`, []any{k.app(), k.userID}
}
