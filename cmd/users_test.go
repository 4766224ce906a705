package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"service/store"
)

// usersRun runs the binary with stdin and returns stdout, stderr and
// whether it exited 0.
func usersRun(t *testing.T, stdin string, args ...string) (string, string, bool) {
	t.Helper()
	c := exec.Command(cliBin, args...)
	c.Env = cliEnv()
	c.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	return out.String(), errOut.String(), err == nil
}

func TestCLIUsers(t *testing.T) {
	db := cliDB(t)
	out, stderr, ok := usersRun(t, "a long enough password\n", "users", "create", "--db", db, "--email", "ann@example.com")
	if !ok {
		t.Fatalf("create: %s", stderr)
	}
	var u map[string]any
	if err := json.Unmarshal([]byte(out), &u); err != nil || u["email"] != "ann@example.com" || u["id"] == nil || u["createdAt"] == nil {
		t.Fatalf("create printed %q", out)
	}
	if strings.Contains(out, "password") {
		t.Fatal("the password or its hash was printed")
	}

	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("from a file, long enough\n"), 0o600)
	if _, stderr, ok := usersRun(t, "", "users", "create", "--db", db, "--email", "bob@example.com", "--password-file", pw); !ok {
		t.Fatalf("create from file: %s", stderr)
	}

	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"Taken", "another long password", []string{"--email", "ANN@example.com"}, "email is already taken"},
		{"Short", "short", []string{"--email", "cy@example.com"}, "password must be at least 10 characters"},
		{"NoPassword", "", []string{"--email", "cy@example.com"}, "no password given"},
		{"NoEmail", "a long enough password", nil, "--email is required"},
		{"NoPasswordFlag", "a long enough password", []string{"--email", "cy@example.com", "--password", "x"}, "unknown flag: --password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, ok := usersRun(t, tc.stdin, append([]string{"users", "create", "--db", db}, tc.args...)...)
			if ok || out != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("ok=%v stdout=%q stderr=%q, want failure saying %q", ok, out, stderr, tc.want)
			}
		})
	}

	list := cliJSON(t, nil, "users", "list", "--db", db)
	data, _ := list["data"].([]any)
	if len(data) != 2 {
		t.Fatalf("list=%v", list)
	}
	cliJSON(t, nil, "users", "delete", "--db", db, "--email", "bob@example.com")
	cliFail(t, nil, "users", "delete", "--db", db, "--email", "bob@example.com")
	list = cliJSON(t, nil, "users", "list", "--db", db)
	if data, _ := list["data"].([]any); len(data) != 1 {
		t.Fatalf("after delete: %v", list)
	}
}

