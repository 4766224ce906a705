package store

import (
	"context"
	"database/sql"
	"errors"

	"service/assign"
)

// VariantRequest is the SDK's question: which variant does this user see?
type VariantRequest struct {
	UserID     string         `json:"userId"`
	SessionID  string         `json:"sessionId"`
	Attributes map[string]any `json:"attributes"`
}

// key returns the user key the contract assigns by: userId when given,
// else sessionId.
func (r *VariantRequest) key() (kind byte, user string) {
	if r.UserID != "" {
		return 'u', r.UserID
	}
	return 's', r.SessionID
}

// Reasons a user is not assigned.
const (
	ReasonNotActive     = "campaign_not_active"
	ReasonNotInAudience = "not_in_audience"
)

// Variant answers the variant request for one campaign, appending the JSON
// answer to dst. A returning user is answered from memory: no write and no
// read of the campaign. A new user is assigned, and the assignment and its
// impression are committed (group commit) before the answer is returned.
func (db *DB) Variant(ctx context.Context, appID, campaignID int64, req *VariantRequest, dst []byte) ([]byte, error) {
	lc, err := db.liveCampaign(ctx, appID, campaignID)
	if err != nil {
		return dst, err
	}
	if err := db.noteAttributes(ctx, appID, req); err != nil {
		return dst, err
	}
	b, _, err := db.variantFor(ctx, lc, req, dst)
	return b, err
}

// Variants answers the variant request for every active campaign of the app
// at once, listing the campaigns the user is assigned in.
func (db *DB) Variants(ctx context.Context, appID int64, req *VariantRequest, dst []byte) ([]byte, error) {
	list, err := db.activeCampaigns(ctx, appID)
	if err != nil {
		return dst, err
	}
	if err := db.noteAttributes(ctx, appID, req); err != nil {
		return dst, err
	}
	dst = append(dst, `{"data":[`...)
	first := true
	for _, lc := range list {
		mark := len(dst)
		if !first {
			dst = append(dst, ',')
		}
		var assigned bool
		dst, assigned, err = db.variantFor(ctx, lc, req, dst)
		if err != nil {
			return dst, err
		}
		if !assigned {
			dst = dst[:mark]
			continue
		}
		first = false
	}
	return append(dst, "]}"...), nil
}

// noteAttributes merges request attributes into the profile before any
// audience is checked, as the contract orders.
func (db *DB) noteAttributes(ctx context.Context, appID int64, req *VariantRequest) error {
	if req.UserID == "" || len(req.Attributes) == 0 {
		return nil
	}
	return db.batch.do(ctx, func(tx *Tx) error { return tx.seeUser(appID, req.UserID, req.Attributes) })
}

func appendNotAssigned(dst []byte, campaignID int64, reason string) []byte {
	dst = append(dst, `{"campaignId":`...)
	dst = appendInt(dst, campaignID)
	dst = append(dst, `,"variantId":null,"reason":"`...)
	dst = append(dst, reason...)
	return append(dst, `"}`...)
}

func appendAssigned(dst []byte, v *liveVariant, recorded bool) []byte {
	dst = append(dst, v.answer...)
	if recorded {
		return append(dst, "true}"...)
	}
	return append(dst, "false}"...)
}

// variantFor answers one campaign for one user.
func (db *DB) variantFor(ctx context.Context, lc *liveCampaign, req *VariantRequest, dst []byte) ([]byte, bool, error) {
	now := ms(db.Now())
	if !lc.running(now) {
		db.seeUserOnce(ctx, lc.appID, req)
		return appendNotAssigned(dst, lc.id, ReasonNotActive), false, nil
	}
	kind, user := req.key()
	ck := userKey{lc.id, kind, user}
	if vid, ok := db.assigned.get(ck); ok {
		if i := lc.variantIndex(vid); i >= 0 {
			return appendAssigned(dst, &lc.variants[i], false), true, nil
		}
	}
	vid, err := db.findAssignment(ctx, lc.id, kind, user)
	if err != nil {
		return dst, false, err
	}
	if vid != 0 {
		db.assigned.put(ck, vid)
		if i := lc.variantIndex(vid); i >= 0 {
			return appendAssigned(dst, &lc.variants[i], false), true, nil
		}
	}
	// Audiences are made of user profiles: a visitor known only by a
	// session has none, so a targeted campaign does not assign them.
	if lc.audienceID != 0 && req.UserID == "" {
		return appendNotAssigned(dst, lc.id, ReasonNotInAudience), false, nil
	}
	var out assignOutcome
	err = db.batch.do(ctx, func(tx *Tx) error { return tx.assign(lc, req, kind, user, &out) })
	if err != nil {
		return dst, false, err
	}
	if req.UserID != "" {
		db.known.put(userKey{lc.appID, 'u', req.UserID}, 1)
	}
	switch {
	case !out.running:
		return appendNotAssigned(dst, lc.id, ReasonNotActive), false, nil
	case out.notInAudience:
		return appendNotAssigned(dst, lc.id, ReasonNotInAudience), false, nil
	}
	db.assigned.put(ck, out.variantID)
	i := lc.variantIndex(out.variantID)
	if i < 0 {
		return dst, false, errors.New("store: assigned variant missing from campaign")
	}
	return appendAssigned(dst, &lc.variants[i], out.recorded), true, nil
}

