package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"strconv"

	"service/jsonjs"
)

// Erasure of an end user's data on request (a data subject's right to
// erasure). EraseUser removes, in one transaction, every row that holds
// the user's id or data in one app: the profile, the events, the
// assignments with their CUPED covariates, the per-user metric values,
// the form submissions, and the user's fields in webhook payloads. The
// campaigns' counters (impressions, conversions, the CUPED and metric
// sums, the hourly figures) stay as counted: they are sums over many
// people, and a finished experiment's result must not move.
//
// The rule under concurrent writes: an erasure erases everything
// committed before it commits, and whatever is committed after it is a
// new life of the id, as of a user never seen. Nothing is left half
// erased: on SQLite one writer at a time holds the file; on PostgreSQL
// the erasure locks the tables it erases from against writers (readers
// go on) until it commits (see eraser.begin).
//
// What the engines keep of deleted rows (free pages, WAL frames, dead
// row versions) is each engine's affair: the leader's ScrubErasures
// clears it (sqlite_erasure.go, postgres_erasure.go).

// Erasure counts what an erasure removed, by kind.
type Erasure struct {
	// Profile is 1 when the user had a stored profile.
	Profile         int64 `json:"profile"`
	Events          int64 `json:"events"`
	Assignments     int64 `json:"assignments"`
	MetricValues    int64 `json:"metricValues"`
	FormSubmissions int64 `json:"formSubmissions"`
	// WebhookDeliveries counts the deliveries whose payloads named the
	// user and were redacted.
	WebhookDeliveries int64 `json:"webhookDeliveries"`
	// Sessions counts the sessions linked to the user, whose rows went
	// with the user's.
	Sessions int64 `json:"sessions"`
}

// eraser is an engine's share of an erasure.
type eraser interface {
	// begin readies the erasure's transaction, before it deletes.
	begin(tx *Tx) error
	// events deletes the events of k, a user or a session (sessionRef),
	// and returns how many went.
	events(tx *Tx, k userRef) (int64, error)
	// eventsOf is the query of the events of k, a user or a session,
	// oldest first, with the columns scanStoredEvent reads.
	eventsOf(k userRef) (string, []any)
	// scrub clears what deleted rows leave behind in the engine's files.
	// It reports false when it could not yet (a reader still sees them).
	scrub(ctx context.Context) (bool, error)
}

// ObjectEndUser is the audit log's object type of an end user of an app
// (ObjectUser is a dashboard user). Its entries name the user by a salted
// digest of the id, never the id.
const ObjectEndUser = "end_user"

// ActionEndUserErased is the audit log's action of an erasure.
const ActionEndUserErased = "end_user.erased"

