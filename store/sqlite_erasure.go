package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"service/store/sqlite"
)

// sqliteEraser is the SQLite store's share of an erasure (erasure.go).
//
// Deleted content must not stay readable in the file: the writer zeroes
// what it deletes (secure_delete, see sqlite.Pools), in the pages the
// transaction writes to the WAL; the scrub's TRUNCATE checkpoint then
// copies them over the main file and empties the WAL, whose older frames
// still held the rows.
type sqliteEraser struct{ db *DB }

// begin has nothing to do: one writer at a time holds the whole file, so
// no other write can come between the erasure's statements.
func (e sqliteEraser) begin(tx *Tx) error { return nil }

// events deletes the user's (or session's) events by id: the events
// table has no index by user or session here, event_users is that index
// (sqlite_eventindex.go). The ids are event_users' (runs included), which
// may hold events of a generation being indexed, and the events above
// upto, which it may not hold yet, read by rowid. The key's rows of
// event_users go first, so that the events' delete trigger has nothing
// left to mend; the indexer's memory forgets the key's events at the
// commit (Tx.gone).
func (e sqliteEraser) events(tx *Tx, k userRef) (int64, error) {
	ids, err := scanIDs(tx.query(`SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
			WHERE e.app_id = ? AND e.user_id = ?
		UNION SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND `+ownerIs[k.session()],
		k.appID, k.userID, k.app(), k.userID))
	if err != nil {
		return 0, err
	}
	tx.erased = append(tx.erased, k)
	if _, err := tx.exec(`DELETE FROM event_users WHERE app_id = ? AND user_id = ?`, k.appID, k.userID); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	// The owner's condition keeps an id the index got wrong from taking
	// another user's event.
	res, err := tx.exec(`DELETE FROM events WHERE id IN (`+tx.db.eng.jsonIDs()+`) AND app_id = ? AND `+ownerIs[k.session()], string(list), k.app(), k.userID)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// scrub copies every WAL frame into the file and empties the WAL: the
// frames from before the erasure still hold the rows it zeroed. A reader
// in the middle of a read (Litestream holds one) keeps the WAL from being
// emptied; the next pass tries again. It runs on a connection of its own
// that waits at most scrubBusy for them, so that neither the checkpointer
// nor the leader's other jobs wait behind it.
func (e sqliteEraser) scrub(ctx context.Context) (bool, error) {
	c, err := sql.Open("sqlite", sqlite.DSN(e.db.path, fmt.Sprintf("busy_timeout(%d)", scrubBusy.Milliseconds())))
	if err != nil {
		return false, err
	}
	defer c.Close()
	var busy, log, done int64
	if err := c.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &log, &done); err != nil {
		if isBusy(err) {
			return false, nil
		}
		return false, err
	}
	return busy == 0, nil
}

// scrubBusy bounds the scrub's wait for readers and writers.
const scrubBusy = time.Second

// eventsOf reads the user's (or session's) events as a reader does (see
// FindEvents): event_users up to upto, and the events above it by rowid.
// The outer scan goes by those ids alone, in id order.
func (e sqliteEraser) eventsOf(k userRef) (string, []any) {
	return `SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM events NOT INDEXED
		WHERE app_id = ? AND ` + ownerIs[k.session()] + ` AND id IN (
			SELECT coalesce(j.value->>1, e.id) FROM event_users AS e LEFT JOIN json_each(e.run) AS j
				WHERE e.app_id = ? AND e.user_id = ? AND e.id <= (SELECT upto FROM event_users_upto)
			UNION ALL SELECT id FROM events NOT INDEXED WHERE id > (SELECT upto FROM event_users_upto) AND app_id = ? AND ` + ownerIs[k.session()] + `)
		ORDER BY id`, []any{k.app(), k.userID, k.appID, k.userID, k.app(), k.userID}
}