// TestCLIUserRoles covers owners and members from the command line: the
// first user is an owner, --owner makes another, grant and revoke change a
// member's role in an app, list shows the roles, and every change is in
// the audit log with the cli actor.
func TestCLIUserRoles(t *testing.T) {
	db := cliDB(t)
	app := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "Shop"), "id")
	appArg := strconv.FormatInt(app, 10)
	for _, u := range []struct {
		email string
		flags []string
		owner bool
	}{
		{"first@example.com", nil, true},
		{"second@example.com", []string{"--owner"}, true},
		{"member@example.com", nil, false},
	} {
		out, stderr, ok := usersRun(t, "a long enough password\n", append([]string{"users", "create", "--db", db, "--email", u.email}, u.flags...)...)
		if !ok {
			t.Fatalf("create %s: %s", u.email, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil || got["owner"] != u.owner {
			t.Fatalf("create %s printed %q, want owner %v", u.email, out, u.owner)
		}
	}

	got := cliJSON(t, nil, "users", "grant", "--db", db, "--email", "member@example.com", "--app", appArg, "--role", "viewer")
	if got["role"] != "viewer" || got["email"] != "member@example.com" || cliNum(t, got, "appId") != app {
		t.Fatalf("grant printed %v", got)
	}
	cliJSON(t, nil, "users", "grant", "--db", db, "--email", "member@example.com", "--app", appArg, "--role", "editor")
	for _, args := range [][]string{
		{"grant", "--email", "member@example.com", "--app", appArg, "--role", "owner"},
		{"grant", "--email", "nobody@example.com", "--app", appArg, "--role", "viewer"},
		{"grant", "--email", "member@example.com", "--app", "999", "--role", "viewer"},
		{"grant", "--email", "member@example.com", "--app", appArg},
		{"revoke", "--email", "member@example.com"},
	} {
		cliFail(t, nil, append([]string{"users", args[0], "--db", db}, args[1:]...)...)
	}

	list := cliJSON(t, nil, "users", "list", "--db", db)
	data, _ := list["data"].([]any)
	if len(data) != 3 {
		t.Fatalf("list %v", list)
	}
	member, _ := data[2].(map[string]any)
	apps, _ := member["apps"].([]any)
	if member["owner"] != false || len(apps) != 1 {
		t.Fatalf("member listed as %v", member)
	}
	if r, _ := apps[0].(map[string]any); r["role"] != "editor" || r["appName"] != "Shop" || cliNum(t, r, "appId") != app {
		t.Fatalf("member's role listed as %v", apps[0])
	}

	cliJSON(t, nil, "users", "revoke", "--db", db, "--email", "member@example.com", "--app", appArg)
	cliFail(t, nil, "users", "revoke", "--db", db, "--email", "member@example.com", "--app", appArg)

	log := cliJSON(t, nil, "audit", "--db", db, "--app", appArg, "--json")
	entries, _ := log["data"].([]any)
	var actions []string
	for _, e := range entries {
		m, _ := e.(map[string]any)
		actor, _ := m["actor"].(map[string]any)
		if actor["type"] != "cli" {
			t.Fatalf("entry %v: actor %v, want cli", m["action"], actor)
		}
		actions = append(actions, m["action"].(string))
	}
	if got, want := strings.Join(actions, " "), "member.removed member.role_changed member.added app.created"; got != want {
		t.Fatalf("app log %q, want %q", got, want)
	}
}

// TestCLIAudit prints the instance's log: as JSON with --json, as a table
// without, newest first, and pages with --before.
func TestCLIAudit(t *testing.T) {
	db := cliDB(t)
	app := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "Shop"), "id")
	if _, stderr, ok := usersRun(t, "a long enough password\n", "users", "create", "--db", db, "--email", "ann@example.com"); !ok {
		t.Fatal(stderr)
	}
	cliJSON(t, nil, "keys", "create", "--db", db, "--app", strconv.FormatInt(app, 10), "--role", "admin")
	cliJSON(t, nil, "users", "delete", "--db", db, "--email", "ann@example.com")

	log := cliJSON(t, nil, "audit", "--db", db, "--json")
	entries, _ := log["data"].([]any)
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	// The key is the app's: owners see the instance's changes here.
	if got, want := strings.Join(actions, " "), "user.deleted user.created app.created"; got != want {
		t.Fatalf("instance log %q, want %q", got, want)
	}
	first, _ := entries[0].(map[string]any)
	page := cliJSON(t, nil, "audit", "--db", db, "--json", "--before", strconv.FormatInt(cliNum(t, first, "id"), 10), "--limit", "1")
	if p, _ := page["data"].([]any); len(p) != 1 || p[0].(map[string]any)["action"] != "user.created" {
		t.Fatalf("page %v", page)
	}

	r := cliRun(t, nil, "audit", "--db", db)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "user.deleted") ||
		!strings.Contains(lines[1], `user `) || !strings.Contains(lines[1], `"ann@example.com"`) || !strings.Contains(lines[3], `name: "Shop"`) {
		t.Fatalf("table (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	cliFail(t, nil, "audit", "--db", db, "--limit", "0")
}

// TestCLIUsersSetPassword sets a password from stdin and from a file, as
// scripts do: the old one stops working, every session of the user ends
// and no other user's, and the change is audited without the password.
func TestCLIUsersSetPassword(t *testing.T) {
	db := cliDB(t)
	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		if _, stderr, ok := usersRun(t, "an old long password\n", "users", "create", "--db", db, "--email", email); !ok {
			t.Fatalf("create %s: %s", email, stderr)
		}
	}
	ctx := context.Background()
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	users, err := s.FindDashboardUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[string]string{}
	for _, u := range users {
		if sessions[u.Email], _, err = s.CreateDashboardSession(ctx, u.ID, time.Hour); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"Short", "short\n", []string{"--email", "bob@example.com"}, "password must be at least 10 characters"},
		{"UnknownEmail", "a new long password\n", []string{"--email", "cy@example.com"}, "dashboard user not found"},
		{"NoPassword", "", []string{"--email", "bob@example.com"}, "no password given"},
		{"NoEmail", "a new long password\n", nil, "--email is required"},
		{"NoPasswordFlag", "", []string{"--email", "bob@example.com", "--password", "a new long password"}, "unknown flag: --password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, ok := usersRun(t, tc.stdin, append([]string{"users", "set-password", "--db", db}, tc.args...)...)
			if ok || out != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("ok=%v stdout=%q stderr=%q, want failure saying %q", ok, out, stderr, tc.want)
			}
		})
	}
	if _, err := s.AuthenticateDashboardUser(ctx, "bob@example.com", "an old long password"); err != nil {
		t.Fatalf("a refused set-password changed the password: %v", err)
	}

	out, stderr, ok := usersRun(t, "bobs new password\nignored second line\n", "users", "set-password", "--db", db, "--email", "bob@example.com")
	if !ok || stderr != "" {
		t.Fatalf("set-password: ok=%v stderr=%q (a pipe gets no prompt)", ok, stderr)
	}
	if want := `{"email":"bob@example.com","passwordSet":true,"sessionsEnded":1}` + "\n"; out != want {
		t.Fatalf("stdout=%q, want %q", out, want)
	}
	if _, err := s.AuthenticateDashboardUser(ctx, "bob@example.com", "bobs new password"); err != nil {
		t.Fatalf("new password: %v", err)
	}
	if _, err := s.AuthenticateDashboardUser(ctx, "bob@example.com", "an old long password"); err != store.ErrBadCredentials {
		t.Fatalf("old password: err=%v, want refused", err)
	}
	if _, err := s.FindDashboardSession(ctx, sessions["bob@example.com"]); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("bob's session after set-password: err=%v, want ended", err)
	}
	if _, err := s.FindDashboardSession(ctx, sessions["ann@example.com"]); err != nil {
		t.Fatalf("ann's session after bob's set-password: %v", err)
	}

	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("from a file, long enough\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := cliJSON(t, nil, "users", "set-password", "--db", db, "--email", "ann@example.com", "--password-file", pw)
	if got["sessionsEnded"] != float64(1) {
		t.Fatalf("from a file: %v", got)
	}
	if _, err := s.AuthenticateDashboardUser(ctx, "ann@example.com", "from a file, long enough"); err != nil {
		t.Fatalf("password from the file: %v", err)
	}

	log := cliJSON(t, nil, "audit", "--db", db, "--json")
	all, _ := log["data"].([]any)
	raw, _ := json.Marshal(all)
	if strings.Contains(string(raw), "long enough") || strings.Contains(string(raw), "new password") {
		t.Fatalf("the audit log holds a password: %s", raw)
	}
	var changed []string
	for _, e := range all {
		m, _ := e.(map[string]any)
		if m["action"] == "user.password_changed" {
			actor, _ := m["actor"].(map[string]any)
			obj, _ := m["object"].(map[string]any)
			changed = append(changed, fmt.Sprint(actor["type"], " ", obj["name"]))
		}
	}
	if got, want := strings.Join(changed, ", "), "cli ann@example.com, cli bob@example.com"; got != want {
		t.Fatalf("password changes logged: %q, want %q", got, want)
	}
}