// EraseUser erases everything stored about one user of the app (see
// above) and returns what went. Erasing a user the app does not know, or
// one erased already, erases nothing and succeeds. The audit entry names
// the caller of ctx (see WithCaller).
func (db *DB) EraseUser(ctx context.Context, appID int64, userID string) (*Erasure, error) {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	var out *Erasure
	var err error
	// On PostgreSQL an erasure whose table locks crossed a group commit's
	// row locks may lose to it (a deadlock): run again, it goes after it.
	for i := 0; ; i++ {
		out = &Erasure{}
		err = db.withTx(ctx, func(tx *Tx) error { return tx.eraseUser(appID, userID, out) })
		if err == nil || i == maxConflictRetries || !db.lostToConcurrent(err) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (tx *Tx) eraseUser(appID int64, userID string, out *Erasure) error {
	// The user's journaled metric moves are applied first, so that none
	// brings a value back after the erasure. The applier's lock comes
	// before the tables' (eraser.begin), as a pass takes it before the
	// values' rows; the pass after them takes what commits added between.
	if err := tx.db.eng.lockMetricMoves(tx); err != nil {
		return err
	}
	if err := tx.db.eraser.begin(tx); err != nil {
		return err
	}
	if err := tx.applyMetricMoves(); err != nil {
		return err
	}
	var one int
	if err := tx.queryRow(`SELECT 1 FROM apps WHERE id = ?`, appID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return notFound("app")
	} else if err != nil {
		return err
	}
	sessions, err := linkedSessions(tx.conn, appID, userID)
	if err != nil {
		return err
	}
	out.Sessions = int64(len(sessions))
	count := func(dst *int64, q string, args ...any) error {
		res, err := tx.exec(q, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		*dst += n
		return err
	}

	// A session's events that carry a userId are that user's; its own are
	// those it logged without one.
	for _, k := range eventOwners(appID, userID, sessions) {
		n, err := tx.db.eraser.events(tx, k)
		if err != nil {
			return err
		}
		out.Events += n
	}
	for _, s := range sessions {
		if err := count(&out.FormSubmissions, `DELETE FROM form_submissions WHERE app_id = ? AND session_id = ?`, appID, s); err != nil {
			return err
		}
	}
	for _, key := range userKeys(userID, sessions) {
		k := key.stored
		// By key within each campaign (and metric) of the app: the
		// tables' primary keys lead with those.
		if err := count(&out.Assignments, `DELETE FROM assignments
			WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?) AND user_key = ?`, appID, k); err != nil {
			return err
		}
		if err := count(&out.MetricValues, `DELETE FROM metric_values
			WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?)
				AND metric_id IN (SELECT id FROM metrics WHERE app_id = ?) AND user_key = ?`, appID, appID, k); err != nil {
			return err
		}
	}
	if err := count(&out.FormSubmissions, `DELETE FROM form_submissions WHERE app_id = ? AND user_id = ?`, appID, userID); err != nil {
		return err
	}
	if err := count(&out.Profile, `DELETE FROM users WHERE app_id = ? AND user_id = ?`, appID, userID); err != nil {
		return err
	}
	// The links go last: a session of the id's next life links anew.
	if _, err := tx.exec(`DELETE FROM session_links WHERE app_id = ? AND user_id = ?`, appID, userID); err != nil {
		return err
	}
	if out.WebhookDeliveries, err = tx.redactDeliveries(appID, userID, sessions); err != nil {
		return err
	}
	return tx.recordErasure(appID, userID, out)
}

// eventOwners are the keys whose events are the user's: the userId's,
// then each linked session's (sessionRef).
func eventOwners(appID int64, userID string, sessions []string) []userRef {
	refs := make([]userRef, 0, 1+len(sessions))
	refs = append(refs, userRef{appID, userID})
	for _, s := range sessions {
		refs = append(refs, sessionRef(appID, s))
	}
	return refs
}

// ownerIs is the condition on an events row that it is a key's, by
// whether the key is a session's (userRef.session): its userId's, or the
// session's without one. Its one parameter is the key's userID.
var ownerIs = map[bool]string{
	false: `user_id = ?`,
	true:  `session_id = ? AND user_id IS NULL`,
}

// linkedSessions returns the sessions linked to the user (see links.go),
// whose rows belong to the user: an erasure takes them, an export lists
// them.
func linkedSessions(q conn, appID int64, userID string) ([]string, error) {
	rows, err := q.query(`SELECT session_id FROM session_links WHERE app_id = ? AND user_id = ? ORDER BY session_id`, appID, userID)
	if err != nil {
		return nil, err
	}
	list := []string{}
	err = eachRow(rows, func() error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		list = append(list, s)
		return nil
	})
	return list, err
}

// redactDeliveries takes the user's fields out of the payloads of the
// app's webhook deliveries that name the user (userId) or one of the
// user's sessions (sessionId), and marks them redacted. A form.submitted
// payload also loses the submission's data, erased with the submission.
// A delivery not sent yet goes out redacted.
func (tx *Tx) redactDeliveries(appID int64, userID string, sessions []string) (int64, error) {
	mine := func(v jsonjs.Value, ids ...string) bool {
		s, ok := v.(string)
		for _, id := range ids {
			if ok && s == id {
				return true
			}
		}
		return false
	}
	var n int64
	for _, id := range append([]string{userID}, sessions...) {
		// The payloads hold the id as JSON writes it; those that hold it
		// anywhere are read, and redacted when a user field is it.
		rows, err := tx.query(`SELECT d.id, d.payload FROM webhook_deliveries d
			WHERE d.webhook_id IN (SELECT id FROM webhooks WHERE app_id = ?) AND d.redacted_at IS NULL AND `+
			tx.db.eng.payloadHas(), appID, jsonjs.AppendQuote(nil, id))
		if err != nil {
			return n, err
		}
		type hit struct {
			id      int64
			payload []byte
		}
		var hits []hit
		for rows.Next() {
			var h hit
			if err := rows.Scan(&h.id, &h.payload); err != nil {
				rows.Close()
				return n, err
			}
			hits = append(hits, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return n, err
		}
		for _, h := range hits {
			v, err := jsonjs.Parse(h.payload)
			obj, ok := v.(*jsonjs.Object)
			if err != nil || !ok {
				continue
			}
			u, _ := obj.Get("userId")
			s, _ := obj.Get("sessionId")
			if !mine(u, userID) && !mine(s, sessions...) {
				continue
			}
			for _, k := range []string{"userId", "sessionId"} {
				if _, has := obj.Get(k); has {
					obj.Set(k, nil)
				}
			}
			if _, has := obj.Get("data"); has {
				obj.Set("data", jsonjs.NewObject())
			}
			b, err := jsonjs.Stringify(obj)
			if err != nil {
				return n, err
			}
			if _, err := tx.exec(`UPDATE webhook_deliveries SET payload = ?, redacted_at = ? WHERE id = ?`, b, ms(tx.now), h.id); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// recordErasure writes what every erasure leaves: its audit entry, the
// count of erasures other processes watch, and the scrub the leader owes.
func (tx *Tx) recordErasure(appID int64, userID string, out *Erasure) error {
	salt := make([]byte, 32)
	_, _ = rand.Read(salt)
	var count int64
	// The salt is made by the first erasure and kept: every entry of the
	// instance digests ids under it, so one id has one digest.
	if err := tx.queryRow(`INSERT INTO erasure_state (id, salt, count) VALUES (1, ?, 1)
		ON CONFLICT (id) DO UPDATE SET count = erasure_state.count + 1 RETURNING salt, count`, salt).Scan(&salt, &count); err != nil {
		return err
	}
	if _, err := tx.exec(`INSERT INTO erasure_scrubs (requested_at) VALUES (?)`, ms(tx.now)); err != nil {
		return err
	}
	// Tells the other processes to look at the count (on PostgreSQL; on
	// SQLite they see the file change).
	tx.changed = true
	db := tx.db
	// Forgotten before the commit as well as after it: the group commit
	// that follows this transaction on the writer may run its operations
	// before the callbacks below have run, and must not skip the user's
	// row on the strength of what memory knew before the erasure.
	db.forgetUsers()
	tx.after = append(tx.after, func() {
		db.erasuresSeen.Store(count)
		db.forgetUsers()
	})
	return tx.audit(auditRecord{app: appID, action: ActionEndUserErased, objType: ObjectEndUser,
		objName: ErasureDigest(salt, appID, userID), after: out})
}

// ErasureDigest is how the audit log names an erased user: an HMAC-SHA256
// of the app and the id under the instance's erasure salt, so that the
// log, which read keys can list, does not give the id away, while an
// operator holding the database can still tell whether an id was erased.
func ErasureDigest(salt []byte, appID int64, userID string) string {
	m := hmac.New(sha256.New, salt)
	m.Write(strconv.AppendInt(nil, appID, 10))
	m.Write([]byte{0})
	m.Write([]byte(userID))
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// forgetUsers empties the user caches (see userCache): after an erasure
// no process may answer the user from what it remembered of them.
func (db *DB) forgetUsers() { db.userEpoch.Add(1) }

// noticeErasures empties the user caches when the database counts
// erasures this process has not seen: another process erased a user.
// Each engine calls it once it has seen another process commit. A failed
// read (a database not migrated yet) is left to the next call.
func (db *DB) noticeErasures(ctx context.Context) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT count FROM erasure_state WHERE id = 1`).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return
	}
	if db.erasuresSeen.Swap(n) != n {
		db.forgetUsers()
	}
}

// ScrubErasures has the engine clear what the erasures committed so far
// left behind in its files (old WAL frames on SQLite, dead row versions on
// PostgreSQL), and returns how many erasures it settled: the leader's job
// (scheduler.Scrub), so that no request waits for it. An erasure it could
// not settle yet (a reader's snapshot still sees the rows) waits for the
// next call.
func (db *DB) ScrubErasures(ctx context.Context) (int64, error) {
	var upto, n int64
	if err := db.read.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0), COUNT(*) FROM erasure_scrubs`).Scan(&upto, &n); err != nil || n == 0 {
		return 0, err
	}
	ok, err := db.eraser.scrub(ctx)
	if err != nil || !ok {
		return 0, err
	}
	err = db.withTx(ctx, func(tx *Tx) error {
		_, err := tx.exec(`DELETE FROM erasure_scrubs WHERE id <= ?`, upto)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
