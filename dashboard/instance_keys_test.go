package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"service/store"
)

// TestInstanceKeysPage: an owner creates an instance key on /keys, sees
// its plaintext once, and revokes it after a confirmation; the key works
// as an instance key until then, and both changes are the instance's in
// the audit log, made by the owner.
func TestInstanceKeysPage(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	if !e.user.Owner {
		t.Fatal("the standard user is no owner")
	}
	p := b.get("/apps")
	wantContains(t, p, `href="/keys">Instance keys</a>`)
	wantContains(t, b.get("/keys"), "No instance keys yet", `action="/keys"`)

	p = b.post("/keys", url.Values{"name": {strings.Repeat("n", store.MaxNameLen+1)}})
	wantStatus(t, p, http.StatusUnprocessableEntity)
	if !errBeside(p.body, "name", "must be at most 200 characters") {
		t.Fatalf("no error beside name:\n%s", p.body)
	}

	p = b.post("/keys", url.Values{"name": {" terraform "}})
	wantStatus(t, p, http.StatusCreated)
	m := regexp.MustCompile(`id="key-secret" class="mono" readonly value="(sk_i_[0-9a-f]{48})"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no plaintext on the page:\n%s", p.body)
	}
	secret := m[1]
	k, err := e.db.Authenticate(e.ctx, secret)
	if err != nil || k.Role != store.RoleInstance || k.AppID != 0 || k.Name != "terraform" {
		t.Fatalf("the new key: %+v %v", k, err)
	}
	list := b.get("/keys")
	wantContains(t, list, secret[:10]+"…", "terraform", fmt.Sprintf(`href="/keys/%d/revoke"`, k.ID))
	if strings.Contains(list.body, secret) {
		t.Fatal("the list shows the plaintext again")
	}

	// An app's key is not an instance key: not found here.
	app := e.app("Shop")
	appKey, _, err := e.db.CreateKey(e.ctx, app.ID, store.RoleAdmin, "")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, b.get(fmt.Sprintf("/keys/%d/revoke", appKey.ID)), http.StatusNotFound)
	wantStatus(t, b.post(fmt.Sprintf("/keys/%d/revoke", appKey.ID), nil), http.StatusNotFound)

	wantContains(t, b.get(fmt.Sprintf("/keys/%d/revoke", k.ID)), "Revoke the instance key", fmt.Sprintf(`action="/keys/%d/revoke"`, k.ID))
	p = b.post(fmt.Sprintf("/keys/%d/revoke", k.ID), nil)
	wantStatus(t, p, http.StatusSeeOther)
	if loc := p.header.Get("Location"); loc != "/keys?notice=key_revoked" {
		t.Fatalf("Location=%q", loc)
	}
	if _, err := e.db.Authenticate(e.ctx, secret); err == nil {
		t.Fatal("the revoked key still authenticates")
	}
	if keys, err := e.db.FindKeys(e.ctx, app.ID); err != nil || keys[0].RevokedAt != nil {
		t.Fatalf("the app's key: %v %v", keys, err)
	}

	entries, err := e.db.FindAuditLog(e.ctx, store.AuditFilter{Instance: true, ObjectType: store.ObjectKey})
	if err != nil || len(entries) != 2 {
		t.Fatalf("instance key entries: %v %v", entries, err)
	}
	for i, action := range []string{"key.revoked", "key.created"} {
		en := entries[i]
		if en.Action != action || en.AppID != nil || en.Actor.Type != store.ActorUser || en.Actor.Name != e.user.Email || *en.Object.ID != k.ID {
			t.Fatalf("entry %d: %+v, want %s by the owner", i, en, action)
		}
	}
	wantContains(t, b.get("/activity"), "key.revoked")
}
