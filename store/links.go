package store

import (
	"context"
	"database/sql"
	"errors"
)

// Identity: a visitor known by a sessionId who signs in as a userId is one
// person. Linking the session to the user (session_links) makes them so,
// per campaign of the app:
//
//   - the session is assigned and the user is not: the user takes a copy
//     of the session's assignment (variant, time, conversion, covariate),
//     counted as no new impression, and the session's per-user metric
//     values become the user's;
//   - both are assigned: the user's assignment stands; nothing moves, and
//     what each counted before the link stays counted once;
//   - neither, or only the user: nothing to do.
//
// From then on an event is counted once, for one assignment (see
// sessionConvert and countMetric): its userId's, or, when it has none or
// that user holds no assignment in the campaign, the person its sessionId
// belongs to: the linked user when that user is assigned in the campaign,
// else the session itself. A session linked to a user assigned in the
// campaign therefore never counts on its own row again. A request by the
// sessionId alone is answered from the session's row, which the link left
// in place: the same variant (in the first case, the user's), and no new
// impression.
//
// A request naming the user and the linked session applies the first case
// again in a campaign the session joined after the link (takeLinkedSession:
// a visitor who signed out, then in). Requests naming one id never look
// up the other, so that they cost no query more.
//
// A session links to one user, once: the primary key of session_links
// refuses a second, and a link is never rewritten, so every process may
// keep what it learnt of a session in memory (links). Only an erasure of
// the user deletes it, and every process then forgets what it kept (see
// forgetUsers).

// ELINKED is the code of an identify that names a session already linked
// to another user.
const ELINKED = "session_linked"

// Link outcomes, as linkSession finds them.
const (
	linkNew   = 1 // this transaction linked the pair
	linkSame  = 2 // the pair was linked already
	linkOther = 3 // the session is linked to another user
)

// linkedKey is the key of the links cache for a session and a user: the
// value is the outcome last found for that pair, linkSame or linkOther,
// both final.
func linkedKey(appID int64, sessionID, userID string) userKey {
	return userKey{appID, 'l', sessionID + "\x00" + userID}
}

// linkPair links the session and the user of a variant request that names
// both, before it is answered: once per pair and process, since the
// outcome never changes. A session linked to another user links nothing,
// and the request is answered as for the userId alone.
func (db *DB) linkPair(ctx context.Context, appID int64, req *VariantRequest) error {
	if !db.mustLink(appID, req) {
		return nil
	}
	return db.batch.do(ctx, func(tx *Tx) error {
		_, err := tx.linkSession(appID, req.SessionID, req.UserID)
		return err
	})
}

// mustLink tells whether the request names a session and a user whose
// link this process has not seen yet.
func (db *DB) mustLink(appID int64, req *VariantRequest) bool {
	if req.UserID == "" || req.SessionID == "" {
		return false
	}
	_, ok := db.links.get(linkedKey(appID, req.SessionID, req.UserID))
	return !ok
}

// linkSession links the session to the user in the transaction, and
// returns what it found (linkNew, linkSame, linkOther). A new link gives
// the user the session's assignments where the user has none (see the top
// of this file). It never fails for linkOther: the caller decides, so a
// group commit is not rolled back for one refused pair.
func (tx *Tx) linkSession(appID int64, sessionID, userID string) (int64, error) {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	checkUserID(fe, "sessionId", sessionID)
	if err := fe.Err(); err != nil {
		return 0, err
	}
	k := linkedKey(appID, sessionID, userID)
	// The session's and the user's assignments queued earlier in this
	// batch go in first, so that the link finds them, and so do the
	// metric events queued, so that the link moves their values as it
	// would have had they come in an earlier commit. Other assignments
	// wait for the commit, where they go in together.
	if len(tx.metrics) > 0 || tx.queuedFor(storedKey('s', sessionID)) || tx.queuedFor(storedKey('u', userID)) {
		if err := tx.flushAssignments(); err != nil {
			return 0, err
		}
	}
	if err := tx.flushMetrics(); err != nil {
		return 0, err
	}
	inserted, campaigns, err := tx.db.eng.insertLink(tx, appID, sessionID, userID)
	if err != nil {
		return 0, err
	}
	if !inserted {
		var owner string
		if err := tx.queryRow(`SELECT user_id FROM session_links WHERE app_id = ? AND session_id = ?`, appID, sessionID).Scan(&owner); err != nil {
			return 0, err
		}
		outcome := int64(linkSame)
		if owner != userID {
			outcome = linkOther
		}
		tx.after = append(tx.after, func() { tx.db.links.put(k, outcome, tx.epoch) })
		return outcome, nil
	}
	// Recorded with the commit's other sightings, but never counted as
	// first seen there (isFresh): the session's events are the user's now.
	tx.touchUserLater(appID, userID)
	if tx.linked == nil {
		tx.linked = map[userRef]struct{}{}
	}
	tx.linked[userRef{appID, userID}] = struct{}{}
	for _, id := range campaigns {
		if _, err := tx.takeSession(appID, id, sessionID, userID); err != nil {
			return 0, err
		}
	}
	tx.after = append(tx.after, func() { tx.db.links.put(k, linkSame, tx.epoch) })
	return linkNew, nil
}

