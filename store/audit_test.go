package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"service/keyring"
)

var auditT0 = time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)

// auditCtx is a context whose changes an API key makes.
func auditCtx() context.Context {
	id := int64(7)
	return WithCaller(context.Background(), Caller{Actor: Actor{Type: ActorKey, ID: &id, Name: "deploy", Prefix: "sk_a_12345"},
		RequestID: "req-1", Addr: "203.0.113.9"})
}

// auditLog returns the app's entries, newest first.
func auditLog(tb testing.TB, db *DB, f AuditFilter) []*AuditEntry {
	tb.Helper()
	list, err := db.FindAuditLog(context.Background(), f)
	if err != nil {
		tb.Fatal(err)
	}
	return list
}

// wantOneEntry returns the newest entry, failing when the log grew by other
// than one entry since n.
func wantOneEntry(tb testing.TB, db *DB, n *int) *AuditEntry {
	tb.Helper()
	list := auditLog(tb, db, AuditFilter{Limit: MaxAuditLimit})
	if got := len(list) - *n; got != 1 {
		tb.Fatalf("the change wrote %d audit entries, want 1", got)
	}
	*n = len(list)
	return list[0]
}

func wantNoEntry(tb testing.TB, db *DB, n int) {
	tb.Helper()
	if got := len(auditLog(tb, db, AuditFilter{Limit: MaxAuditLimit})); got != n {
		tb.Fatalf("%d audit entries, want %d: a refused or empty change wrote one", got, n)
	}
}

func changeOf(tb testing.TB, e *AuditEntry, field string) (before, after string) {
	tb.Helper()
	c, ok := e.Changes[field]
	if !ok {
		tb.Fatalf("%s: no change of %s in %v", e.Action, field, e.Changes)
	}
	return string(c.Before), string(c.After)
}

