package cmd_test

import (
	"context"
	"slices"
	"testing"

	"service/store"
)

func TestCLIAppsUpdateAllowedOrigins(t *testing.T) {
	db := cliDB(t)
	cliJSON(t, nil, "apps", "create", "--db", db, "--name", "N")
	for _, tc := range []struct {
		arg  string
		want string
	}{
		{"https://a.example,https://b.example", `{"id":1,"name":"N","plan":"free","rateLimit":60,"allowedOrigins":["https://a.example","https://b.example"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{" HTTPS://A.example:8443/ , https://a.example:8443", `{"id":1,"name":"N","plan":"free","rateLimit":60,"allowedOrigins":["https://a.example:8443"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{"*", `{"id":1,"name":"N","plan":"free","rateLimit":60,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}`},
		// Browsers send no default port: an entry naming it would never match.
		{"https://a.example:443,http://b.example:80,https://[::1]:443,http://c.example:443", `{"id":1,"name":"N","plan":"free","rateLimit":60,"allowedOrigins":["https://a.example","http://b.example","https://[::1]","http://c.example:443"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{"https://a.example,HTTPS://A.EXAMPLE:443,https://a.example:", `{"id":1,"name":"N","plan":"free","rateLimit":60,"allowedOrigins":["https://a.example"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{"http://localhost:3000", `{"id":1,"name":"N","plan":"free","rateLimit":60,"allowedOrigins":["http://localhost:3000"],"eventRetentionDays":null,"formRetentionDays":null}`},
	} {
		r := cliRun(t, nil, "apps", "update", "--db", db, "--id", "1", "--allowed-origins", tc.arg)
		if r.code != 0 {
			t.Fatalf("%q: exit %d; stderr=%s", tc.arg, r.code, r.stderr)
		}
		if got, want := r.stdout, tc.want+"\n"; got != want {
			t.Fatalf("%q: stdout=%q, want %q", tc.arg, got, want)
		}
	}
	for _, args := range [][]string{
		{"--id", "1", "--allowed-origins", ""},
		{"--id", "1", "--allowed-origins", "a.example"},
		{"--id", "1", "--allowed-origins", "ftp://a.example"},
		{"--id", "1", "--allowed-origins", "https://a.example/path"},
		{"--id", "1", "--allowed-origins", "https://a.example,https://"},
		{"--id", "1"},
		{"--id", "2", "--allowed-origins", "*"},
		{"--allowed-origins", "*"},
	} {
		cliFail(t, nil, append([]string{"apps", "update", "--db", db}, args...)...)
	}
	// Failures changed nothing.
	d, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.AllowedOrigins(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://localhost:3000"}; !slices.Equal(got, want) {
		t.Fatalf("origins=%v, want %v", got, want)
	}
}
