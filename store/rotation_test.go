package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestParseGrace(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want time.Duration
		bad  bool
	}{
		{"", DefaultSecretGrace, false},
		{"null", DefaultSecretGrace, false},
		{"0", 0, false},
		{"3600", time.Hour, false},
		{"2592000", MaxSecretGrace, false},
		{`"24h"`, 24 * time.Hour, false},
		{`"90m"`, 90 * time.Minute, false},
		{`"0s"`, 0, false},
		{"2592001", 0, true},
		{"-1", 0, true},
		{"1.5", 0, true},
		{`"721h"`, 0, true},
		{`"-1h"`, 0, true},
		{`"tomorrow"`, 0, true},
		{`""`, 0, true},
		{"true", 0, true},
		{"{}", 0, true},
	} {
		got, reason := parseGrace(json.RawMessage(tc.raw))
		if (reason != "") != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("parseGrace(%s) = %v, %q; want %v, bad=%v", tc.raw, got, reason, tc.want, tc.bad)
		}
	}
}

// TestRotateWebhookSecret follows a webhook through two rotations and
// checks what a claimed delivery would be signed with at each point.
func TestRotateWebhookSecret(t *testing.T) {
	e := newWebhookEnv(t)
	ctx := context.Background()
	h := e.hook(WebhookInput{Secret: ptr("first-secret")})
	if h.SecretRotatedAt != nil || h.PreviousSecretExpiresAt != nil {
		t.Fatalf("new webhook: rotated=%v previous=%v", h.SecretRotatedAt, h.PreviousSecretExpiresAt)
	}
	// claimOne queues a test delivery and claims it. Earlier claims are
	// never recorded, so their leases lapse as the clock moves and they
	// come back too; only the new one is looked at.
	claimOne := func() *ClaimedDelivery {
		t.Helper()
		d := e.test(h.ID)
		for _, c := range e.claim(100, 100) {
			if c.ID == d.ID {
				return c
			}
		}
		t.Fatalf("delivery %d not claimed", d.ID)
		return nil
	}

	rot, err := e.db.RotateWebhookSecret(ctx, e.app, h.ID, RotateSecretInput{GracePeriod: json.RawMessage(`"2h"`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rot.Secret) != 64 || rot.Secret == "first-secret" {
		t.Fatalf("generated secret %q, want 64 hex characters", rot.Secret)
	}
	if rot.SecretRotatedAt == nil || !rot.SecretRotatedAt.Equal(e.clock.Now()) ||
		rot.PreviousSecretExpiresAt == nil || !rot.PreviousSecretExpiresAt.Equal(e.clock.Now().Add(2*time.Hour)) || !rot.HasSecret {
		t.Fatalf("after rotation: %+v", rot.Webhook)
	}
	b, _ := json.Marshal(rot)
	var shown map[string]any
	_ = json.Unmarshal(b, &shown)
	if shown["secret"] != rot.Secret || shown["secretRotatedAt"] == nil || shown["id"] == nil {
		t.Fatalf("rotation answer %s", b)
	}
	if got, _ := e.db.FindWebhookByID(ctx, e.app, h.ID); got.PreviousSecretExpiresAt == nil {
		t.Fatalf("GET lost previousSecretExpiresAt: %+v", got)
	}

	c := claimOne()
	if c.Secret != rot.Secret || c.PreviousSecret != "first-secret" {
		t.Fatalf("during grace: secret=%q previous=%q", c.Secret, c.PreviousSecret)
	}
	e.clock.Add(2 * time.Hour)
	c = claimOne()
	if c.Secret != rot.Secret || c.PreviousSecret != "" {
		t.Fatalf("when the grace ends: secret=%q previous=%q, want no previous", c.Secret, c.PreviousSecret)
	}

	// A chosen secret, and a rotation inside a grace period: only the
	// secret it replaces keeps signing, never the one before.
	if _, err := e.db.RotateWebhookSecret(ctx, e.app, h.ID, RotateSecretInput{GracePeriod: json.RawMessage(`3600`)}); err != nil {
		t.Fatal(err)
	}
	third, err := e.db.RotateWebhookSecret(ctx, e.app, h.ID, RotateSecretInput{Secret: ptr("third-secret")})
	if err != nil {
		t.Fatal(err)
	}
	if third.Secret != "third-secret" || !third.PreviousSecretExpiresAt.Equal(e.clock.Now().Add(DefaultSecretGrace)) {
		t.Fatalf("third rotation: %+v", third)
	}
	c = claimOne()
	if c.Secret != "third-secret" || c.PreviousSecret == "" || c.PreviousSecret == rot.Secret {
		t.Fatalf("after two rotations: secret=%q previous=%q", c.Secret, c.PreviousSecret)
	}

	// Setting the secret outright ends any grace period.
	if _, err := e.db.UpdateWebhook(ctx, e.app, h.ID, WebhookInput{Secret: ptr("patched-secret")}); err != nil {
		t.Fatal(err)
	}
	c = claimOne()
	if c.Secret != "patched-secret" || c.PreviousSecret != "" {
		t.Fatalf("after PATCH: secret=%q previous=%q", c.Secret, c.PreviousSecret)
	}

	// gracePeriod 0 retires the old secret at once.
	if _, err := e.db.RotateWebhookSecret(ctx, e.app, h.ID, RotateSecretInput{GracePeriod: json.RawMessage(`0`)}); err != nil {
		t.Fatal(err)
	}
	if c = claimOne(); c.PreviousSecret != "" {
		t.Fatalf("grace 0: previous=%q", c.PreviousSecret)
	}
}

func TestRotateWebhookSecretErrors(t *testing.T) {
	e := newWebhookEnv(t)
	ctx := context.Background()
	h := e.hook(WebhookInput{})
	long := string(make([]rune, MaxWebhookSecretLen+1))
	for _, tc := range []struct {
		name  string
		in    RotateSecretInput
		field string
	}{
		{"BadGrace", RotateSecretInput{GracePeriod: json.RawMessage(`"soon"`)}, "gracePeriod"},
		{"EmptySecret", RotateSecretInput{Secret: ptr("")}, "secret"},
		{"LongSecret", RotateSecretInput{Secret: &long}, "secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.db.RotateWebhookSecret(ctx, e.app, h.ID, tc.in)
			wantCode(t, err, EINVALID)
			if fields, _ := err.(*Error).Details["fields"].(map[string]any); fields[tc.field] == nil {
				t.Fatalf("details=%v, want %s named", err.(*Error).Details, tc.field)
			}
		})
	}
	_, err := e.db.RotateWebhookSecret(ctx, e.app, h.ID+100, RotateSecretInput{})
	wantCode(t, err, ENOTFOUND)

	// A webhook without a secret gets one; nothing else signs.
	rot, err := e.db.RotateWebhookSecret(ctx, e.app, h.ID, RotateSecretInput{})
	if err != nil {
		t.Fatal(err)
	}
	if !rot.HasSecret || rot.PreviousSecretExpiresAt != nil {
		t.Fatalf("first secret by rotation: %+v", rot.Webhook)
	}
}
