package webhooks

import (
	"crypto/hmac"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (https://www.standardwebhooks.com) headers, sent beside
// the service's own X-Service-* headers so that receivers can verify
// deliveries with any of that standard's libraries.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// standardVersion prefixes each signature: "v1" is HMAC-SHA256 in the
// standard, and receivers skip versions they do not know.
const standardVersion = "v1,"

// SignStandard returns one Standard Webhooks signature, "v1,<base64>", the
// standard-alphabet, padded base64 of HMAC-SHA256 over
//
//	{id}.{timestamp}.{body}
//
// keyed with the secret's UTF-8 bytes (the same key as X-Service-Signature;
// the standard's libraries take it with their raw-secret option). body is
// the whole request body as sent.
func SignStandard(secret, id string, timestamp int64, body []byte) string {
	return standardVersion + base64.StdEncoding.EncodeToString(hmacSHA256(secret, standardContent(id, timestamp, body)))
}

// StandardSignatures returns the webhook-signature header value: one
// signature per non-empty secret, space-separated, as the standard allows
// while a secret is being rotated. It is "" when no secret is given.
func StandardSignatures(id string, timestamp int64, body []byte, secrets ...string) string {
	var sigs []string
	for _, s := range secrets {
		if s != "" {
			sigs = append(sigs, SignStandard(s, id, timestamp, body))
		}
	}
	return strings.Join(sigs, " ")
}

// VerifyStandard reports whether any v1 signature in header is valid for
// the id, timestamp and body under secret, and the timestamp is within
// tolerance of now (the standard's libraries use five minutes), so that a
// captured delivery cannot be replayed later. Comparisons are
// constant-time.
func VerifyStandard(secret, id, timestamp string, body []byte, header string, now time.Time, tolerance time.Duration) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return false
	}
	want := []byte(SignStandard(secret, id, ts, body))
	for _, sig := range strings.Fields(header) {
		if hmac.Equal([]byte(sig), want) {
			return true
		}
	}
	return false
}

func standardContent(id string, timestamp int64, body []byte) []byte {
	buf := make([]byte, 0, len(id)+len(body)+24)
	buf = append(buf, id...)
	buf = append(buf, '.')
	buf = strconv.AppendInt(buf, timestamp, 10)
	buf = append(buf, '.')
	return append(buf, body...)
}
