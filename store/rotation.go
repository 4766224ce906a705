package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"service/keyring"
)

// Grace periods of a secret rotation.
const (
	DefaultSecretGrace = 24 * time.Hour
	MaxSecretGrace     = 30 * 24 * time.Hour
)

// RotateSecretInput is the body of a rotation. Both fields are optional.
type RotateSecretInput struct {
	// Secret is the new secret; when absent one is generated.
	Secret *string `json:"secret"`
	// GracePeriod is how long the replaced secret keeps signing beside the
	// new one: a whole number of seconds, or a duration string such as
	// "24h" or "90m". Absent means DefaultSecretGrace; 0 ends it at once.
	GracePeriod json.RawMessage `json:"gracePeriod"`
}

// RotatedWebhook is the answer to a rotation: the webhook as GET shows it,
// plus the new secret, shown this once.
type RotatedWebhook struct {
	*Webhook
	Secret string `json:"secret"`
}

// parseGrace reads a grace period: seconds as a JSON number, or a Go
// duration string. It is the one place both forms are accepted.
func parseGrace(raw json.RawMessage) (time.Duration, string) {
	const reason = "must be a number of seconds or a duration such as \"24h\", from 0 to 720h"
	if len(raw) == 0 || string(raw) == "null" {
		return DefaultSecretGrace, ""
	}
	var d time.Duration
	var secs float64
	var str string
	switch {
	case json.Unmarshal(raw, &secs) == nil:
		if secs != math.Trunc(secs) || secs < 0 || secs > MaxSecretGrace.Seconds() {
			return 0, reason
		}
		d = time.Duration(secs) * time.Second
	case json.Unmarshal(raw, &str) == nil:
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(str)); err != nil {
			return 0, reason
		}
	default:
		return 0, reason
	}
	if d < 0 || d > MaxSecretGrace {
		return 0, reason
	}
	return d, ""
}

// NewWebhookSecret returns a fresh secret: 32 random bytes in lowercase
// hex. Hex keeps it ASCII, so its UTF-8 bytes (the HMAC key) are the same
// whichever way a receiver's library turns a string into bytes.
func NewWebhookSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// RotateWebhookSecret replaces the webhook's secret. The secret it replaces
// (if any) keeps signing deliveries beside the new one until the grace
// period ends; a rotation during an earlier grace period drops the secret
// that was in it, so at most two secrets ever sign.
func (db *DB) RotateWebhookSecret(ctx context.Context, appID, id int64, in RotateSecretInput) (*RotatedWebhook, error) {
	fe := FieldErrors{}
	grace, reason := parseGrace(in.GracePeriod)
	if reason != "" {
		fe.Add("gracePeriod", reason)
	}
	var secret string
	if in.Secret != nil {
		secret = *in.Secret
		switch {
		case secret == "":
			fe.Add("secret", "must not be empty (to remove the secret, PATCH the webhook with \"secret\": \"\")")
		case !utf8.ValidString(secret):
			fe.Add("secret", "must be valid UTF-8")
		case keyring.Sealed(secret):
			fe.Add("secret", "must not begin with "+keyring.Prefix)
		case utf8.RuneCountInString(secret) > MaxWebhookSecretLen:
			fe.Add("secret", fmt.Sprintf("must be at most %d characters", MaxWebhookSecretLen))
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if in.Secret == nil {
		var err error
		if secret, err = NewWebhookSecret(); err != nil {
			return nil, err
		}
	}
	sealed, err := db.sealSecret(secret)
	if err != nil {
		return nil, err
	}
	err = db.withTx(ctx, func(tx *Tx) error {
		cur, err := tx.findWebhook(appID, id)
		if err != nil {
			return err
		}
		now := ms(tx.now)
		// The current secret moves to previous_secret as stored, so the
		// column never needs decoding here; a webhook without a secret has
		// nothing to keep signing.
		res, err := tx.exec(`UPDATE webhooks SET
				previous_secret = secret,
				previous_secret_expires_at = CASE WHEN secret = '' THEN NULL ELSE CAST(? AS BIGINT) END,
				secret = ?, secret_rotated_at = ?, updated_at = ?
			WHERE id = ? AND app_id = ?`,
			now+grace.Milliseconds(), sealed, now, now, id, appID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("webhook")
		}
		tx.changed = true
		after := *webhookSnapshot(cur)
		after.Secret = sealed
		return tx.audit(auditRecord{app: appID, action: "webhook.secret_rotated", objType: ObjectWebhook, objID: id, objName: cur.URL,
			before: webhookSnapshot(cur), after: &after})
	})
	if err != nil {
		return nil, err
	}
	w, err := db.FindWebhookByID(ctx, appID, id)
	if err != nil {
		return nil, err
	}
	return &RotatedWebhook{Webhook: w, Secret: secret}, nil
}
