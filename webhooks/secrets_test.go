package webhooks_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"service/handlers"
	"service/internal/pgtest"
	"service/internal/testlog"
	"service/keyring"
	"service/store"
	"service/webhooks"
)

func ringOf(t *testing.T, keys ...string) *keyring.Ring {
	t.Helper()
	var raw [][]byte
	for _, k := range keys {
		b, _ := base64.StdEncoding.DecodeString(k)
		raw = append(raw, b)
	}
	r, err := keyring.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDispatchHoldsDeliveryWhoseSecretDoesNotDecrypt: a secret sealed
// under a key the running server does not hold is never sent unsigned nor
// counted as an attempt; the delivery stays pending and the failure is
// logged. Once the secret opens again, it is delivered and verifies.
func TestDispatchHoldsDeliveryWhoseSecretDoesNotDecrypt(t *testing.T) {
	ctx := context.Background()
	path := pgtest.DB(t, filepath.Join(t.TempDir(), "hooks.db"))
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app, err := db.CreateApp(ctx, "held", "enterprise", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	_, admin, err := db.CreateKey(ctx, app.ID, store.RoleAdmin, "admin")
	if err != nil {
		t.Fatal(err)
	}
	e := &e2eEnv{t: t, DB: db, API: handlers.New(db, slog.New(slog.NewTextHandler(io.Discard, nil))), App: app.ID, Admin: admin}
	k1, k2 := keyring.Generate(), keyring.Generate()
	if _, err := e.DB.SetSecretKeys(ctx, ringOf(t, k1)); err != nil {
		t.Fatal(err)
	}
	var logs testlog.Buffer
	e.start(10*time.Millisecond, func(d *webhooks.Dispatcher) {
		d.Log = slog.New(slog.NewTextHandler(&logs, nil))
		d.Lease = 500 * time.Millisecond
	})
	rcv := e2eListen(t, nil)
	hook := e.hook(map[string]any{"url": rcv.URL, "secret": "whsec_held", "timeoutSeconds": 1})

	// Another process re-seals the secret under a key this one lacks.
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.SetSecretKeys(ctx, ringOf(t, k2, k1)); err != nil {
		t.Fatal(err)
	}
	e.publish("held")
	e2eEventually(t, 10*time.Second, "the held delivery to be logged", func() bool {
		return strings.Contains(logs.String(), "webhook secret cannot be decrypted; delivery held")
	})
	if n := len(rcv.Hits()); n != 0 {
		t.Fatalf("receiver got %d requests, want none", n)
	}
	d := e.deliveries(hook)[0]
	if d["status"] != "pending" || e2eNum(d, "attemptCount") != 0 {
		t.Fatalf("held delivery=%v, want pending without attempts", d)
	}

	// Sealed back under the key this process holds: the next claim after
	// the lease sends it, signed.
	if _, err := other.SetSecretKeys(ctx, ringOf(t, k1, k2)); err != nil {
		t.Fatal(err)
	}
	hits := rcv.wait(t, 1, 15*time.Second)
	if !webhooks.Verify("whsec_held", hits[0].Data(t), hits[0].Header.Get("X-Service-Signature")) {
		t.Fatal("signature does not verify")
	}
}