func storedKey(kind byte, user string) string {
	return string(kind) + ":" + user
}

func (db *DB) findAssignment(ctx context.Context, campaignID int64, kind byte, user string) (int64, error) {
	var vid int64
	err := db.read.QueryRowContext(ctx, `SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`,
		campaignID, storedKey(kind, user)).Scan(&vid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return vid, err
}

type assignOutcome struct {
	running       bool
	notInAudience bool
	variantID     int64
	recorded      bool
}

// assign stores a user's first assignment and its impression. It rereads
// the campaign's status inside the write transaction, so a campaign paused
// a moment ago assigns nobody, whatever the cache still says.
func (tx *Tx) assign(lc *liveCampaign, req *VariantRequest, kind byte, user string, out *assignOutcome) error {
	*out = assignOutcome{}
	if req.UserID != "" {
		if err := tx.seeUser(lc.appID, req.UserID, nil); err != nil {
			return err
		}
	}
	var status string
	var start, end sql.NullInt64
	var rr int64
	if err := tx.QueryRow(`SELECT status, start_at, end_at, rr_next FROM campaigns WHERE id = ?`, lc.id).Scan(&status, &start, &end, &rr); err != nil {
		return err
	}
	now := ms(tx.now)
	if status != CampaignActive || (start.Valid && now < start.Int64) || (end.Valid && now >= end.Int64) {
		return nil
	}
	out.running = true
	key := storedKey(kind, user)
	var vid int64
	err := tx.QueryRow(`SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`, lc.id, key).Scan(&vid)
	if err == nil {
		out.variantID = vid // a concurrent first request won
		return nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	// The audience is checked here, after the user was recorded and their
	// attributes merged, and in the same transaction as the assignment.
	if lc.audienceID != 0 {
		in, err := tx.userInAudience(lc.appID, lc.audienceID, req.UserID)
		if err != nil {
			return err
		}
		if !in {
			out.notInAudience = true
			return nil
		}
	}
	var idx int
	if lc.roundRobin {
		idx = int(rr % int64(len(lc.variants)))
		if _, err := tx.Exec(`UPDATE campaigns SET rr_next = rr_next + 1 WHERE id = ?`, lc.id); err != nil {
			return err
		}
	} else {
		idx = assign.Pick(assign.Bucket(lc.id, user), lc.weights)
		if idx < 0 {
			idx = 0
		}
	}
	vid = lc.variants[idx].id
	if _, err := tx.Exec(`INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES (?, ?, ?, ?)`, lc.id, key, vid, now); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE campaign_variants SET impressions = impressions + 1 WHERE id = ?`, vid); err != nil {
		return err
	}
	out.variantID, out.recorded = vid, true
	return nil
}

// seeUserOnce makes a userId known without a write for users already seen.
// It is best effort: a failure here must not fail the variant answer.
func (db *DB) seeUserOnce(ctx context.Context, appID int64, req *VariantRequest) {
	if req.UserID == "" {
		return
	}
	k := userKey{appID, 'u', req.UserID}
	if _, ok := db.known.get(k); ok {
		return
	}
	if err := db.batch.do(ctx, func(tx *Tx) error { return tx.seeUser(appID, req.UserID, nil) }); err == nil {
		db.known.put(k, 1)
	}
}

// seeUser records a user and merges attributes into the profile.
func (tx *Tx) seeUser(appID int64, userID string, attrs map[string]any) error {
	return tx.touchUser(appID, userID, attrs)
}