// insertLinkEach is engine.insertLink in two statements: the link, then,
// when it went in, the campaigns whose assignment the user takes.
func (tx *Tx) insertLinkEach(appID int64, sessionID, userID string) (bool, []int64, error) {
	r, err := tx.exec(`INSERT INTO session_links (app_id, session_id, user_id, linked_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (app_id, session_id) DO NOTHING`, appID, sessionID, userID, ms(tx.now))
	if err != nil {
		return false, nil, err
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return false, nil, err
	}
	campaigns, err := scanIDs(tx.query(`SELECT c.id FROM campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = ?
		WHERE c.app_id = ? AND NOT EXISTS (SELECT 1 FROM assignments AS b WHERE b.campaign_id = c.id AND b.user_key = ?)
		ORDER BY c.id`, storedKey('s', sessionID), appID, storedKey('u', userID)))
	return true, campaigns, err
}

// takeSession gives the user a copy of the session's assignment in the
// campaign (variant, time, conversion, covariate) when the session has one
// and the user none, moves the session's metric values of the campaign to
// the user, and returns the variant; 0 when nothing was copied. The copy
// counts no impression: the session's counted the person already.
func (tx *Tx) takeSession(appID, campaign int64, sessionID, userID string) (int64, error) {
	skey, ukey := storedKey('s', sessionID), storedKey('u', userID)
	// DO NOTHING: the user's own assignment, committed by another process
	// meanwhile, stands.
	var vid, at int64
	var converted sql.NullInt64
	err := tx.queryRow(`INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at, converted_at, covariate)
		SELECT campaign_id, ?, variant_id, assigned_at, converted_at, covariate FROM assignments WHERE campaign_id = ? AND user_key = ?
		ON CONFLICT (campaign_id, user_key) DO NOTHING RETURNING variant_id, assigned_at, converted_at`, ukey, campaign, skey).Scan(&vid, &at, &converted)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	// The values move with the journal's moves (metricmoves.go), which
	// may hold the session's moves not yet applied.
	tx.journal = appendRekeyEntry(tx.journal, campaign, appID, skey, ukey)
	ck := userKey{campaign, 'u', userID}
	tx.after = append(tx.after, func() {
		tx.db.assigned.putAt(ck, vid, at, tx.epoch)
		if converted.Valid {
			tx.db.converted.put(ck, vid, tx.epoch)
		}
	})
	return vid, nil
}

// errLinkedElsewhere is the refusal of an identify that names a session
// linked to another user.
func errLinkedElsewhere(sessionID string) error {
	return &Error{Code: ELINKED, Message: "the session is linked to another user",
		Details: map[string]any{"sessionId": sessionID}}
}

// SessionLink is a session linked to a user.
type SessionLink struct {
	SessionID string `json:"sessionId"`
	UserID    string `json:"userId"`
	LinkedAt  Time   `json:"linkedAt"`
}

// FindSessionLink returns the link of a session, ENOTFOUND when it has none.
func (db *DB) FindSessionLink(ctx context.Context, appID int64, sessionID string) (*SessionLink, error) {
	l := &SessionLink{SessionID: sessionID}
	var at int64
	err := db.readRow(ctx, `SELECT user_id, linked_at FROM session_links WHERE app_id = ? AND session_id = ?`, appID, sessionID).Scan(&l.UserID, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("session link")
	} else if err != nil {
		return nil, err
	}
	l.LinkedAt = NewTime(fromMS(at))
	return l, nil
}

// queuedFor tells whether this transaction queued a first assignment of
// the user key in any campaign.
func (tx *Tx) queuedFor(key string) bool {
	for _, byKey := range tx.assignIdx {
		if _, ok := byKey[key]; ok {
			return true
		}
	}
	return false
}
