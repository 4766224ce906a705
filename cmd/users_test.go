package cmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
