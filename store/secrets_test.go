package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"service/keyring"
)

func secRing(t *testing.T, keys ...string) *keyring.Ring {
	t.Helper()
	var raw [][]byte
	for _, k := range keys {
		b, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b)
	}
	r, err := keyring.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// secStored returns the secret column as stored, by webhook id.
func secStored(t *testing.T, db *DB) map[int64]string {
	t.Helper()
	rows, err := db.read.Query(`SELECT id, secret FROM webhooks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	return out
}

// secFileHas reports whether the database file or its WAL holds s.
func secFileHas(t *testing.T, path, s string) bool {
	t.Helper()
	if IsPostgresURL(path) {
		return pgTableFileHas(t, path, "webhooks", s)
	}
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// pgTableFileHas reports whether the table's file on the test server
// holds s, dead row versions included: a checkpoint first writes what the
// server's buffers hold. The test server runs on this machine.
func pgTableFileHas(t *testing.T, url, table, s string) bool {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	var dir, rel string
	if err := db.QueryRow(`SELECT current_setting('data_directory'), pg_relation_filepath($1)`, table).Scan(&dir, &rel); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(s))
}

// TestSecretsEncryptedAtRest: plaintext secrets stored before a key was
// set are sealed by SetSecretKeys, secrets written afterwards are sealed
// before they reach the file, the dispatcher's claim still gets the
// plaintext, the API type never does, and no plaintext is left in the
// database file, free space and WAL included, also after a checkpoint.
func TestSecretsEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenDBPath(t)
	app, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"whsec_BEFORE_KEY_9f8e7d6c5b", "whsec_AFTER_KEY_1a2b3c4d5e", "whsec_UPDATED_0z9y8x7w6v"}
	mk := func(secret string) *Webhook {
		w, err := db.CreateWebhook(ctx, app.ID, WebhookInput{URL: ptr("http://127.0.0.1:1/"), Events: &[]string{"*"}, Secret: &secret})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	before := mk(secrets[0])
	if !secFileHas(t, path, secrets[0]) {
		t.Fatal("without a key the secret is not in the file: the file check is blind")
	}
	if n, err := db.SetSecretKeys(ctx, nil); err != nil || n != 1 {
		t.Fatalf("SetSecretKeys(nil)=%d, %v; want 1 plaintext", n, err)
	}

	ring := secRing(t, keyring.Generate())
	if n, err := db.SetSecretKeys(ctx, ring); err != nil || n != 1 {
		t.Fatalf("SetSecretKeys=%d, %v; want 1 sealed", n, err)
	}
	after := mk(secrets[1])
	if _, err := db.UpdateWebhook(ctx, app.ID, before.ID, WebhookInput{Secret: &secrets[2]}); err != nil {
		t.Fatal(err)
	}
	noSecret := mk("")
	stored := secStored(t, db)
	for id, s := range stored {
		if id == noSecret.ID {
			if s != "" {
				t.Fatalf("empty secret stored as %q", s)
			}
			continue
		}
		if !keyring.Sealed(s) || !ring.SealedUnderFirst(s) {
			t.Fatalf("webhook %d: stored %q, want sealed", id, s)
		}
	}
	for _, w := range []int64{before.ID, after.ID} {
		got, err := db.FindWebhookByID(ctx, app.ID, w)
		if err != nil || !got.HasSecret {
			t.Fatalf("webhook %d: hasSecret=%v, %v", w, got != nil && got.HasSecret, err)
		}
		b, _ := json.Marshal(got)
		if bytes.Contains(b, []byte("enc:")) || bytes.Contains(b, []byte("whsec")) {
			t.Fatalf("API body carries the secret: %s", b)
		}
	}

	// The dispatcher signs with the plaintext.
	if _, err := db.SendTestDelivery(ctx, app.ID, before.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SendTestDelivery(ctx, app.ID, after.ID); err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimDueDeliveries(ctx, time.Now().Add(time.Second), ClaimOptions{Limit: 10, PerWebhook: 5, Lease: 10 * time.Second})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	want := map[int64]string{before.ID: secrets[2], after.ID: secrets[1]}
	for _, c := range claimed {
		if c.Secret != want[c.WebhookID] || c.SecretErr != nil {
			t.Fatalf("claim of webhook %d: secret %q (%v), want %q", c.WebhookID, c.Secret, c.SecretErr, want[c.WebhookID])
		}
	}

	for _, s := range secrets {
		if secFileHas(t, path, s) {
			t.Fatalf("plaintext %q found in the database file while open", s)
		}
	}
	if db.pgEngine() == nil {
		if _, err := db.write.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if secFileHas(t, path, s) {
			t.Fatalf("plaintext %q found in the database file after a checkpoint", s)
		}
	}
}

// TestSetSecretKeysRefusals: sealed secrets without a key, or with a key
// that does not open them, fail and change nothing; a ring holding the old
// key after a new one re-seals everything under the new one (rotation).
func TestSetSecretKeysRefusals(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenDBPath(t)
	app, _ := db.CreateApp(ctx, "a", "free", 0)
	old, cur, wrong := keyring.Generate(), keyring.Generate(), keyring.Generate()
	if _, err := db.SetSecretKeys(ctx, secRing(t, old)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"one-secret", "two-secret"} {
		if _, err := db.CreateWebhook(ctx, app.ID, WebhookInput{URL: ptr("http://127.0.0.1:1/"), Events: &[]string{"*"}, Secret: &s}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	db = mustOpenDBAt(t, path)
	var ke *SecretKeyError
	if _, err := db.SetSecretKeys(ctx, nil); !errors.As(err, &ke) || !errors.Is(err, errNoSecretKey) {
		t.Fatalf("no key: %v, want a SecretKeyError", err)
	}
	if _, err := db.SetSecretKeys(ctx, secRing(t, wrong)); !errors.As(err, &ke) || !errors.Is(err, keyring.ErrUnknownKey) {
		t.Fatalf("wrong key: %v, want a SecretKeyError", err)
	}
	// A ring whose first key is new but which lacks the old one cannot
	// open them either, and changes nothing.
	beforeRot := secStored(t, db)
	if _, err := db.SetSecretKeys(ctx, secRing(t, cur, wrong)); err == nil {
		t.Fatal("a ring without the old key was accepted")
	}
	if got := secStored(t, db); !mapsEqual(got, beforeRot) {
		t.Fatalf("a failed call changed secrets: %v -> %v", beforeRot, got)
	}

	// Rotation: new key first, old after it.
	if n, err := db.SetSecretKeys(ctx, secRing(t, cur, old)); err != nil || n != 2 {
		t.Fatalf("rotate: %d, %v; want 2", n, err)
	}
	if n, err := db.SetSecretKeys(ctx, secRing(t, cur, old)); err != nil || n != 0 {
		t.Fatalf("rotate again: %d, %v; want 0", n, err)
	}
	// The old key alone no longer opens them; the new one alone does.
	if _, err := db.SetSecretKeys(ctx, secRing(t, old)); err == nil {
		t.Fatal("old key still opens the rotated secrets")
	}
	if n, err := db.SetSecretKeys(ctx, secRing(t, cur)); err != nil || n != 0 {
		t.Fatalf("new key: %d, %v", n, err)
	}
}

func mapsEqual(a, b map[int64]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRotatedSecretsEncryptedAtRest: a rotation under a key stores both the
// new and the previous secret sealed, and the claim opens both for the
// grace period's two signatures.
func TestRotatedSecretsEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenDBPath(t)
	app, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetSecretKeys(ctx, secRing(t, keyring.Generate())); err != nil {
		t.Fatal(err)
	}
	old, next := "whsec_OLD_rotation_4b3c2d1e", "whsec_NEW_rotation_8f7e6d5c"
	w, err := db.CreateWebhook(ctx, app.ID, WebhookInput{URL: ptr("http://127.0.0.1:1/"), Events: &[]string{"*"}, Secret: &old})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RotateWebhookSecret(ctx, app.ID, w.ID, RotateSecretInput{Secret: &next}); err != nil {
		t.Fatal(err)
	}
	var secret, previous string
	if err := db.read.QueryRow(`SELECT secret, previous_secret FROM webhooks WHERE id = ?`, w.ID).Scan(&secret, &previous); err != nil {
		t.Fatal(err)
	}
	if !keyring.Sealed(secret) || !keyring.Sealed(previous) {
		t.Fatalf("stored secret %q and previous %q, want both sealed", secret, previous)
	}
	for _, s := range []string{old, next} {
		if secFileHas(t, path, s) {
			t.Fatalf("plaintext %q found in the database file", s)
		}
	}
	sealedNext := "enc:v1:x"
	if _, err := db.RotateWebhookSecret(ctx, app.ID, w.ID, RotateSecretInput{Secret: &sealedNext}); ErrorCode(err) != EINVALID {
		t.Fatalf("rotating to a sealed-looking secret: %v, want EINVALID", err)
	}
	if _, err := db.SendTestDelivery(ctx, app.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimDueDeliveries(ctx, time.Now().Add(time.Second), ClaimOptions{Limit: 10, PerWebhook: 5, Lease: 10 * time.Second})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	if c := claimed[0]; c.Secret != next || c.PreviousSecret != old || c.SecretErr != nil {
		t.Fatalf("claim: secret %q previous %q (%v), want %q and %q", c.Secret, c.PreviousSecret, c.SecretErr, next, old)
	}
}