// TestAuditEveryChange makes one change of every kind and checks that each
// wrote exactly one entry, in its transaction, with the caller, the action,
// the object and the fields that changed; and that a refused change and a
// change that changes nothing write none.
func TestAuditEveryChange(t *testing.T) {
	db := mustOpenDB(t)
	db.Now = func() time.Time { return auditT0 }
	ctx := auditCtx()
	n := 0

	app, err := db.CreateApp(ctx, "shop", "pro", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := wantOneEntry(t, db, &n)
	if e.Action != "app.created" || !e.Instance || *e.AppID != app.ID || e.Object.Type != ObjectApp || *e.Object.ID != app.ID || e.Object.Name != "shop" {
		t.Fatalf("app entry %+v", e)
	}
	if e.Actor.Type != ActorKey || *e.Actor.ID != 7 || e.Actor.Name != "deploy" || e.Actor.Prefix != "sk_a_12345" ||
		e.RequestID != "req-1" || e.ClientAddress != "203.0.113.9" || !e.Timestamp.Equal(auditT0) {
		t.Fatalf("entry caller %+v", e)
	}

	step := func(name, action, objType string, f func() error) *AuditEntry {
		t.Helper()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e := wantOneEntry(t, db, &n)
		if e.Action != action || e.Object.Type != objType || e.AppID == nil || *e.AppID != app.ID {
			t.Fatalf("%s: entry %s on %s of app %v, want %s on %s", name, e.Action, e.Object.Type, e.AppID, action, objType)
		}
		return e
	}
	refused := func(name string, f func() error) {
		t.Helper()
		if err := f(); err == nil {
			t.Fatalf("%s: no error", name)
		}
		wantNoEntry(t, db, n)
	}

	var key *Key
	step("CreateKey", "key.created", ObjectKey, func() (err error) { key, _, err = db.CreateKey(ctx, app.ID, RoleAdmin, "ci"); return })
	e = step("RevokeKey", "key.revoked", ObjectKey, func() error { _, err := db.RevokeKey(ctx, key.ID); return err })
	if _, after := changeOf(t, e, "revokedAt"); after == "" || after == "null" {
		t.Fatalf("revokedAt after=%s", after)
	}
	if _, err := db.RevokeKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	wantNoEntry(t, db, n)

	e = step("UpdateApp", "app.updated", ObjectApp, func() error {
		_, err := db.UpdateApp(ctx, app.ID, AppUpdate{RateLimit: ptr(42)})
		return err
	})
	if b, a := changeOf(t, e, "rateLimit"); b != "1000" || a != "42" || len(e.Changes) != 1 {
		t.Fatalf("changes %v", e.Changes)
	}
	step("SetAppAllowedOrigins", "app.updated", ObjectApp, func() error {
		return db.SetAppAllowedOrigins(ctx, app.ID, []string{"https://shop.example"})
	})

	var blocks []int64
	for _, name := range []string{"A", "B"} {
		e = step("CreateContent", "content.created", ObjectContent, func() error {
			c, err := db.CreateContent(ctx, app.ID, ContentInput{Name: ptr(name), Items: json.RawMessage(`[{"type":"text","content":"hi"}]`)})
			if err == nil {
				blocks = append(blocks, c.ID)
			}
			return err
		})
		if e.Changes["name"].Before != nil || string(e.Changes["name"].After) != `"`+name+`"` {
			t.Fatalf("create changes %v", e.Changes)
		}
	}
	e = step("UpdateContent", "content.updated", ObjectContent, func() error {
		_, err := db.UpdateContent(ctx, app.ID, blocks[0], ContentInput{Name: ptr("A2")})
		return err
	})
	if b, a := changeOf(t, e, "name"); b != `"A"` || a != `"A2"` || len(e.Changes) != 1 || e.Object.Name != "A2" {
		t.Fatalf("changes %v, object %+v", e.Changes, e.Object)
	}
	step("PublishContent", "content.status_changed", ObjectContent, func() error {
		_, err := db.UpdateContent(ctx, app.ID, blocks[1], ContentInput{Status: ptr(ContentPublished)})
		return err
	})
	if _, err := db.UpdateContent(ctx, app.ID, blocks[0], ContentInput{Name: ptr("A2")}); err != nil {
		t.Fatal(err)
	}
	wantNoEntry(t, db, n)
	refused("UpdateContentBadStatus", func() error {
		_, err := db.UpdateContent(ctx, app.ID, blocks[0], ContentInput{Status: ptr("gone")})
		return err
	})

	var aud *Audience
	step("CreateAudience", "audience.created", ObjectAudience, func() (err error) {
		aud, err = db.CreateAudience(ctx, app.ID, AudienceInput{Name: ptr("DE"), Definition: json.RawMessage(`{"rules":[{"field":"country","operator":"equals","value":"DE"}]}`)})
		return
	})
	step("UpdateAudience", "audience.updated", ObjectAudience, func() error {
		_, err := db.UpdateAudience(ctx, app.ID, aud.ID, AudienceInput{Description: ptr("Germans")})
		return err
	})
	step("ArchiveAudience", "audience.status_changed", ObjectAudience, func() error {
		_, err := db.UpdateAudience(ctx, app.ID, aud.ID, AudienceInput{Status: ptr(AudienceArchived)})
		return err
	})

	var camp *Campaign
	end, _ := json.Marshal(auditT0.Add(48 * time.Hour))
	vs := []VariantInput{{ContentViewID: &blocks[0]}, {ContentViewID: &blocks[1]}}
	step("CreateCampaign", "campaign.created", ObjectCampaign, func() (err error) {
		camp, err = db.CreateCampaign(ctx, app.ID, 0, CampaignInput{Name: ptr("Spring"), EndDate: end, Variants: &vs})
		return
	})
	step("UpdateCampaign", "campaign.updated", ObjectCampaign, func() error {
		_, err := db.UpdateCampaign(ctx, app.ID, camp.ID, CampaignInput{Description: ptr("more")})
		return err
	})
	refused("StartCampaignDraftBlock", func() error {
		_, err := db.SetCampaignStatus(ctx, app.ID, camp.ID, CampaignActive)
		return err
	})
	step("PublishContentA", "content.status_changed", ObjectContent, func() error {
		_, err := db.UpdateContent(ctx, app.ID, blocks[0], ContentInput{Status: ptr(ContentPublished)})
		return err
	})
	e = step("StartCampaign", "campaign.status_changed", ObjectCampaign, func() error {
		_, err := db.SetCampaignStatus(ctx, app.ID, camp.ID, CampaignActive)
		return err
	})
	if b, a := changeOf(t, e, "status"); b != `"draft"` || a != `"active"` {
		t.Fatalf("status %s -> %s", b, a)
	}
	step("PauseByUpdate", "campaign.status_changed", ObjectCampaign, func() error {
		_, err := db.UpdateCampaign(ctx, app.ID, camp.ID, CampaignInput{Status: ptr(CampaignPaused)})
		return err
	})
	refused("DeletePausedCampaign", func() error { return db.DeleteCampaign(ctx, app.ID, camp.ID) })
	refused("ArchivePausedContent", func() error {
		_, err := db.UpdateContent(ctx, app.ID, blocks[0], ContentInput{Status: ptr(ContentArchived)})
		return err
	})
	step("Complete", "campaign.status_changed", ObjectCampaign, func() error {
		_, err := db.SetCampaignStatus(ctx, app.ID, camp.ID, CampaignCompleted)
		return err
	})
	step("Archive", "campaign.status_changed", ObjectCampaign, func() error {
		_, err := db.SetCampaignStatus(ctx, app.ID, camp.ID, CampaignArchived)
		return err
	})
	step("Unarchive", "campaign.status_changed", ObjectCampaign, func() error {
		_, err := db.UnarchiveCampaign(ctx, app.ID, camp.ID)
		return err
	})
	e = step("DeleteCampaign", "campaign.deleted", ObjectCampaign, func() error { return db.DeleteCampaign(ctx, app.ID, camp.ID) })
	if b, a := changeOf(t, e, "name"); b != `"Spring"` || a != "" {
		t.Fatalf("delete name %s -> %s", b, a)
	}

	var hook *Webhook
	step("CreateWebhook", "webhook.created", ObjectWebhook, func() (err error) {
		hook, err = db.CreateWebhook(ctx, app.ID, WebhookInput{URL: ptr("http://127.0.0.1:9/h"), Events: &[]string{"*"}})
		return
	})
	step("UpdateWebhook", "webhook.updated", ObjectWebhook, func() error {
		_, err := db.UpdateWebhook(ctx, app.ID, hook.ID, WebhookInput{MaxRetries: ptr(5)})
		return err
	})
	step("DisableWebhook", "webhook.disabled", ObjectWebhook, func() error {
		_, err := db.UpdateWebhook(ctx, app.ID, hook.ID, WebhookInput{Status: ptr(WebhookFailed)})
		return err
	})
	step("EnableWebhook", "webhook.enabled", ObjectWebhook, func() error {
		_, err := db.UpdateWebhook(ctx, app.ID, hook.ID, WebhookInput{Status: ptr(WebhookActive)})
		return err
	})
	var d *Delivery
	step("TestDelivery", "webhook.test_sent", ObjectWebhook, func() (err error) { d, err = db.SendTestDelivery(ctx, app.ID, hook.ID); return })
	step("Redeliver", "webhook.redelivered", ObjectWebhook, func() error {
		_, err := db.RedeliverDelivery(ctx, app.ID, hook.ID, d.ID)
		return err
	})
	step("Rotate", "webhook.secret_rotated", ObjectWebhook, func() error {
		_, err := db.RotateWebhookSecret(ctx, app.ID, hook.ID, RotateSecretInput{})
		return err
	})
	step("DeleteWebhook", "webhook.deleted", ObjectWebhook, func() error { return db.DeleteWebhook(ctx, app.ID, hook.ID) })
	step("DeleteContent", "content.deleted", ObjectContent, func() error { return db.DeleteContent(ctx, app.ID, blocks[0]) })
	step("DeleteAudience", "audience.deleted", ObjectAudience, func() error { return db.DeleteAudience(ctx, app.ID, aud.ID) })
	refused("DeleteMissingAudience", func() error { return db.DeleteAudience(ctx, app.ID, aud.ID) })

	// End-user data is not configuration: no entries for it.
	if _, err := db.IdentifyUser(ctx, app.ID, "u1", map[string]any{"plan": "gold"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.LogEvent(ctx, app.ID, &EventInput{EventID: "view", UserID: "u1"}); err != nil {
		t.Fatal(err)
	}
	wantNoEntry(t, db, n)

	if _, err := db.DeleteApp(ctx, app.ID, true); err != nil {
		t.Fatal(err)
	}
	if e := wantOneEntry(t, db, &n); e.Action != "app.deleted" || !e.Instance {
		t.Fatalf("delete app entry %+v", e)
	}
	// The app's history outlives it.
	if got := auditLog(t, db, AuditFilter{AppID: app.ID, Limit: MaxAuditLimit}); len(got) != n {
		t.Fatalf("%d entries of the deleted app, want %d", len(got), n)
	}
}

// TestAuditActors checks the actor of each way a change comes in: the
// command line when no caller is set, and the scheduler for its moves.
func TestAuditActors(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	id := e.create(campaignTestAt(time.Minute), campaignTestAt(time.Hour), CampaignDraft)
	list := auditLog(t, e.db, AuditFilter{AppID: e.app, ObjectType: ObjectCampaign, ObjectID: id})
	if len(list) != 1 || list[0].Actor.Type != ActorCLI || list[0].Actor.ID != nil || list[0].RequestID != "" {
		t.Fatalf("entries %+v", list)
	}
	e.clock.Add(2 * time.Minute)
	if _, err := e.db.RunSchedule(ctx); err != nil {
		t.Fatal(err)
	}
	list = auditLog(t, e.db, AuditFilter{AppID: e.app, Actor: "scheduler"})
	if len(list) != 1 || list[0].Action != "campaign.status_changed" || *list[0].Object.ID != id {
		t.Fatalf("scheduler entries %+v", list)
	}
	if b, a := changeOf(t, list[0], "status"); b != `"draft"` || a != `"active"` {
		t.Fatalf("scheduler moved %s -> %s", b, a)
	}
	e.clock.Add(2 * time.Hour)
	if _, err := e.db.RunSchedule(ctx); err != nil {
		t.Fatal(err)
	}
	if list = auditLog(t, e.db, AuditFilter{AppID: e.app, Actor: "scheduler"}); len(list) != 2 {
		t.Fatalf("%d scheduler entries, want 2", len(list))
	}
}

// TestAuditRedaction checks that secrets never reach the log: a webhook's
// secret and its headers' values show as [redacted], on create, update,
// rotation and delete; and large content is kept as a digest.
func TestAuditRedaction(t *testing.T) {
	db, app, _ := mustOpenApp(t, auditT0)
	ctx := auditCtx()
	const secret, header = "whsec-very-secret-value-0001", "Bearer receiver-token-0002"
	hook, err := db.CreateWebhook(ctx, app, WebhookInput{URL: ptr("http://127.0.0.1:9/h"), Events: &[]string{"*"},
		Secret: ptr(secret), Headers: &map[string]string{"Authorization": header}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateWebhook(ctx, app, hook.ID, WebhookInput{Secret: ptr(secret + "-2"), Headers: &map[string]string{"Authorization": header + "-2"}}); err != nil {
		t.Fatal(err)
	}
	rotated, err := db.RotateWebhookSecret(ctx, app, hook.ID, RotateSecretInput{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteWebhook(ctx, app, hook.ID); err != nil {
		t.Fatal(err)
	}
	list := auditLog(t, db, AuditFilter{AppID: app, ObjectType: ObjectWebhook})
	if len(list) != 4 {
		t.Fatalf("%d webhook entries, want 4", len(list))
	}
	for _, e := range list {
		b, _ := json.Marshal(e)
		for _, s := range []string{secret, header, rotated.Secret, "receiver-token"} {
			if strings.Contains(string(b), s) {
				t.Fatalf("%s entry holds a secret: %s", e.Action, b)
			}
		}
	}
	byAction := map[string]*AuditEntry{}
	for _, e := range list {
		byAction[e.Action] = e
	}
	for action, want := range map[string][2]string{
		"webhook.created":        {"", `"[redacted]"`},
		"webhook.updated":        {`"[redacted]"`, `"[redacted]"`},
		"webhook.secret_rotated": {`"[redacted]"`, `"[redacted]"`},
		"webhook.deleted":        {`"[redacted]"`, ""},
	} {
		if b, a := changeOf(t, byAction[action], "secret"); b != want[0] || a != want[1] {
			t.Errorf("%s: secret %s -> %s, want %s -> %s", action, b, a, want[0], want[1])
		}
	}
	if _, a := changeOf(t, byAction["webhook.updated"], "headers"); a != `{"Authorization":"[redacted]"}` {
		t.Errorf("headers after=%s", a)
	}

	big := `[{"type":"text","content":"` + strings.Repeat("x", 8000) + `"}]`
	c, err := db.CreateContent(ctx, app, ContentInput{Name: ptr("big"), Items: json.RawMessage(big)})
	if err != nil {
		t.Fatal(err)
	}
	e := auditLog(t, db, AuditFilter{AppID: app, ObjectType: ObjectContent, ObjectID: c.ID})[0]
	var digest struct {
		SHA256 string `json:"sha256"`
		Bytes  int    `json:"bytes"`
	}
	if err := json.Unmarshal(e.Changes["items"].After, &digest); err != nil || len(digest.SHA256) != 64 || digest.Bytes != len(big) {
		t.Fatalf("items after=%s, want a digest of %d bytes", e.Changes["items"].After, len(big))
	}
	if _, a := changeOf(t, e, "name"); a != `"big"` {
		t.Fatalf("small field digested: %s", a)
	}
}

// TestAuditNoSecretInFile searches the database's bytes (the SQLite file
// and its WAL; every table's text on PostgreSQL) for the secrets and keys
// that changes handled: with webhook secrets sealed, none may appear.
func TestAuditNoSecretInFile(t *testing.T) {
	db, path := mustOpenDBPath(t)
	ctx := auditCtx()
	if _, err := db.SetSecretKeys(ctx, secRing(t, keyring.Generate())); err != nil {
		t.Fatal(err)
	}
	app, err := db.CreateApp(ctx, "a", "pro", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, plain, err := db.CreateKey(ctx, app.ID, RoleAdmin, "ci")
	if err != nil {
		t.Fatal(err)
	}
	const secret, header = "whsec-in-the-file-0003", "Bearer header-token-0004"
	hook, err := db.CreateWebhook(ctx, app.ID, WebhookInput{URL: ptr("http://127.0.0.1:9/h"), Events: &[]string{"*"},
		Secret: ptr(secret), Headers: &map[string]string{"X-Token": header}})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := db.RotateWebhookSecret(ctx, app.ID, hook.ID, RotateSecretInput{})
	if err != nil {
		t.Fatal(err)
	}
	const password = "owner's long password 0005"
	if _, err := db.CreateDashboardUser(ctx, "ann@example.com", password, true); err != nil {
		t.Fatal(err)
	}
	_, token, err := db.CreateInvitation(ctx, app.ID, "bo@example.com", MemberViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AcceptInvitation(ctx, token, "bo's long password 0006"); err != nil {
		t.Fatal(err)
	}
	if n := len(auditLog(t, db, AuditFilter{Limit: MaxAuditLimit})); n < 7 {
		t.Fatalf("%d entries: the changes were not logged", n)
	}
	// Header values are kept in the webhooks table as they are (they are
	// sent with every delivery), so they are looked for in the log alone.
	var logText []byte
	for _, e := range auditLog(t, db, AuditFilter{Limit: MaxAuditLimit}) {
		b, _ := json.Marshal(e)
		logText = append(logText, b...)
	}
	if bytes.Contains(logText, []byte("header-token-0004")) {
		t.Error("the audit log holds a header's value")
	}
	secrets := []string{plain, secret, rotated.Secret, password, token, "bo's long password 0006"}
	var data []byte
	if db.pgEngine() != nil {
		// Every row of every table, as text: the server's files are not
		// the test's to read.
		var tables []string
		rows, err := db.read.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, name)
		}
		rows.Close()
		for _, table := range tables {
			rows, err := db.read.Query(`SELECT CAST(t AS TEXT) FROM ` + table + ` t`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				data = append(data, s...)
			}
			rows.Close()
		}
		if !bytes.Contains(data, []byte("webhook.secret_rotated")) {
			t.Fatal("the audit log is not in the text searched")
		}
	} else {
		for _, f := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			data = append(data, b...)
		}
		if !bytes.Contains(data, []byte("webhook.secret_rotated")) {
			t.Fatal("the audit log is not in the bytes searched")
		}
	}
	if !bytes.Contains(data, []byte(plain[:10])) {
		t.Fatal("the key's prefix is not in the data searched: the search sees nothing")
	}
	for _, s := range secrets {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the database holds %q", s)
		}
	}
}

// TestAuditLogQuery checks the filters, newest-first order and paging.
func TestAuditLogQuery(t *testing.T) {
	db, app, clock := mustOpenApp(t, auditT0)
	other, err := db.CreateApp(context.Background(), "other", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := auditCtx()
	var ids []int64
	for i := range 5 {
		clock.Add(time.Minute)
		c, err := db.CreateContent(ctx, app, ContentInput{Name: ptr("c" + string(rune('0'+i)))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	uid := int64(3)
	userCtx := WithCaller(context.Background(), Caller{Actor: Actor{Type: ActorUser, ID: &uid, Name: "Ann@Example.com"}})
	clock.Add(time.Minute)
	if _, err := db.UpdateContent(userCtx, app, ids[0], ContentInput{Name: ptr("renamed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContent(ctx, other.ID, ContentInput{Name: ptr("x")}); err != nil {
		t.Fatal(err)
	}

	count := func(f AuditFilter) int {
		t.Helper()
		f.AppID = app
		return len(auditLog(t, db, f))
	}
	start, end := auditT0.Add(2*time.Minute), auditT0.Add(4*time.Minute)
	for _, tc := range []struct {
		name string
		f    AuditFilter
		want int
	}{
		{"All", AuditFilter{}, 7}, // the app's creation too
		{"ObjectType", AuditFilter{ObjectType: ObjectContent}, 6},
		{"Object", AuditFilter{ObjectType: ObjectContent, ObjectID: ids[0]}, 2},
		{"Action", AuditFilter{Action: "content.updated"}, 1},
		{"ActorKey", AuditFilter{Actor: "key:7"}, 5},
		{"ActorEmail", AuditFilter{Actor: "ann@example.com"}, 1},
		{"ActorUserID", AuditFilter{Actor: "user:3"}, 1},
		{"ActorCLI", AuditFilter{Actor: "cli"}, 1},
		{"Dates", AuditFilter{Start: &start, End: &end}, 3},
		{"Limit", AuditFilter{Limit: 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := count(tc.f); got != tc.want {
				t.Fatalf("%d entries, want %d", got, tc.want)
			}
		})
	}
	t.Run("Paging", func(t *testing.T) {
		var seen []int64
		before := int64(0)
		for {
			page := auditLog(t, db, AuditFilter{AppID: app, Limit: 4, Before: before})
			if len(page) == 0 {
				break
			}
			for _, e := range page {
				if len(seen) > 0 && e.ID >= seen[len(seen)-1] {
					t.Fatalf("ids not newest first: %v then %d", seen, e.ID)
				}
				seen = append(seen, e.ID)
			}
			before = page[len(page)-1].ID
		}
		if len(seen) != 7 {
			t.Fatalf("paged through %d entries, want 7", len(seen))
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for _, f := range []AuditFilter{{ObjectType: "planet"}, {Actor: "key:x"}, {Actor: "robot"}, {Start: &end, End: &start}} {
			_, err := db.FindAuditLog(context.Background(), f)
			wantCode(t, err, EINVALID)
		}
	})
	t.Run("Retention", func(t *testing.T) {
		n, err := db.DeleteAuditBefore(context.Background(), auditT0.Add(3*time.Minute+time.Second))
		if err != nil || n != 5 {
			t.Fatalf("deleted %d, %v; want the 5 entries (2 apps created, 3 blocks) before the cutoff", n, err)
		}
		if got := count(AuditFilter{}); got != 3 {
			t.Fatalf("%d entries left, want 3", got)
		}
	})
}

// TestMembersAndOwners covers roles: the first user is an owner, grant
// adds or changes a role (one entry each), revoke removes it, and the last
// owner stays while others remain.
func TestMembersAndOwners(t *testing.T) {
	db, app, _ := mustOpenApp(t, auditT0)
	ctx := context.Background()
	ann, err := db.CreateDashboardUser(ctx, "ann@example.com", "ann's long password", false)
	if err != nil || !ann.Owner {
		t.Fatalf("first user %+v, %v; want an owner", ann, err)
	}
	bo, err := db.CreateDashboardUser(ctx, "bo@example.com", "bo's long password", false)
	if err != nil || bo.Owner {
		t.Fatalf("second user %+v, %v; want a member", bo, err)
	}
	if role, _ := db.FindAppRole(ctx, bo.ID, app); role != "" {
		t.Fatalf("role before grant %q", role)
	}
	_, err = db.GrantRole(ctx, "bo@example.com", app, "owner")
	wantCode(t, err, EINVALID)
	_, err = db.GrantRole(ctx, "cy@example.com", app, MemberViewer)
	wantCode(t, err, ENOTFOUND)
	_, err = db.GrantRole(ctx, "bo@example.com", app+100, MemberViewer)
	wantCode(t, err, ENOTFOUND)

	for _, tc := range []struct{ role, action string }{
		{MemberViewer, "member.added"}, {MemberEditor, "member.role_changed"}, {MemberEditor, ""}, {MemberViewer, "member.role_changed"},
	} {
		before := len(auditLog(t, db, AuditFilter{AppID: app, ObjectType: ObjectMember}))
		if _, err := db.GrantRole(ctx, "BO@example.com", app, tc.role); err != nil {
			t.Fatal(err)
		}
		list := auditLog(t, db, AuditFilter{AppID: app, ObjectType: ObjectMember})
		if tc.action == "" {
			if len(list) != before {
				t.Fatalf("granting the same role wrote an entry")
			}
			continue
		}
		if len(list) != before+1 || list[0].Action != tc.action || *list[0].Object.ID != bo.ID || list[0].Object.Name != "bo@example.com" {
			t.Fatalf("grant %s: entries %+v", tc.role, list)
		}
		if role, _ := db.FindAppRole(ctx, bo.ID, app); role != tc.role {
			t.Fatalf("role %q, want %q", role, tc.role)
		}
	}
	apps, roles, err := db.FindUserApps(ctx, bo.ID)
	if err != nil || len(apps) != 1 || roles[app] != MemberViewer {
		t.Fatalf("user apps %v %v %v", apps, roles, err)
	}
	users, err := db.FindDashboardUsers(ctx)
	if err != nil || len(users) != 2 || len(users[1].Apps) != 1 || users[1].Apps[0].Role != MemberViewer || users[1].Apps[0].AppName != "test" {
		t.Fatalf("users %+v, %v", users, err)
	}

	if err := db.RevokeRole(ctx, "bo@example.com", app); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.RevokeRole(ctx, "bo@example.com", app), ENOTFOUND)
	if role, _ := db.FindAppRole(ctx, bo.ID, app); role != "" {
		t.Fatalf("role after revoke %q", role)
	}

	_, err = db.SetDashboardOwner(ctx, "ann@example.com", false)
	wantCode(t, err, EINVALID)
	wantCode(t, db.DeleteDashboardUser(ctx, "ann@example.com"), EINVALID)
	if _, err := db.SetDashboardOwner(ctx, "bo@example.com", true); err != nil {
		t.Fatal(err)
	}
	if u, err := db.SetDashboardOwner(ctx, "ann@example.com", false); err != nil || u.Owner {
		t.Fatalf("ann %+v, %v", u, err)
	}
	inst := auditLog(t, db, AuditFilter{Instance: true})
	var actions []string
	for _, e := range inst {
		actions = append(actions, e.Action)
	}
	if got, want := strings.Join(actions, " "), "user.owner_revoked user.owner_granted user.created user.created app.created"; got != want {
		t.Fatalf("instance log %q, want %q", got, want)
	}
	if inst[0].AppID != nil {
		t.Fatalf("user entry of an app: %v", *inst[0].AppID)
	}
}

// TestInvitations covers the link's life: one use, seven days, a clear
// error for each way it fails, only its hash stored, and accepting with an
// existing account.
func TestInvitations(t *testing.T) {
	db, app, clock := mustOpenApp(t, auditT0)
	ctx := context.Background()
	if _, err := db.CreateDashboardUser(ctx, "owner@example.com", "owner's long password", true); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ email, role string }{{"nope", MemberViewer}, {"a@b.c", "owner"}} {
		_, _, err := db.CreateInvitation(ctx, app, tc.email, tc.role, 0)
		wantCode(t, err, EINVALID)
	}
	_, _, err := db.CreateInvitation(ctx, app+99, "a@b.c", MemberViewer, 0)
	wantCode(t, err, ENOTFOUND)

	inv, token, err := db.CreateInvitation(ctx, app, "New@Example.com", MemberEditor, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !inv.ExpiresAt.Equal(auditT0.Add(7 * 24 * time.Hour)) {
		t.Fatalf("expires %v", inv.ExpiresAt)
	}
	if n := countRows(t, db, `SELECT COUNT(*) FROM dashboard_invitations WHERE token_hash = ?`, tokenHash(token)); n != 1 {
		t.Fatal("the token's hash is not what is stored")
	}
	pending, err := db.FindInvitations(ctx, app)
	if err != nil || len(pending) != 1 || pending[0].Email != "New@Example.com" {
		t.Fatalf("pending %v, %v", pending, err)
	}
	if _, err := db.FindInvitation(ctx, token+"x"); err != ErrInvitationInvalid {
		t.Fatalf("wrong token: %v", err)
	}
	_, err = db.AcceptInvitation(ctx, token, "short")
	wantCode(t, err, EINVALID)
	u, err := db.AcceptInvitation(ctx, token, "a long new password")
	if err != nil || u.Owner || u.Email != "New@Example.com" {
		t.Fatalf("accepted %+v, %v", u, err)
	}
	if role, _ := db.FindAppRole(ctx, u.ID, app); role != MemberEditor {
		t.Fatalf("role %q", role)
	}
	if _, err := db.AuthenticateDashboardUser(ctx, "new@example.com", "a long new password"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AcceptInvitation(ctx, token, "a long new password"); err != ErrInvitationUsed {
		t.Fatalf("second use: %v", err)
	}
	list := auditLog(t, db, AuditFilter{AppID: app})
	if list[0].Action != "member.added" || list[1].Action != "invitation.accepted" || list[2].Action != "invitation.created" {
		t.Fatalf("entries %s %s %s", list[0].Action, list[1].Action, list[2].Action)
	}
	if list[0].Actor.Type != ActorUser || *list[0].Actor.ID != u.ID {
		t.Fatalf("acceptance actor %+v, want the new user", list[0].Actor)
	}

	// An existing account proves itself with its password; an invitation
	// never lowers the role it has.
	_, token2, err := db.CreateInvitation(ctx, app, "new@example.com", MemberViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	if inv2, err := db.FindInvitation(ctx, token2); err != nil || !inv2.HasAccount {
		t.Fatalf("invitation %+v, %v", inv2, err)
	}
	if _, err := db.AcceptInvitation(ctx, token2, "not the password"); err != ErrBadCredentials {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := db.AcceptInvitation(ctx, token2, "a long new password"); err != nil {
		t.Fatal(err)
	}
	if role, _ := db.FindAppRole(ctx, u.ID, app); role != MemberEditor {
		t.Fatalf("role %q after a viewer invitation, want editor kept", role)
	}

	_, expired, err := db.CreateInvitation(ctx, app, "late@example.com", MemberViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	revokedInv, revoked, err := db.CreateInvitation(ctx, app, "gone@example.com", MemberViewer, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeInvitation(ctx, app, revokedInv.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.RevokeInvitation(ctx, app, revokedInv.ID), ENOTFOUND)
	if _, err := db.AcceptInvitation(ctx, revoked, "a long new password"); err != ErrInvitationInvalid {
		t.Fatalf("revoked: %v", err)
	}
	clock.Add(InvitationTTL)
	if _, err := db.AcceptInvitation(ctx, expired, "a long new password"); err != ErrInvitationExpired {
		t.Fatalf("expired: %v", err)
	}
	if pending, _ := db.FindInvitations(ctx, app); len(pending) != 0 {
		t.Fatalf("pending after expiry %v", pending)
	}
}
