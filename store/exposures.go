package store

import (
	"context"
)

// MaxExposures bounds the exposures of one call.
const MaxExposures = 100

// Reasons an exposure is refused, besides the variant route's
// (ReasonNotActive, ReasonNotInAudience, ReasonNotInNamespace).
const (
	ReasonInvalid         = "invalid"
	ReasonUnknownCampaign = "unknown_campaign"
	ReasonUnknownVariant  = "unknown_variant"
	ReasonRemoteCampaign  = "remote_campaign"
	ReasonVariantMismatch = "variant_mismatch"
)

// Exposure is what a local evaluator showed a user: POST
// /apps-external/{appId}/exposures.
type Exposure struct {
	CampaignID int64          `json:"campaignId"`
	VariantID  int64          `json:"variantId"`
	UserID     string         `json:"userId"`
	SessionID  string         `json:"sessionId"`
	Attributes map[string]any `json:"attributes"`
}

// Validate checks an exposure as the variant route checks its request.
func (x *Exposure) Validate() error {
	fe := FieldErrors{}
	if x.CampaignID < 1 {
		fe.Add("campaignId", "must be a positive integer")
	}
	if x.VariantID < 1 {
		fe.Add("variantId", "must be a positive integer")
	}
	if x.UserID == "" && x.SessionID == "" {
		fe.Add("userId", "userId or sessionId is required")
	}
	checkVisitor(fe, x.UserID, x.SessionID)
	checkAttributes(fe, x.Attributes)
	return fe.Err()
}

// Expose records an exposure as the variant route's first assignment and
// impression of the user, through the same evaluation: stored, counted
// once, and sticky, so that sending it again changes nothing. It is
// refused, and counts nowhere, when the server does not give the user
// that variant: an unknown campaign, a variant of another campaign, a
// campaign that is not running or is evaluated remotely, a user outside
// its namespace or audience, or another variant than the user's (a stale
// ruleset, a forged call). reason is empty when the exposure is recorded.
func (db *DB) Expose(ctx context.Context, appID int64, x *Exposure) (reason string, err error) {
	lc, err := db.liveCampaign(ctx, appID, x.CampaignID)
	if ErrorCode(err) == ENOTFOUND {
		return ReasonUnknownCampaign, nil
	} else if err != nil {
		return "", err
	}
	if lc.variantIndex(x.VariantID) < 0 {
		return ReasonUnknownVariant, nil
	}
	if !lc.running(ms(db.Now())) {
		return ReasonNotActive, nil
	}
	if lc.roundRobin {
		// The counter picks a new user's variant at the commit: no
		// client can know it beforehand.
		return ReasonRemoteCampaign, nil
	}
	req := &VariantRequest{UserID: x.UserID, SessionID: x.SessionID, Attributes: x.Attributes, expect: x.VariantID}
	// Both ids link the session to the user, as on the variant route: the
	// user may then hold the session's variant, which the hash of the
	// userId does not give, and an exposure of the hash's is refused.
	ev, err := db.evaluate(ctx, lc, req, db.mustLink(appID, req))
	if err != nil {
		return "", err
	}
	if ev.variant < 0 {
		return ev.reason, nil
	}
	if lc.variants[ev.variant].id != x.VariantID {
		return ReasonVariantMismatch, nil
	}
	return "", db.noteAttributes(ctx, appID, req)
}
