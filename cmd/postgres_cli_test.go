package cmd_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"service/migrations"
)

// TestCLIPostgresUnreachable: a PostgreSQL URL whose server does not
// answer fails every command with an error that names the host and port
// and never the password, within the 10 s bound, whether nothing listens
// or something accepts and then says nothing.
func TestCLIPostgresUnreachable(t *testing.T) {
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := refused.Addr().String()
	refused.Close() // nothing listens there now

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()

	const password = "hunter2-very-secret"
	for _, tc := range []struct {
		name, addr string
		args       []string
	}{
		{"RefusedServe", refusedAddr, []string{"serve", "--addr", "127.0.0.1:0"}},
		{"RefusedApps", refusedAddr, []string{"apps", "list"}},
		{"RefusedMigrate", refusedAddr, []string{"migrate", "version"}},
		{"SilentKeys", silent.Addr().String(), []string{"keys", "list", "--app", "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := "postgres://service:" + password + "@" + tc.addr + "/service?sslmode=disable"
			start := time.Now()
			r := cliRun(t, nil, append(tc.args, "--db", url)...)
			took := time.Since(start)
			if r.code == 0 {
				t.Fatalf("exit 0, want failure; stdout=%s", r.stdout)
			}
			if !strings.Contains(r.stderr, tc.addr) {
				t.Fatalf("stderr does not name %s: %q", tc.addr, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, password) {
				t.Fatalf("the password is printed: %q", r.stderr)
			}
			if strings.Contains(r.stderr, "panic") || took > 15*time.Second {
				t.Fatalf("after %v: %q", took, r.stderr)
			}
		})
	}
}

// TestCLIPostgresFileTools: backup and restore copy SQLite files and say
// so for a PostgreSQL URL, naming PostgreSQL's tools; migrate schema prints
// the schema of the store the URL names.
func TestCLIPostgresFileTools(t *testing.T) {
	url := "postgres://service:pw@127.0.0.1:1/service"
	for _, args := range [][]string{
		{"backup", "--db", url, "--out", t.TempDir() + "/copy.db"},
		{"restore", "--db", url, "--from", t.TempDir() + "/copy.db"},
	} {
		r := cliRun(t, nil, args...)
		if r.code == 0 || !strings.Contains(r.stderr, "pg_dump") || !strings.Contains(r.stderr, "pg_restore") {
			t.Fatalf("%v: exit %d, stderr %q; want a failure naming pg_dump and pg_restore", args[0], r.code, r.stderr)
		}
	}
	if got := cliRun(t, nil, "migrate", "schema", "--db", url).stdout; got != migrations.PostgresSchema || !strings.Contains(got, "CREATE TABLE public.events") {
		t.Fatalf("migrate schema --db postgres://… printed %.200q…, want the PostgreSQL schema", got)
	}
	if got := cliRun(t, nil, "migrate", "schema").stdout; !strings.Contains(got, "WITHOUT ROWID") {
		t.Fatalf("migrate schema printed %.200q…, want the SQLite schema", got)
	}
}
