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

	// merged records that Attributes are in the profile, so one request
	// never merges them twice.
	merged bool
	// expect, for an exposure, is the variant the client showed: a new
	// user is assigned only if the server picks that variant too.
	expect int64
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
	ReasonNotActive      = "campaign_not_active"
	ReasonNotInAudience  = "not_in_audience"
	ReasonNotInNamespace = "not_in_namespace"
)

// Variant answers the variant request for one campaign, appending the JSON
// answer to dst. A returning user is answered from memory: no write and no
// read of the campaign. A new user is assigned, and the assignment and its
// impression are committed (group commit) before the answer is returned.
func (db *DB) Variant(ctx context.Context, appID, campaignID int64, req *VariantRequest, dst []byte) ([]byte, error) {
	return db.answerOne(ctx, appID, campaignID, req, dst, appendVariant)
}

// answerOne evaluates one campaign for one user and appends the answer
// as enc writes it: the variant route's and OpenFeature's share
// everything but the encoding.
func (db *DB) answerOne(ctx context.Context, appID, campaignID int64, req *VariantRequest, dst []byte, enc encoder) ([]byte, error) {
	lc, err := db.liveCampaign(ctx, appID, campaignID)
	if err != nil {
		return dst, err
	}
	ev, err := db.evaluate(ctx, lc, req, db.mustLink(appID, req))
	if err != nil {
		return dst, err
	}
	dst = enc(dst, lc, ev)
	// A new user's attributes were merged in the assignment's own
	// transaction, before its audience check; anyone else's are merged now.
	return dst, db.noteAttributes(ctx, appID, req)
}

// encoder appends the answer of an evaluation of lc.
type encoder func(dst []byte, lc *liveCampaign, ev evaluation) []byte

// evaluation is what one campaign answers one user.
type evaluation struct {
	// variant is the index of the user's variant in the campaign's
	// variants, -1 when the user is not assigned, for reason.
	variant  int
	reason   string
	recorded bool // this request assigned the user and counted the impression
}

// appendVariant encodes an evaluation as the variant route answers it.
func appendVariant(dst []byte, lc *liveCampaign, ev evaluation) []byte {
	if ev.variant < 0 {
		return appendNotAssigned(dst, lc.id, ev.reason)
	}
	return appendAssigned(dst, &lc.variants[ev.variant], ev.recorded)
}

// Variants answers the variant request for every active campaign of the app
// at once, listing the campaigns the user is assigned in.
func (db *DB) Variants(ctx context.Context, appID int64, req *VariantRequest, dst []byte) ([]byte, error) {
	dst = append(dst, `{"data":[`...)
	dst, err := db.answerAll(ctx, appID, req, dst, appendVariant, true)
	return append(dst, "]}"...), err
}

