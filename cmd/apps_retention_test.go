package cmd_test

import (
	"context"
	"strings"
	"testing"

	"service/store"
)

// TestCLIAppsUpdateRetention sets an app's retentions through the real
// binary: days, then null back to the server's; bad values fail with a
// message and change nothing; every change is audited as the command
// line's, with the old and new values.
func TestCLIAppsUpdateRetention(t *testing.T) {
	db := cliDB(t)
	cliJSON(t, nil, "apps", "create", "--db", db, "--name", "N")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--event-retention-days", "30", "--form-retention-days", "7"}, `"eventRetentionDays":30,"formRetentionDays":7}`},
		{[]string{"--event-retention-days", "3650"}, `"eventRetentionDays":3650,"formRetentionDays":7}`},
		{[]string{"--form-retention-days", "null"}, `"eventRetentionDays":3650,"formRetentionDays":null}`},
		{[]string{"--event-retention-days", "null", "--form-retention-days", "1"}, `"eventRetentionDays":null,"formRetentionDays":1}`},
	} {
		r := cliRun(t, nil, append([]string{"apps", "update", "--db", db, "--id", "1"}, tc.args...)...)
		want := `{"id":1,"name":"N","plan":"free","rateLimit":60,"allowedOrigins":["*"],` + tc.want + "\n"
		if r.code != 0 || r.stdout != want {
			t.Fatalf("%v: exit %d stdout=%q stderr=%s, want %q", tc.args, r.code, r.stdout, r.stderr, want)
		}
	}
	if list := cliRun(t, nil, "apps", "list", "--db", db).stdout; !strings.Contains(list, `"eventRetentionDays":null,"formRetentionDays":1}`) {
		t.Fatalf("apps list=%s, want the retentions", list)
	}
	for _, args := range [][]string{
		{"--event-retention-days", "0"},
		{"--event-retention-days", "3651"},
		{"--form-retention-days", "1.5"},
		{"--form-retention-days", "-3"},
		{"--event-retention-days", "thirty"},
		{"--event-retention-days", ""},
		{"--event-retention-days", "30", "--form-retention-days", "0"},
	} {
		r := cliRun(t, nil, append([]string{"apps", "update", "--db", db, "--id", "1"}, args...)...)
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "retention-days") || !strings.Contains(r.stderr, "3650") {
			t.Fatalf("%v: exit %d stdout=%q stderr=%q, want a failure naming the flag and the range", args, r.code, r.stdout, r.stderr)
		}
	}

	ctx := context.Background()
	d, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a, err := d.FindAppSettings(ctx, 1)
	if err != nil || a.EventRetentionDays != nil || a.FormRetentionDays == nil || *a.FormRetentionDays != 1 {
		t.Fatalf("after the failures: %+v %v, want null and 1 as last set", a, err)
	}
	entries, err := d.FindAuditLog(ctx, store.AuditFilter{AppID: 1, Action: "app.updated"})
	if err != nil || len(entries) != 4 {
		t.Fatalf("%d app.updated entries, %v; want 4", len(entries), err)
	}
	// Newest first: the last change set events back to null and forms to 1.
	last := entries[0]
	if last.Actor.Type != store.ActorCLI || string(last.Changes["eventRetentionDays"].Before) != "3650" ||
		string(last.Changes["eventRetentionDays"].After) != "null" || string(last.Changes["formRetentionDays"].Before) != "null" ||
		string(last.Changes["formRetentionDays"].After) != "1" || len(last.Changes) != 2 {
		t.Fatalf("last entry: actor %+v changes %+v", last.Actor, last.Changes)
	}
}
