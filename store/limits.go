package store

import (
	"fmt"
	"unicode/utf8"
)

// Limits on what clients send, each named once here and checked by the
// functions below on every route that takes the value. Lengths count
// characters (Unicode code points), never bytes; sizes of JSON count bytes.
const (
	// MaxUserIDLen bounds userId and sessionId, wherever they are sent.
	MaxUserIDLen = 256
	// MaxEventIDLen bounds an event's eventId (and a campaign's goal).
	MaxEventIDLen = 200
	// MaxLogIDLen bounds an event's logId, its idempotency key.
	MaxLogIDLen = 200
	// MaxAttributes bounds the attributes of one request and of a stored
	// profile; MaxAttributesBytes bounds the profile's JSON. They keep one
	// profile cheap to decode, since bulk counting decodes every profile of
	// an app.
	MaxAttributes      = 100
	MaxAttributesBytes = 64 << 10
	// MaxMetadata bounds an event's metadata, in bytes of JSON.
	MaxMetadata = 64 << 10
	// MaxFormEnvironmentLen bounds a form submission's environment.
	MaxFormEnvironmentLen = 64
	// MaxNameLen bounds the name of a campaign, a variant, a content block
	// or an audience.
	MaxNameLen = 200
	// MaxAudienceDescriptionLen bounds an audience's description.
	MaxAudienceDescriptionLen = 2000
)

// tooLong reports whether s has more than max characters. Counting is
// skipped when the bytes already fit, which is nearly always.
func tooLong(s string, max int) bool {
	return len(s) > max && utf8.RuneCountInString(s) > max
}

// checkLen records at path a string longer than max characters.
func checkLen(fe FieldErrors, path, s string, max int) {
	if tooLong(s, max) {
		fe.Add(path, fmt.Sprintf("must be at most %d characters", max))
	}
}

// checkUserID records a missing or too long user id at path.
func checkUserID(fe FieldErrors, path, id string) {
	if id == "" {
		fe.Add(path, "is required")
		return
	}
	checkLen(fe, path, id, MaxUserIDLen)
}

// checkVisitor checks the optional userId and sessionId by which an SDK
// request names its visitor.
func checkVisitor(fe FieldErrors, userID, sessionID string) {
	checkLen(fe, "userId", userID, MaxUserIDLen)
	checkLen(fe, "sessionId", sessionID, MaxUserIDLen)
}

// checkAttributes records a request carrying more than MaxAttributes
// attributes.
func checkAttributes(fe FieldErrors, attrs map[string]any) {
	if len(attrs) > MaxAttributes {
		fe.Add("attributes", fmt.Sprintf("must have at most %d keys", MaxAttributes))
	}
}

// Validate checks a variant request: a visitor named by userId or
// sessionId, within the limits.
func (r *VariantRequest) Validate() error {
	fe := FieldErrors{}
	if r.UserID == "" && r.SessionID == "" {
		fe.Add("userId", "userId or sessionId is required")
	}
	checkVisitor(fe, r.UserID, r.SessionID)
	checkAttributes(fe, r.Attributes)
	return fe.Err()
}

// deref is *s, or "" for an absent optional string.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
