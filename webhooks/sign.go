package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"service/jsonjs"
)

// sha256SignaturePrefix names the algorithm so that it can change later without
// receivers misinterpreting a new signature.
const sha256SignaturePrefix = "sha256="

// Sign returns the X-Service-Signature value for data: "sha256=" followed by
// the lowercase hex HMAC-SHA256 of data keyed with secret.
//
// data must be exactly the bytes embedded as "data" in the envelope, i.e.
// the output of jsonjs.Stringify (or jsonjs.Canonicalize), because
// JavaScript receivers recompute the HMAC over
// JSON.stringify(JSON.parse(body).data) and only jsonjs output is
// guaranteed to survive that round trip unchanged.
func Sign(secret string, data []byte) string {
	return sha256SignaturePrefix + hex.EncodeToString(hmacSHA256(secret, data))
}

// Verify reports whether header is a valid signature of data under secret.
// The comparison is constant-time so that response timing does not reveal
// how much of a forged signature was correct.
func Verify(secret string, data []byte, header string) bool {
	hexSig, ok := strings.CutPrefix(header, sha256SignaturePrefix)
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, hmacSHA256(secret, data))
}

func hmacSHA256(secret string, data []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(data)
	return h.Sum(nil)
}

// Envelope builds the webhook body
//
//	{"event":<event>,"timestamp":"<RFC 3339 UTC, milliseconds>","data":<data>}
//
// embedding data verbatim, so the signed bytes are literally part of the
// body. data must be a JSON text produced by jsonjs.Stringify (or
// jsonjs.Canonicalize); it is not validated here. The key names are not
// array indices, so JavaScript keeps them in this order.
func Envelope(event string, ts time.Time, data []byte) []byte {
	buf := make([]byte, 0, len(data)+len(event)+64)
	buf = append(buf, `{"event":`...)
	buf = jsonjs.AppendQuote(buf, event)
	buf = append(buf, `,"timestamp":`...)
	buf = jsonjs.AppendQuotedTime(buf, ts)
	buf = append(buf, `,"data":`...)
	buf = append(buf, data...)
	buf = append(buf, '}')
	return buf
}
