package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestInstanceKeys: an instance key belongs to no app, authenticates with
// role instance, is listed apart from every app's keys, is revoked by
// RevokeKey but not by RevokeAppKey, and each change is in the instance's
// audit log.
func TestInstanceKeys(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	clock := time.Date(2030, 3, 4, 5, 6, 7, 0, time.UTC)
	db.Now = func() time.Time { return clock }
	app, err := db.CreateApp(ctx, "shop", "starter", 0)
	if err != nil {
		t.Fatal(err)
	}
	appKey, _, err := db.CreateKey(ctx, app.ID, RoleAdmin, "backend")
	if err != nil {
		t.Fatal(err)
	}
	k, plain, err := db.CreateInstanceKey(ctx, "terraform")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plain, "sk_i_") || len(plain) != 53 || k.Prefix != plain[:10] || k.AppID != 0 || k.Role != RoleInstance || k.Name != "terraform" {
		t.Fatalf("CreateInstanceKey=%+v %q", k, plain)
	}
	got, err := db.Authenticate(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || got.AppID != 0 || got.Role != RoleInstance || got.RateLimit != 0 {
		t.Fatalf("Authenticate=%+v, want the instance key without an app", got)
	}

	list, err := db.FindInstanceKeys(ctx)
	if err != nil || len(list) != 1 || list[0].ID != k.ID || list[0].RevokedAt != nil {
		t.Fatalf("FindInstanceKeys=%v %v", list, err)
	}
	appKeys, err := db.FindKeys(ctx, app.ID)
	if err != nil || len(appKeys) != 1 || appKeys[0].ID != appKey.ID {
		t.Fatalf("FindKeys=%v %v: the instance key is no app's", appKeys, err)
	}
	page, p, err := db.FindKeysPage(ctx, app.ID, ListOptions{Limit: 10, Page: 1})
	if err != nil || len(page) != 1 || p.Total != 1 {
		t.Fatalf("FindKeysPage=%v %+v %v", page, p, err)
	}
	_, _, err = db.FindKeysPage(ctx, 999999, ListOptions{Limit: 10, Page: 1})
	wantCode(t, err, ENOTFOUND)

	// No app key is made with the instance role, nor an instance key
	// with a name past the limit.
	_, _, err = db.CreateKey(ctx, app.ID, RoleInstance, "")
	wantCode(t, err, EINVALID)
	_, _, err = db.CreateInstanceKey(ctx, strings.Repeat("n", MaxNameLen+1))
	wantCode(t, err, EINVALID)

	_, err = db.RevokeAppKey(ctx, k.ID)
	wantCode(t, err, ENOTFOUND)
	if _, err := db.Authenticate(ctx, plain); err != nil {
		t.Fatalf("RevokeAppKey refused, yet the key stopped working: %v", err)
	}
	revoked, err := db.RevokeKey(ctx, k.ID)
	if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(clock) || revoked.AppID != 0 {
		t.Fatalf("RevokeKey=%+v %v", revoked, err)
	}
	_, err = db.Authenticate(ctx, plain)
	wantCode(t, err, EINVALID)
	if _, err := db.RevokeAppKey(ctx, appKey.ID); err != nil {
		t.Fatal(err)
	}

	entries, err := db.FindAuditLog(ctx, AuditFilter{Instance: true, ObjectType: ObjectKey})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		if e.AppID != nil || e.Object.ID == nil || *e.Object.ID != k.ID || e.Object.Name != "terraform" || e.Actor.Type != ActorCLI {
			t.Errorf("entry %+v: want the instance key, no app, the command line", e)
		}
		actions = append(actions, e.Action)
	}
	if strings.Join(actions, ",") != "key.revoked,key.created" {
		t.Fatalf("instance log: %v, want the instance key's revocation and creation only", actions)
	}
	appEntries, err := db.FindAuditLog(ctx, AuditFilter{AppID: app.ID, ObjectType: ObjectKey})
	if err != nil || len(appEntries) != 2 {
		t.Fatalf("the app's key entries: %v %v", appEntries, err)
	}
}