// answerAll evaluates every active campaign of the app for one user and
// appends the answers, comma-separated, as enc writes them; with
// assignedOnly, only those of the campaigns the user is assigned in.
func (db *DB) answerAll(ctx context.Context, appID int64, req *VariantRequest, dst []byte, enc encoder, assignedOnly bool) ([]byte, error) {
	list, err := db.activeCampaigns(ctx, appID)
	if err != nil {
		return dst, err
	}
	if err := db.linkPair(ctx, appID, req); err != nil {
		return dst, err
	}
	if err := db.noteAttributes(ctx, appID, req); err != nil {
		return dst, err
	}
	first := true
	for _, lc := range list {
		ev, err := db.evaluate(ctx, lc, req, false)
		if err != nil {
			return dst, err
		}
		if assignedOnly && ev.variant < 0 {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		dst = enc(dst, lc, ev)
		first = false
	}
	return dst, nil
}

// noteAttributes merges request attributes into the profile before any
// audience is checked, as the contract orders.
func (db *DB) noteAttributes(ctx context.Context, appID int64, req *VariantRequest) error {
	if req.merged || req.UserID == "" || len(req.Attributes) == 0 {
		return nil
	}
	if err := db.batch.do(ctx, func(tx *Tx) error { return tx.seeUser(appID, req.UserID, req.Attributes) }); err != nil {
		return err
	}
	req.merged = true
	return nil
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

// evaluate answers one campaign for one user: every SDK route, the
// variant routes and OpenFeature's, assigns, counts and sticks here. With
// link, the request's session and user are linked first (linkPair): in
// the assignment's own operation when the user needs one, so that a new
// pair costs one group commit, not one for the link and one for the
// assignment; otherwise in an operation of its own, before the answer,
// which the link may change.
func (db *DB) evaluate(ctx context.Context, lc *liveCampaign, req *VariantRequest, link bool) (evaluation, error) {
	now := ms(db.Now())
	if !lc.running(now) {
		if link {
			return db.linkThenEvaluate(ctx, lc, req)
		}
		db.seeUserOnce(ctx, lc.appID, req)
		return evaluation{variant: -1, reason: ReasonNotActive}, nil
	}
	kind, user := req.key()
	ck := userKey{lc.id, kind, user}
	if vid, ok := db.assigned.get(ck); ok {
		if i := lc.variantIndex(vid); i >= 0 {
			if link {
				return db.linkThenEvaluate(ctx, lc, req)
			}
			return evaluation{variant: i}, nil
		}
	}
	// Namespace entry comes before the audience, and costs a hash: a user
	// outside the range is answered without a transaction. An assigned
	// user is always inside it, since ranges only change in drafts.
	if lc.ns != nil && !assign.InNamespace(lc.ns.ID, user, lc.ns.Range[0], lc.ns.Range[1]) {
		if link {
			return db.linkThenEvaluate(ctx, lc, req)
		}
		db.seeUserOnce(ctx, lc.appID, req)
		return evaluation{variant: -1, reason: ReasonNotInNamespace}, nil
	}
	// Not in memory: most likely a new user. The write transaction finds
	// out, with an insert that does nothing for a returning user, so a new
	// user costs no separate read before the write. A new link goes in
	// first, as linkPair would have written it before this operation: a
	// user who takes the session's assignment then finds it stored.
	var out assignOutcome
	epoch := db.userEpoch.Load()
	err := db.batch.do(ctx, func(tx *Tx) error {
		if link {
			if _, err := tx.linkSession(lc.appID, req.SessionID, req.UserID); err != nil {
				return err
			}
		}
		return tx.assign(lc, req, kind, user, &out)
	})
	if err != nil {
		return evaluation{}, err
	}
	req.merged = req.merged || out.merged
	switch {
	case !out.running:
		return evaluation{variant: -1, reason: ReasonNotActive}, nil
	case out.notInAudience:
		return evaluation{variant: -1, reason: ReasonNotInAudience}, nil
	case out.mismatch:
		return evaluation{variant: -1, reason: ReasonVariantMismatch}, nil
	}
	db.assigned.putAt(ck, out.variantID, out.assignedAt, epoch)
	i := lc.variantIndex(out.variantID)
	if i < 0 {
		return evaluation{}, errors.New("store: assigned variant missing from campaign")
	}
	return evaluation{variant: i, recorded: out.recorded}, nil
}

// linkThenEvaluate links the request's pair in an operation of its own,
// then evaluates: for an answer given without a transaction, which the
// link may change (the user takes the session's assignment).
func (db *DB) linkThenEvaluate(ctx context.Context, lc *liveCampaign, req *VariantRequest) (evaluation, error) {
	if err := db.linkPair(ctx, lc.appID, req); err != nil {
		return evaluation{}, err
	}
	return db.evaluate(ctx, lc, req, false)
}

func storedKey(kind byte, user string) string {
	return string(kind) + ":" + user
}

type assignOutcome struct {
	running       bool
	merged        bool // the request's attributes went into the profile
	notInAudience bool
	// mismatch: an exposure of a variant other than the user's; nothing
	// was written.
	mismatch  bool
	variantID int64
	// assignedAt is the assignment's time when this operation stored it,
	// else 0 (not read: the variant routes do not need it).
	assignedAt int64
	recorded   bool
}

// assign answers a user the variant memory did not know: the stored
// assignment of a returning user, or else a first assignment and its
// impression. It rereads the campaign's status inside the write
// transaction, so a campaign paused a moment ago assigns nobody, whatever
// the cache still says.
func (tx *Tx) assign(lc *liveCampaign, req *VariantRequest, kind byte, user string, out *assignOutcome) error {
	*out = assignOutcome{}
	key := storedKey(kind, user)
	ref := assignRef{lc.id, key}
	if p := tx.pendingAssignment(ref); p != nil {
		// The same user earlier in this batch: whatever it is answered at
		// the commit, so is this request (sticky, as a stored one would be).
		out.running = true
		p.outs = append(p.outs, out)
		return nil
	}
	if kind == 'u' && req.SessionID != "" {
		if ok, err := tx.takeLinkedSession(lc, req, user, out); err != nil || ok {
			return err
		}
	}
	if lc.audienceID != 0 {
		// An assignment is sticky even when the user has left the audience
		// since, so a targeted campaign looks for one before the audience
		// check. Audiences are made of user profiles: a visitor known only
		// by a session has none, so a targeted campaign does not assign them.
		err := tx.queryRow(`SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`, lc.id, key).Scan(&out.variantID)
		if err == nil {
			out.running = true
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if req.UserID == "" {
			out.running, out.notInAudience = true, true
			return nil
		}
	}
	if req.UserID != "" {
		var attrs map[string]any
		if !req.merged {
			attrs = req.Attributes
		}
		if err := tx.seeUser(lc.appID, req.UserID, attrs); err != nil {
			return err
		}
		out.merged = len(attrs) > 0
	}
	now := ms(tx.now)
	if ok, err := tx.stillRunning(lc, now); err != nil || !ok {
		return err
	}
	out.running = true
	// The audience is checked after the user was recorded and their
	// attributes merged, in the same transaction as the assignment.
	if lc.audienceID != 0 {
		// The audience reads the profile: sightings waiting for the commit
		// go in first.
		if err := tx.flushUsers(); err != nil {
			return err
		}
		in, err := tx.userInAudience(lc.appID, lc.audienceID, req.UserID)
		if err != nil {
			return err
		}
		if !in {
			out.notInAudience = true
			return nil
		}
	}
	var vid int64
	if !lc.roundRobin {
		idx := assign.Pick(assign.Bucket(lc.id, user), lc.weights)
		if idx < 0 {
			idx = 0
		}
		vid = lc.variants[idx].id
		if req.expect != 0 && vid != req.expect {
			return tx.mismatched(lc, key, out)
		}
	}
	// Written at the commit with the batch's other first assignments, which
	// answers out (see flushAssignments). Round robin takes the campaign's
	// counter there too, before any assignment's key is locked (roundRobin).
	tx.assignLater(ref, vid, out, lc, kind, user)
	return nil
}

// mismatched answers an exposure whose variant is not the one the hash
// gives the user: refused, unless the user holds that variant already,
// assigned before the allocations last changed (a targeted campaign looked
// for a stored assignment before its audience check).
func (tx *Tx) mismatched(lc *liveCampaign, key string, out *assignOutcome) error {
	if lc.audienceID == 0 {
		err := tx.queryRow(`SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`, lc.id, key).Scan(&out.variantID)
		if err == nil {
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	out.mismatch = true
	return nil
}

// takeLinkedSession answers a request naming a user and the session linked
// to them, for a user not known to be assigned in the campaign: when the
// session is assigned there and the user is not, the user takes the
// session's assignment, as at the link (see links.go). This keeps the
// rule for campaigns a session joined after its link (a visitor who signed
// out, then in again), and costs a statement only on this path: a request
// without both ids, or a pair whose link was refused, never comes here.
func (tx *Tx) takeLinkedSession(lc *liveCampaign, req *VariantRequest, user string, out *assignOutcome) (bool, error) {
	if o, ok := tx.db.links.get(linkedKey(lc.appID, req.SessionID, user)); !ok || o != linkSame {
		return false, nil
	}
	now := ms(tx.now)
	if ok, err := tx.stillRunning(lc, now); err != nil || !ok {
		return false, err
	}
	// The session's first assignment may wait in this batch.
	if err := tx.flushAssignments(); err != nil {
		return false, err
	}
	vid, err := tx.takeSession(lc.appID, lc.id, req.SessionID, user)
	if err != nil || vid == 0 {
		return false, err
	}
	out.running, out.variantID = true, vid
	return true, nil
}

// stillRunning reports whether the campaign counts at now, reading its
// status inside the write transaction: the cached view may be a moment old,
// or another process on the same file may have moved the campaign.
func (tx *Tx) stillRunning(lc *liveCampaign, now int64) (bool, error) {
	if ok, seen := tx.running[lc.id]; seen {
		return ok, nil
	}
	tx.db.runningReads.Add(1)
	var status string
	var start, end sql.NullInt64
	if err := tx.db.eng.queryRowFirst(tx, `SELECT status, start_at, end_at FROM campaigns WHERE id = ?`, []any{lc.id}, &status, &start, &end); err != nil {
		return false, err
	}
	ok := status == CampaignActive && (!start.Valid || now >= start.Int64) && (!end.Valid || now < end.Int64)
	if tx.running == nil {
		tx.running = map[int64]bool{}
	}
	tx.running[lc.id] = ok // every operation of a batch shares tx.now
	return ok, nil
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
	_ = db.batch.do(ctx, func(tx *Tx) error { return tx.seeUser(appID, req.UserID, nil) })
}

// seeUser records a user and merges attributes into the profile. A user
// recorded in the last minute with nothing to merge costs nothing: the
// known-user cache is only filled after a commit, so a hit means the row
// exists.
func (tx *Tx) seeUser(appID int64, userID string, attrs map[string]any) error {
	k := userKey{appID, 'u', userID}
	now := ms(tx.now)
	if len(attrs) == 0 {
		if last, ok := tx.db.known.get(k); ok && now-last < lastSeenResolution {
			return nil
		}
	}
	if len(attrs) == 0 {
		fe := FieldErrors{}
		checkUserID(fe, "userId", userID)
		if err := fe.Err(); err != nil {
			return err
		}
		tx.touchUserLater(appID, userID)
	} else if err := tx.touchUser(appID, userID, attrs); err != nil {
		return err
	}
	tx.after = append(tx.after, func() { tx.db.known.put(k, now, tx.epoch) })
	return nil
}
