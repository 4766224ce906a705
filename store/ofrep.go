package store

// OpenFeature's Remote Evaluation Protocol (OFREP) over campaigns: a flag
// is the campaign with that key, its value the name of the user's
// variant. The assignment, its impression and its stickiness are the
// variant route's own (evaluate); only the encoding differs.

import (
	"context"
	"database/sql"

	"service/jsonjs"
)

// OpenFeature's evaluation reasons the service answers.
const (
	// FlagSplit: the user was assigned by the campaign's split.
	FlagSplit = "SPLIT"
	// FlagTargetingMatch: the user was assigned in a campaign that targets
	// an audience.
	FlagTargetingMatch = "TARGETING_MATCH"
	// FlagDisabled: the campaign does not run now (not active, or outside
	// its dates); no value, so providers answer the caller's default.
	FlagDisabled = "DISABLED"
	// FlagDefault: the campaign runs but does not take this user (not in
	// its audience or namespace); no value either.
	FlagDefault = "DEFAULT"
)

// EvaluateFlag answers OFREP's single flag evaluation: the app's campaign
// with the key, for the user of req, appended to dst as one evaluation.
// An unknown key is ENOTFOUND.
func (db *DB) EvaluateFlag(ctx context.Context, appID int64, key string, req *VariantRequest, dst []byte) ([]byte, error) {
	id, err := db.CampaignIDByKey(ctx, appID, key)
	if err != nil {
		return dst, err
	}
	return db.answerOne(ctx, appID, id, req, dst, appendFlag)
}

// EvaluateFlags answers OFREP's bulk evaluation: {"flags":[…]} with one
// evaluation per active campaign of the app, assigning and counting as
// the variant routes do.
func (db *DB) EvaluateFlags(ctx context.Context, appID int64, req *VariantRequest, dst []byte) ([]byte, error) {
	dst = append(dst, `{"flags":[`...)
	dst, err := db.answerAll(ctx, appID, req, dst, appendFlag, false)
	return append(dst, "]}"...), err
}

// appendFlag encodes an evaluation as OFREP answers it.
func appendFlag(dst []byte, lc *liveCampaign, ev evaluation) []byte {
	if ev.variant >= 0 {
		return append(dst, lc.variants[ev.variant].flag...)
	}
	dst = append(dst, `{"key":`...)
	dst = append(dst, lc.keyJSON...)
	if ev.reason == ReasonNotActive {
		dst = append(dst, `,"reason":"`+FlagDisabled+`","metadata":{"campaignId":`...)
		dst = appendInt(dst, lc.id)
		return append(dst, "}}"...)
	}
	dst = append(dst, `,"reason":"`+FlagDefault+`","metadata":{"campaignId":`...)
	dst = appendInt(dst, lc.id)
	dst = append(dst, `,"reason":"`...)
	dst = append(dst, ev.reason...)
	return append(dst, `"}}`...)
}

// flagAnswer is the OFREP evaluation of a user assigned the variant:
// value and variant are its name, and metadata names the campaign, the
// variant and its content block (left out when the block is gone: OFREP's
// metadata holds no nulls).
func flagAnswer(lc *liveCampaign, variantID int64, name string, cid sql.NullInt64) []byte {
	b := []byte(`{"key":`)
	b = append(b, lc.keyJSON...)
	b = append(b, `,"value":`...)
	b = jsonjs.AppendQuote(b, name)
	b = append(b, `,"variant":`...)
	b = jsonjs.AppendQuote(b, name)
	reason := FlagSplit
	if lc.audienceID != 0 {
		reason = FlagTargetingMatch
	}
	b = append(b, `,"reason":"`+reason+`","metadata":{"campaignId":`...)
	b = appendInt(b, lc.id)
	b = append(b, `,"variantId":`...)
	b = appendInt(b, variantID)
	if cid.Valid {
		b = append(b, `,"contentViewId":`...)
		b = appendInt(b, cid.Int64)
	}
	return append(b, "}}"...)
}
