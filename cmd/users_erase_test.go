package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"service/store"
)

// TestCLIUsersEraseExport runs the binary's users export and users erase
// on a database where an end user left a profile and events: the export
// prints their document, the erasure prints what went and leaves the
// export empty, and a second erasure erases 0. Missing flags, an unknown
// app and an over-long id fail with a message and a non-zero exit.
func TestCLIUsersEraseExport(t *testing.T) {
	db := migratedAt(t, cliDB(t))
	ctx := context.Background()
	d, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	app, err := d.CreateApp(ctx, "shop", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	user := "cli-erase-user"
	if _, err := d.IdentifyUser(ctx, app.ID, user, map[string]any{"plan": "pro"}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := d.LogEvent(ctx, app.ID, &store.EventInput{EventID: fmt.Sprint("e", i), UserID: user}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	appFlag := fmt.Sprint(app.ID)

	var doc struct {
		UserID  string         `json:"userId"`
		Profile map[string]any `json:"profile"`
		Events  []any          `json:"events"`
	}
	out, stderr, ok := usersRun(t, "", "users", "export", "--db", db, "--app", appFlag, "--user", user)
	if !ok || json.Unmarshal([]byte(out), &doc) != nil || doc.UserID != user || doc.Profile == nil || len(doc.Events) != 4 {
		t.Fatalf("export: ok=%v %s\n%s", ok, out, stderr)
	}

	var erased struct {
		AppID    int64            `json:"appId"`
		Erased   map[string]int64 `json:"erased"`
		Scrubbed bool             `json:"scrubbed"`
	}
	out, stderr, ok = usersRun(t, "", "users", "erase", "--db", db, "--app", appFlag, "--user", user)
	if !ok || json.Unmarshal([]byte(out), &erased) != nil || erased.AppID != app.ID || erased.Erased["events"] != 4 ||
		erased.Erased["profile"] != 1 || !erased.Scrubbed {
		t.Fatalf("erase: ok=%v %s\n%s", ok, out, stderr)
	}
	out, _, ok = usersRun(t, "", "users", "export", "--db", db, "--app", appFlag, "--user", user)
	if !ok || json.Unmarshal([]byte(out), &doc) != nil || doc.Profile != nil || len(doc.Events) != 0 {
		t.Fatalf("export after the erasure: %s", out)
	}
	out, _, ok = usersRun(t, "", "users", "erase", "--db", db, "--app", appFlag, "--user", user)
	if !ok || json.Unmarshal([]byte(out), &erased) != nil || erased.Erased["events"] != 0 || erased.Erased["profile"] != 0 {
		t.Fatalf("second erase: %s", out)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"NoUser", []string{"--app", appFlag}, "--app and --user are required"},
		{"NoApp", []string{"--user", user}, "--app and --user are required"},
		{"UnknownApp", []string{"--app", "999999", "--user", user}, "app not found"},
		{"LongID", []string{"--app", appFlag, "--user", strings.Repeat("x", store.MaxUserIDLen+1)}, "userId"},
	} {
		for _, sub := range []string{"erase", "export"} {
			t.Run(sub+tc.name, func(t *testing.T) {
				out, stderr, ok := usersRun(t, "", append([]string{"users", sub, "--db", db}, tc.args...)...)
				if ok || !strings.Contains(stderr, tc.want) || strings.Contains(out, "{") {
					t.Fatalf("ok=%v stdout %q stderr %q, want a failure saying %q", ok, out, stderr, tc.want)
				}
			})
		}
	}
}