// TestInstanceAppInput: the API's app bodies are checked whole, every bad
// field named at once, and a good one is stored as given with its origins.
func TestInstanceAppInput(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	str := func(s string) *string { return &s }
	bad := AppInput{Name: str(strings.Repeat("x", MaxNameLen+1)), Plan: str("gold"), RateLimit: ptr(-1), AllowedOrigins: &[]string{"https://a.example/path"}}
	_, err := db.CreateAppFrom(ctx, bad)
	wantCode(t, err, EINVALID)
	if fe := fieldsIn(err); len(fe) != 4 {
		t.Fatalf("fields %v, want name, plan, rateLimit and allowedOrigins", fe)
	}
	if _, err := db.CreateAppFrom(ctx, AppInput{}); fieldsIn(err)["name"] != "is required" {
		t.Fatalf("no name: %v", err)
	}
	a, err := db.CreateAppFrom(ctx, AppInput{Name: str(" Shop "), AllowedOrigins: &[]string{"HTTPS://Shop.Example:443"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "Shop" || a.Plan != "free" || a.RateLimit != 60 || len(a.AllowedOrigins) != 1 || a.AllowedOrigins[0] != "https://shop.example" {
		t.Fatalf("CreateAppFrom=%+v", a)
	}
	if origins, err := db.AllowedOrigins(ctx, a.ID); err != nil || origins[0] != "https://shop.example" {
		t.Fatalf("stored origins %v %v", origins, err)
	}
	entries, err := db.FindAuditLog(ctx, AuditFilter{AppID: a.ID, Action: "app.created"})
	if err != nil || len(entries) != 1 || string(entries[0].Changes["allowedOrigins"].After) != `["https://shop.example"]` {
		t.Fatalf("app.created: %+v %v", entries, err)
	}
	_, err = db.UpdateAppFrom(ctx, a.ID, AppInput{Name: str(" "), Plan: str("gold")})
	if fe := fieldsIn(err); len(fe) != 2 {
		t.Fatalf("update fields %v, want name and plan", fe)
	}
	u, err := db.UpdateAppFrom(ctx, a.ID, AppInput{Plan: str("pro")})
	if err != nil || u.Plan != "pro" || u.RateLimit != 1000 || u.Name != "Shop" || u.AllowedOrigins[0] != "https://shop.example" {
		t.Fatalf("UpdateAppFrom=%+v %v", u, err)
	}
	_, err = db.UpdateAppFrom(ctx, 999999, AppInput{Plan: str("pro")})
	wantCode(t, err, ENOTFOUND)
	apps, p, err := db.FindAppsPage(ctx, ListOptions{Limit: 1, Page: 1})
	if err != nil || len(apps) != 1 || apps[0].ID != a.ID || p.Total != 1 || p.HasMore {
		t.Fatalf("FindAppsPage=%v %+v %v", apps, p, err)
	}
}

// TestInstanceKeysMigrationDown: migrating below version 16 keeps every
// app key and drops the instance keys, which the old table cannot hold;
// migrating up again takes them.
func TestInstanceKeysMigrationDown(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	app, err := db.CreateApp(ctx, "kept", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, appPlain, err := db.CreateKey(ctx, app.ID, RoleRead, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.CreateInstanceKey(ctx, "dropped"); err != nil {
		t.Fatal(err)
	}
	mustMigrateDownTo(t, db, 15)
	if n := countRows(t, db, `SELECT COUNT(*) FROM api_keys`); n != 1 {
		t.Fatalf("%d keys after down, want the app's one", n)
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if k, err := db.Authenticate(ctx, appPlain); err != nil || k.AppID != app.ID {
		t.Fatalf("the app key after down and up: %+v %v", k, err)
	}
	if _, _, err := db.CreateInstanceKey(ctx, "again"); err != nil {
		t.Fatal(err)
	}
}

// TestAppRetentionMigrationDown: migrating below version 22 drops the
// apps' retentions and keeps the apps; migrating up again gives them back
// as null, the server's.
func TestAppRetentionMigrationDown(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	app, err := db.CreateApp(ctx, "kept", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	d := 30
	if _, err := db.UpdateApp(ctx, app.ID, AppUpdate{EventRetention: &RetentionChange{Days: &d}, FormRetention: &RetentionChange{Days: &d}}); err != nil {
		t.Fatal(err)
	}
	mustMigrateDownTo(t, db, 21)
	if n := countRows(t, db, `SELECT COUNT(*) FROM apps`); n != 1 {
		t.Fatalf("%d apps after down, want 1", n)
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	a, err := db.FindAppSettings(ctx, app.ID)
	if err != nil || a.Name != "kept" || a.EventRetentionDays != nil || a.FormRetentionDays != nil {
		t.Fatalf("after down and up: %+v %v", a, err)
	}
}

// TestUpdateAppRetentionRange: every way in that takes a Go value (the
// command line, the dashboard) is held to 1 to 3650 days by UpdateApp
// itself, and a refused change writes nothing, the good field beside it
// included.
func TestUpdateAppRetentionRange(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	app, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	good := 10
	for _, d := range []int{0, -1, MaxRetentionDays + 1} {
		bad := d
		_, err := db.UpdateApp(ctx, app.ID, AppUpdate{EventRetention: &RetentionChange{Days: &good}, FormRetention: &RetentionChange{Days: &bad}})
		wantCode(t, err, EINVALID)
		if fields := fieldsIn(err); len(fields) != 1 || fields["formRetentionDays"] == "" {
			t.Fatalf("%d: fields %v, want formRetentionDays alone", d, fields)
		}
	}
	for _, s := range []string{"0", "3651", "1.5", "x", "-2"} {
		if _, err := ParseRetentionDays("eventRetentionDays", s); ErrorCode(err) != EINVALID {
			t.Fatalf("ParseRetentionDays(%q): %v, want EINVALID", s, err)
		}
	}
	a, err := db.FindAppSettings(ctx, app.ID)
	if err != nil || a.EventRetentionDays != nil || a.FormRetentionDays != nil {
		t.Fatalf("after refusals: %+v %v", a, err)
	}
	// The column refuses what the code would, should anything bypass it.
	if _, err := db.write.ExecContext(ctx, `UPDATE apps SET event_retention_days = 0 WHERE id = ?`, app.ID); err == nil {
		t.Fatal("the database took a retention of 0 days")
	}
}
