package cmd_test

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"service/internal/pgtest"
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

// TestCLIPostgresMissingDatabase: a URL naming a database that does not
// exist fails with that cause first and says to create it with createdb,
// whether or not the URL says sslmode=disable: under the default
// (prefer) a server without TLS refuses the first attempt, and that
// refusal used to come first. Run against a stand-in server that speaks
// PostgreSQL's protocol as a local server without TLS does, and in the
// PostgreSQL run against the real server too.
func TestCLIPostgresMissingDatabase(t *testing.T) {
	servers := map[string]string{"StandIn": pgMissingDatabaseServer(t)}
	if admin := os.Getenv(pgtest.ServerEnv); admin != "" {
		u, err := url.Parse(admin)
		if err != nil {
			t.Fatal(err)
		}
		servers["Server"] = u.Host
	}
	name := fmt.Sprintf("no_such_db_%d", os.Getpid())
	for server, host := range servers {
		for _, query := range []string{"", "?sslmode=disable"} {
			for _, args := range [][]string{{"apps", "list"}, {"serve", "--addr", "127.0.0.1:0"}} {
				t.Run(fmt.Sprintf("%s/%s/%q", server, args[0], query), func(t *testing.T) {
					r := cliRun(t, nil, append(args, "--db", "postgres://postgres@"+host+"/"+name+query)...)
					lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
					if r.code == 0 || len(lines) != 1 {
						t.Fatalf("exit %d, stderr %q; want a failure in one line", r.code, r.stderr)
					}
					for _, want := range []string{"postgres at " + host + `: database "` + name + `" does not exist`,
						"create it with createdb", "createdb -h " + strings.Split(host, ":")[0]} {
						if !strings.Contains(r.stderr, want) {
							t.Fatalf("stderr %q does not say %q", r.stderr, want)
						}
					}
					if strings.Contains(r.stderr, "tls") {
						t.Fatalf("stderr %q speaks of TLS before the cause", r.stderr)
					}
				})
			}
		}
	}
}

// pgMissingDatabaseServer answers as a PostgreSQL server without TLS
// that has no database of the name asked for: it refuses TLS, then ends
// the startup with FATAL 3D000. It returns its address.
func pgMissingDatabaseServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				be := pgproto3.NewBackend(c, c)
				for {
					msg, err := be.ReceiveStartupMessage()
					if err != nil {
						return
					}
					switch m := msg.(type) {
					case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
						if _, err := c.Write([]byte("N")); err != nil {
							return
						}
					case *pgproto3.StartupMessage:
						be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "3D000",
							Message: fmt.Sprintf("database %q does not exist", m.Parameters["database"])})
						_ = be.Flush()
						return
					default:
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
