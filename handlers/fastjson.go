package handlers

import (
	"encoding/json"
	"unicode/utf8"

	"service/store"
)

// The SDK's bodies are small, flat objects: {"userId":"u-1"} for a variant,
// {"eventId":"purchase","userId":"u-1","metadata":{...}} for an event.
// encoding/json decodes them by reflection with an allocation per object
// and member path; these decoders read exactly that shape and give up on
// anything else (escapes, non-ASCII, other or differently cased names,
// null), which then goes through encoding/json as before. A body they
// accept decodes to what encoding/json gives (FuzzFastDecode checks it).

// decodeVariantFast decodes body into v when it is a flat object of
// userId and sessionId strings.
func decodeVariantFast(body []byte, v *store.VariantRequest) bool {
	ok := scanFlat(body, func(name, val []byte) bool {
		switch string(name) {
		case "userId":
			v.UserID = string(val)
		case "sessionId":
			v.SessionID = string(val)
		default:
			return false
		}
		return true
	}, nil)
	if !ok {
		*v = store.VariantRequest{}
	}
	return ok
}

// decodeEventFast decodes body into v when it is a flat object of eventId,
// userId, sessionId and logId strings and a metadata object.
func decodeEventFast(body []byte, v *store.EventInput) bool {
	ok := scanFlat(body, func(name, val []byte) bool {
		switch string(name) {
		case "eventId":
			v.EventID = string(val)
		case "userId":
			v.UserID = string(val)
		case "sessionId":
			v.SessionID = string(val)
		case "logId":
			v.LogID = string(val)
		default:
			return false
		}
		return true
	}, func(name, val []byte) bool {
		// The full path refuses a body that is not UTF-8, and only here
		// may a byte outside ASCII pass the scan.
		if string(name) != "metadata" || !utf8.Valid(val) {
			return false
		}
		v.Metadata = append(json.RawMessage(nil), val...)
		return true
	})
	if !ok {
		*v = store.EventInput{}
	}
	return ok
}

// scanFlat walks body as a non-empty JSON object whose member names and
// string values are printable ASCII without escapes, and whose other
// values are objects (passed to obj, which may be nil). It stops at the
// first thing outside that shape, or when str or obj refuse a member.
func scanFlat(b []byte, str, obj func(name, val []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	for {
		name, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		if i = skipSpace(b, j); i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		switch {
		case i < len(b) && b[i] == '"':
			val, j, ok := plainString(b, i)
			if !ok || !str(name, val) {
				return false
			}
			i = j
		case i < len(b) && b[i] == '{' && obj != nil:
			end, ok := objectEnd(b, i)
			if !ok || !obj(name, b[i:end]) {
				return false
			}
			i = end
		default:
			return false
		}
		if i = skipSpace(b, i); i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the string at b[i] when it holds only printable ASCII
// other than '"' and '\\', returning its contents and the index after it.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// objectEnd returns the index just after the object starting at b[i],
// which must be valid JSON.
func objectEnd(b []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			// Skip the string; a backslash escapes the byte after it.
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1, json.Valid(b[i : j+1])
			}
		}
	}
	return 0, false
}
