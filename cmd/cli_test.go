package cmd_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, to check the file from outside

	"service/internal/fixture"
	"service/internal/pgtest"
	"service/internal/storetest"
	"service/store"
)

// cliBin is the real binary, built once for every test of this file.
var cliBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "service-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cliBin = filepath.Join(dir, "service")
	build := exec.Command("go", "build", "-o", cliBin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cliEnv is the test's environment without SERVICE_* variables, which
// would otherwise configure the binary behind the test's back.
func cliEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SERVICE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

type cliResult struct {
	stdout, stderr string
	code           int
}

// cliRun runs the binary to completion.
func cliRun(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cliBin, args...)
	c.Env = env
	if env == nil {
		c.Env = cliEnv()
	}
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return cliResult{out.String(), errOut.String(), code}
}

// cliJSON runs a command that must succeed and print exactly one JSON
// object, and returns it.
func cliJSON(t *testing.T, env []string, args ...string) map[string]any {
	t.Helper()
	r := cliRun(t, env, args...)
	if r.code != 0 {
		t.Fatalf("%v: exit %d; stderr=%s", args, r.code, r.stderr)
	}
	if strings.Count(r.stdout, "\n") != 1 || !strings.HasSuffix(r.stdout, "\n") {
		t.Fatalf("%v: stdout is not one line: %q", args, r.stdout)
	}
	d := json.NewDecoder(strings.NewReader(r.stdout))
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		t.Fatalf("%v: stdout is not a JSON object: %q (%v)", args, r.stdout, err)
	}
	if _, err := d.Token(); err != io.EOF {
		t.Fatalf("%v: more than one JSON value on stdout: %q", args, r.stdout)
	}
	return m
}

// cliFail runs a command that must fail with a message and no stdout.
func cliFail(t *testing.T, env []string, args ...string) {
	t.Helper()
	r := cliRun(t, env, args...)
	if r.code == 0 {
		t.Fatalf("%v: exit 0, want failure; stdout=%s", args, r.stdout)
	}
	if r.stdout != "" {
		t.Fatalf("%v: failure printed on stdout: %q", args, r.stdout)
	}
	if strings.TrimSpace(r.stderr) == "" {
		t.Fatalf("%v: failure without a message on stderr", args)
	}
}

func cliNum(t *testing.T, m map[string]any, k string) int64 {
	t.Helper()
	f, ok := m[k].(float64)
	if !ok {
		t.Fatalf("%s=%v (%T) in %v, want a number", k, m[k], m[k], m)
	}
	return int64(f)
}

// cliDB is a migrated database of the test's own, as serve or migrate would
// leave it: the other commands refuse a SQLite file that is not there.
func cliDB(t *testing.T) string { return storetest.DB(t, filepath.Join(t.TempDir(), "cli.db")) }

// migratedAt puts a migrated database at the SQLite path db when nothing
// is there yet, as serve's first start would, and returns db; a
// PostgreSQL URL is returned as it is.
func migratedAt(t *testing.T, db string) string {
	t.Helper()
	if store.IsPostgresURL(db) {
		return db
	}
	return pgtest.MigratedSQLite(t, db, storetest.Migrate)
}

func TestCLIAppsCreate(t *testing.T) {
	db := cliDB(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "N"}, `{"id":1,"name":"N","plan":"free","rateLimit":60}`},
		{[]string{"--name", "P", "--plan", "pro"}, `{"id":2,"name":"P","plan":"pro","rateLimit":1000}`},
		{[]string{"--name", "S", "--plan", "starter"}, `{"id":3,"name":"S","plan":"starter","rateLimit":300}`},
		{[]string{"--name", "E", "--plan", "enterprise", "--rate-limit", "5000"}, `{"id":4,"name":"E","plan":"enterprise","rateLimit":5000}`},
		{[]string{"--name", "Two words"}, `{"id":5,"name":"Two words","plan":"free","rateLimit":60}`},
	} {
		r := cliRun(t, nil, append([]string{"apps", "create", "--db", db}, tc.args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d; stderr=%s", tc.args, r.code, r.stderr)
		}
		if got, want := r.stdout, tc.want+"\n"; got != want {
			t.Fatalf("%v: stdout=%q, want %q", tc.args, got, want)
		}
	}
	for _, args := range [][]string{
		{"--name", "X", "--plan", "gold"},
		{"--name", "X", "--plan", "FREE"},
		{"--name", "X", "--rate-limit", "-1"},
		{"--name", "X", "--rate-limit", "many"},
		{},
		{"--name", "X", "extra"},
	} {
		cliFail(t, nil, append([]string{"apps", "create", "--db", db}, args...)...)
	}
	// Failures created nothing: the next app is number 6.
	if got := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "next"), "id"); got != 6 {
		t.Fatalf("id=%d, want 6", got)
	}
}

func TestCLIKeys(t *testing.T) {
	db := cliDB(t)
	cliJSON(t, nil, "apps", "create", "--db", db, "--name", "N")
	var plaintexts []string
	for i, role := range []string{"admin", "read", "client"} {
		m := cliJSON(t, nil, "keys", "create", "--db", db, "--app", "1", "--role", role, "--name", role+" key")
		if got, want := cliNum(t, m, "id"), int64(i+1); got != want {
			t.Fatalf("id=%d, want %d", got, want)
		}
		if got, want := cliNum(t, m, "appId"), int64(1); got != want {
			t.Fatalf("appId=%d, want %d", got, want)
		}
		if got, want := m["role"], role; got != want {
			t.Fatalf("role=%v, want %v", got, want)
		}
		key, _ := m["key"].(string)
		if !strings.HasPrefix(key, "sk_") || len(key) < 32 {
			t.Fatalf("key=%q, want a long sk_ key", key)
		}
		plaintexts = append(plaintexts, key)
	}
	for _, args := range [][]string{
		{"--app", "1", "--role", "owner"},
		{"--app", "1"},
		{"--app", "99", "--role", "admin"},
		{"--role", "admin"},
	} {
		cliFail(t, nil, append([]string{"keys", "create", "--db", db}, args...)...)
	}

	list := func() (string, []any) {
		t.Helper()
		r := cliRun(t, nil, "keys", "list", "--db", db, "--app", "1")
		if r.code != 0 {
			t.Fatalf("keys list: exit %d; %s", r.code, r.stderr)
		}
		for _, p := range plaintexts {
			if strings.Contains(r.stdout, p) || strings.Contains(r.stdout, p[len(p)-20:]) {
				t.Fatalf("keys list shows a plaintext key: %s", r.stdout)
			}
		}
		m := cliJSON(t, nil, "keys", "list", "--db", db, "--app", "1")
		data, _ := m["data"].([]any)
		return r.stdout, data
	}
	if _, data := list(); len(data) != 3 {
		t.Fatalf("keys list has %d keys, want 3", len(data))
	}

	m := cliJSON(t, nil, "keys", "revoke", "--db", db, "--id", "1")
	if got, want := cliNum(t, m, "id"), int64(1); got != want {
		t.Fatalf("revoke: id=%d, want %d", got, want)
	}
	if s, _ := m["revokedAt"].(string); s == "" {
		t.Fatalf("revoke: revokedAt=%v, want a timestamp", m["revokedAt"])
	}
	if _, ok := m["key"]; ok {
		t.Fatalf("revoke prints a key: %v", m)
	}
	_, data := list()
	for _, d := range data {
		k := d.(map[string]any)
		revoked := k["revokedAt"] != nil
		if want := k["id"] == 1.0; revoked != want {
			t.Fatalf("key %v: revoked=%v, want %v", k["id"], revoked, want)
		}
	}
	cliFail(t, nil, "keys", "revoke", "--db", db, "--id", "99")
	cliFail(t, nil, "keys", "list", "--db", db, "--app", "99")

	// The database agrees: the revoked key no longer authenticates.
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Authenticate(context.Background(), plaintexts[0]); err == nil {
		t.Fatal("revoked key still authenticates")
	}
	if k, err := s.Authenticate(context.Background(), plaintexts[2]); err != nil || k.Role != "client" {
		t.Fatalf("client key: %+v, %v", k, err)
	}
}

func TestCLIEnvDB(t *testing.T) {
	db := cliDB(t)
	env := cliEnv("SERVICE_DB=" + db)
	if got, want := cliRun(t, env, "apps", "create", "--name", "E").stdout, `{"id":1,"name":"E","plan":"free","rateLimit":60}`+"\n"; got != want {
		t.Fatalf("stdout=%q, want %q", got, want)
	}
	if list := cliRun(t, nil, "apps", "list", "--db", db).stdout; !strings.Contains(list, `"name":"E"`) {
		t.Fatalf("SERVICE_DB was not used: apps list --db gave %s", list)
	}
	cliJSON(t, env, "keys", "create", "--app", "1", "--role", "read")
	m := cliJSON(t, env, "keys", "list", "--app", "1")
	if data, _ := m["data"].([]any); len(data) != 1 {
		t.Fatalf("keys list=%v, want one key", m)
	}
	other := cliDB(t)
	cliJSON(t, env, "apps", "create", "--db", other, "--name", "F")
	if got := cliNum(t, cliJSON(t, env, "apps", "create", "--name", "G"), "id"); got != 2 {
		t.Fatalf("--db did not override SERVICE_DB: next id in env db=%d, want 2", got)
	}
	cliFail(t, cliEnv("SERVICE_DB="+db, "SERVICE_LOG_LEVEL=loud"), "serve", "--addr", "127.0.0.1:0")
}

// The environment configures the server, never what a command acts on: a
// stray SERVICE_ID must not choose the key to revoke.
func TestCLIEnvNeverNamesWhatACommandActsOn(t *testing.T) {
	db := cliDB(t)
	app := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "A"), "id")
	key := cliNum(t, cliJSON(t, nil, "keys", "create", "--db", db, "--app", fmt.Sprint(app), "--role", "admin"), "id")
	stray := cliEnv("SERVICE_DB="+db, fmt.Sprint("SERVICE_ID=", key), fmt.Sprint("SERVICE_APP=", app),
		"SERVICE_ROLE=admin", "SERVICE_NAME=from-env", "SERVICE_PLAN=pro", "SERVICE_RATE_LIMIT=lots", "SERVICE_FORCE=true")
	cliFail(t, stray, "keys", "revoke")
	cliFail(t, stray, "keys", "create")
	cliFail(t, stray, "apps", "create")
	cliFail(t, stray, "apps", "delete")
	if got := cliJSON(t, stray, "apps", "create", "--name", "B"); got["plan"] != "free" || got["name"] != "B" || cliNum(t, got, "rateLimit") != 60 {
		t.Fatalf("apps create read the environment: %v", got)
	}
	k := cliJSON(t, stray, "keys", "create", "--app", fmt.Sprint(app), "--role", "read")
	if _, ok := k["name"]; ok {
		t.Fatalf("keys create took SERVICE_NAME: %v", k)
	}
	for _, item := range cliJSON(t, stray, "keys", "list", "--app", fmt.Sprint(app))["data"].([]any) {
		if m := item.(map[string]any); m["revokedAt"] != nil {
			t.Fatalf("a key was revoked: %v", m)
		}
	}

	// --help lists exactly the variables a command reads.
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"serve"}, []string{"SERVICE_DB", "SERVICE_ADDR", "SERVICE_LOG_LEVEL", "SERVICE_SCHEDULER_INTERVAL", "SERVICE_WEBHOOK_TIMEOUT", "SERVICE_PPROF_ADDR"}, nil},
		{[]string{"keys", "revoke"}, []string{"SERVICE_DB"}, []string{"SERVICE_ID"}},
		{[]string{"keys", "create"}, []string{"SERVICE_DB"}, []string{"SERVICE_APP", "SERVICE_ROLE", "SERVICE_NAME"}},
		{[]string{"apps", "create"}, []string{"SERVICE_DB"}, []string{"SERVICE_NAME", "SERVICE_PLAN", "SERVICE_RATE_LIMIT"}},
		{[]string{"apps", "update"}, []string{"SERVICE_DB"}, []string{"SERVICE_ID", "SERVICE_NAME"}},
		{[]string{"apps", "delete"}, []string{"SERVICE_DB"}, []string{"SERVICE_ID", "SERVICE_FORCE"}},
		{[]string{"migrate"}, []string{"SERVICE_DB"}, nil},
		{[]string{"seed"}, []string{"SERVICE_DB"}, nil},
	} {
		r := cliRun(t, nil, append(tc.args, "--help")...)
		if r.code != 0 || !strings.Contains(r.stdout, "Environment variables") {
			t.Fatalf("%v --help: exit %d\n%s", tc.args, r.code, r.stdout)
		}
		for _, v := range tc.want {
			if !strings.Contains(r.stdout, v) {
				t.Fatalf("%v --help does not list %s:\n%s", tc.args, v, r.stdout)
			}
		}
		for _, v := range tc.not {
			if strings.Contains(r.stdout, v) {
				t.Fatalf("%v --help lists %s:\n%s", tc.args, v, r.stdout)
			}
		}
	}
}

// keys create and keys list show a key in one shape: name present in
// both when the key has one, absent in both when it has none.
func TestCLIKeysOneShape(t *testing.T) {
	db := cliDB(t)
	cliJSON(t, nil, "apps", "create", "--db", db, "--name", "N")
	named := cliJSON(t, nil, "keys", "create", "--db", db, "--app", "1", "--role", "admin", "--name", "ci")
	unnamed := cliJSON(t, nil, "keys", "create", "--db", db, "--app", "1", "--role", "read")
	if named["name"] != "ci" {
		t.Fatalf("create with --name: %v", named)
	}
	if _, ok := unnamed["name"]; ok {
		t.Fatalf("create without --name: %v", unnamed)
	}
	items := map[int64]map[string]any{}
	for _, it := range cliJSON(t, nil, "keys", "list", "--db", db, "--app", "1")["data"].([]any) {
		m := it.(map[string]any)
		items[cliNum(t, m, "id")] = m
	}
	for _, created := range []map[string]any{named, unnamed} {
		listed := items[cliNum(t, created, "id")]
		for _, k := range []string{"id", "appId", "role", "name"} {
			c, inCreate := created[k]
			l, inList := listed[k]
			if inCreate != inList || c != l {
				t.Fatalf("%s: create %v (%v), list %v (%v)", k, c, inCreate, l, inList)
			}
		}
	}
}

func TestCLIAppsListUpdateDelete(t *testing.T) {
	db := cliDB(t)
	a := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "One"), "id")
	b := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "Two", "--plan", "pro"), "id")
	list := func() string {
		t.Helper()
		r := cliRun(t, nil, "apps", "list", "--db", db)
		if r.code != 0 {
			t.Fatalf("apps list: %s", r.stderr)
		}
		return strings.TrimSpace(r.stdout)
	}
	if got, want := list(), fmt.Sprintf(`{"data":[{"id":%d,"name":"One","plan":"free","rateLimit":60,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null},{"id":%d,"name":"Two","plan":"pro","rateLimit":1000,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}]}`, a, b); got != want {
		t.Fatalf("apps list=%s, want %s", got, want)
	}

	id := fmt.Sprint(a)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "Renamed"}, `{"id":%d,"name":"Renamed","plan":"free","rateLimit":60,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{[]string{"--plan", "starter"}, `{"id":%d,"name":"Renamed","plan":"starter","rateLimit":300,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{[]string{"--rate-limit", "500"}, `{"id":%d,"name":"Renamed","plan":"starter","rateLimit":500,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{[]string{"--plan", "enterprise", "--rate-limit", "20000"}, `{"id":%d,"name":"Renamed","plan":"enterprise","rateLimit":20000,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}`},
		{[]string{"--rate-limit", "0"}, `{"id":%d,"name":"Renamed","plan":"enterprise","rateLimit":10000,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}`},
	} {
		r := cliRun(t, nil, append([]string{"apps", "update", "--db", db, "--id", id}, tc.args...)...)
		if got, want := strings.TrimSpace(r.stdout), fmt.Sprintf(tc.want, a); r.code != 0 || got != want {
			t.Fatalf("apps update %v: %s (exit %d, %s), want %s", tc.args, got, r.code, r.stderr, want)
		}
	}
	for _, args := range [][]string{{}, {"--id", "99", "--name", "x"}, {"--id", id, "--plan", "gold"}, {"--id", id, "--name", " "}, {"--id", id, "--rate-limit", "-1"}} {
		cliFail(t, nil, append([]string{"apps", "update", "--db", db}, args...)...)
	}

	// An app with only keys goes at once; one with data needs --force.
	cliJSON(t, nil, "keys", "create", "--db", db, "--app", fmt.Sprint(b), "--role", "admin")
	if m := cliJSON(t, nil, "apps", "delete", "--db", db, "--id", fmt.Sprint(b)); m["deleted"] != true {
		t.Fatalf("delete=%v", m)
	}
	seed := cliJSON(t, nil, "seed", "--db", db)
	full := fmt.Sprint(cliNum(t, seed, "appId"))
	r := cliRun(t, nil, "apps", "delete", "--db", db, "--id", full)
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "--force") || !strings.Contains(r.stderr, "campaigns") {
		t.Fatalf("delete without --force: exit %d stdout=%q stderr=%q", r.code, r.stdout, r.stderr)
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Authenticate(ctx, seed["adminKey"].(string)); err != nil {
		t.Fatalf("refused delete removed the key: %v", err)
	}
	m := cliJSON(t, nil, "apps", "delete", "--db", db, "--id", full, "--force")
	if data, _ := m["data"].(map[string]any); m["deleted"] != true || data["campaigns"] != float64(1) {
		t.Fatalf("forced delete=%v", m)
	}
	if got, want := list(), fmt.Sprintf(`{"data":[{"id":%d,"name":"Renamed","plan":"enterprise","rateLimit":10000,"allowedOrigins":["*"],"eventRetentionDays":null,"formRetentionDays":null}]}`, a); got != want {
		t.Fatalf("after deletes apps list=%s, want %s", got, want)
	}
	// A fresh handle: the first one caches keys it has seen for a second.
	fresh, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := fresh.Authenticate(ctx, seed["adminKey"].(string)); err == nil {
		t.Fatal("the deleted app's key still authenticates")
	}
	raw, err := store.OpenSQL(db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var left int
	for table, where := range map[string]string{
		"campaigns": "app_id = " + full, "content_views": "app_id = " + full, "audiences": "app_id = " + full,
		"users": "app_id = " + full, "events": "app_id = " + full, "webhooks": "app_id = " + full,
		"form_submissions": "app_id = " + full, "api_keys": "app_id = " + full,
		"campaign_variants": "campaign_id NOT IN (SELECT id FROM campaigns)",
		"assignments":       "campaign_id NOT IN (SELECT id FROM campaigns)",
	} {
		var n int
		if err := raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE "+where).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		left += n
	}
	if left != 0 {
		t.Fatalf("%d rows of the deleted app left", left)
	}
	cliFail(t, nil, "apps", "delete", "--db", db, "--id", full)
}

func TestCLIMigrate(t *testing.T) {
	pattern := "../migrations/*.up.sql"
	if pgtest.Selected() {
		pattern = "../migrations/postgres/*.up.sql"
	}
	ups, err := filepath.Glob(pattern)
	if err != nil || len(ups) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	// prev is the version before latest; numbers may have gaps.
	latest, prev := 0, 0
	for _, u := range ups {
		n, err := strconv.Atoi(strings.SplitN(filepath.Base(u), "_", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		if n > latest {
			prev, latest = latest, n
		} else if n > prev {
			prev = n
		}
	}
	db := pgtest.EmptyDB(t, filepath.Join(t.TempDir(), "cli.db"))
	version := func(args ...string) {
		t.Helper()
		m := cliJSON(t, nil, append([]string{"migrate", "--db", db}, args...)...)
		if m["dirty"] != false {
			t.Fatalf("migrate %v: dirty=%v", args, m["dirty"])
		}
	}
	want := func(args []string, v int) {
		t.Helper()
		m := cliJSON(t, nil, append([]string{"migrate", "--db", db}, args...)...)
		if got := cliNum(t, m, "version"); got != int64(v) || m["dirty"] != false {
			t.Fatalf("migrate %v: %v, want version %d clean", args, m, v)
		}
	}
	want([]string{"version"}, 0)
	want(nil, latest)
	want([]string{"version"}, latest)
	want([]string{"up"}, latest)
	want([]string{"down", "1"}, prev)
	want([]string{"version"}, prev)
	want([]string{"up"}, latest)
	version("version")
	for _, args := range [][]string{{"down"}, {"down", "0"}, {"down", "x"}, {"sideways"}} {
		cliFail(t, nil, append([]string{"migrate", "--db", db}, args...)...)
	}
	// Past version 0: refused whole, with the reason, and nothing rolled back.
	r := cliRun(t, nil, "migrate", "--db", db, "down", strconv.Itoa(len(ups)+1))
	if r.code == 0 || !strings.Contains(r.stderr, fmt.Sprintf("the database is at version %d", latest)) {
		t.Fatalf("migrate down past 0: exit %d stderr=%q", r.code, r.stderr)
	}
	want([]string{"version"}, latest)
	want([]string{"down", strconv.Itoa(len(ups))}, 0)
	r = cliRun(t, nil, "migrate", "--db", db, "down", "1")
	if r.code == 0 || !strings.Contains(r.stderr, "at version 0") {
		t.Fatalf("migrate down at 0: exit %d stderr=%q", r.code, r.stderr)
	}
	want(nil, latest)
}

// A --db in a directory that does not exist is named plainly, by every
// command, and nothing is created.
func TestCLIDBDirectoryMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no", "such")
	db := filepath.Join(dir, "x.db")
	for _, args := range [][]string{
		{"migrate"}, {"seed"}, {"apps", "list"}, {"apps", "create", "--name", "A"}, {"keys", "list", "--app", "1"},
		{"serve", "--addr", "127.0.0.1:0"},
	} {
		r := cliRun(t, nil, append(args, "--db", db)...)
		if r.code == 0 || !strings.Contains(r.stderr, "directory "+dir+" does not exist") {
			t.Fatalf("%v: exit %d stderr=%q", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("the directory was created")
	}
}

// TestCLIDBRefused: a --db that names no usable database is refused
// before anything is opened, with exit status 2 and a message that says
// what to do. A SQLite file that is not there is refused by every command
// but those that create one (serve, migrate, seed), which still do; an
// empty --db and a URL of another scheme are refused by every command,
// without printing the URL's password.
func TestCLIDBRefused(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "dta.db")
	const mysql = "mysql://root:hunter2-secret@db.example/service"
	keyFile := filepath.Join(dir, "new.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("A", 43)+"=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	commands := [][]string{
		{"apps", "list"}, {"apps", "create", "--name", "A"}, {"apps", "update", "--id", "1", "--name", "B"},
		{"apps", "delete", "--id", "1"}, {"keys", "list", "--app", "1"}, {"keys", "create", "--app", "1", "--role", "admin"},
		{"keys", "revoke", "--id", "1"}, {"users", "list"}, {"users", "create", "--email", "a@example.com"},
		{"users", "delete", "--email", "a@example.com"}, {"audit"},
		{"secrets", "rotate-key", "--new-key-file", keyFile}, {"backup", "--out", filepath.Join(dir, "copy.db")},
	}
	creators := [][]string{{"serve", "--addr", "127.0.0.1:0"}, {"migrate"}, {"seed"}}
	forms := []string{"a SQLite file path", "postgres://", "postgresql://"}
	for _, tc := range []struct {
		name, db string
		cmds     [][]string
		want     []string
	}{
		{"MissingFile", missing, commands, []string{"no database at " + missing + " (serve, migrate or seed creates one)"}},
		{"Empty", "", append(append(append([][]string{}, commands...), creators...), []string{"restore", "--from", missing}, []string{"migrate", "schema"}),
			append([]string{`no database at ""`}, forms...)},
		{"OtherScheme", mysql, append(append(append([][]string{}, commands...), creators...), []string{"restore", "--from", missing}, []string{"migrate", "schema"}),
			append([]string{"mysql://"}, forms...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, args := range tc.cmds {
				r := cliRun(t, nil, append(args, "--db", tc.db)...)
				if r.code != 2 || r.stdout != "" {
					t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit 2 and nothing on stdout", args, r.code, r.stdout, r.stderr)
				}
				for _, w := range tc.want {
					if !strings.Contains(r.stderr, w) {
						t.Fatalf("%v: stderr %q does not say %q", args, r.stderr, w)
					}
				}
				if strings.Contains(r.stderr, "hunter2") {
					t.Fatalf("%v: stderr prints the URL's password: %q", args, r.stderr)
				}
			}
		})
	}
	// The environment's SERVICE_DB is checked as --db is.
	if r := cliRun(t, cliEnv("SERVICE_DB="+missing), "apps", "list"); r.code != 2 || !strings.Contains(r.stderr, "no database at "+missing) {
		t.Fatalf("SERVICE_DB missing: exit %d, stderr %q", r.code, r.stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "new.key" {
			t.Fatalf("a refused command left %s behind", e.Name())
		}
	}
	if _, err := os.Stat("mysql:"); err == nil {
		t.Fatal("a refused command created the directory mysql:")
	}

	// What creates a database still does, and the others then use it.
	for _, args := range [][]string{{"migrate"}, {"seed"}} {
		db := filepath.Join(t.TempDir(), "new.db")
		cliJSON(t, nil, append(args, "--db", db)...)
		cliJSON(t, nil, "apps", "list", "--db", db)
	}
}

// migrate schema prints the embedded schema.sql, needing no database.
func TestCLIMigrateSchema(t *testing.T) {
	want, err := os.ReadFile("../schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, nil, "migrate", "schema", "--db", filepath.Join(t.TempDir(), "absent", "x.db"))
	if r.code != 0 || r.stdout != string(want) {
		t.Fatalf("migrate schema: exit %d, %d bytes (want %d of schema.sql); stderr %s", r.code, len(r.stdout), len(want), r.stderr)
	}
}

func TestCLISeed(t *testing.T) {
	db := cliDB(t)
	m := cliJSON(t, nil, "seed", "--db", db)
	app := cliNum(t, m, "appId")
	for _, k := range []string{"adminKey", "clientKey"} {
		if s, _ := m[k].(string); !strings.HasPrefix(s, "sk_") {
			t.Fatalf("%s=%v, want a key", k, m[k])
		}
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k, role := range map[string]string{"adminKey": "admin", "clientKey": "client"} {
		key, err := s.Authenticate(context.Background(), m[k].(string))
		if err != nil || key.AppID != app || key.Role != role {
			t.Fatalf("%s: %+v, %v; want a %s key of app %d", k, key, err, role, app)
		}
	}
	blocks, _, err := s.FindContents(context.Background(), app, store.ContentPublished, store.ListOptions{Limit: 100, Page: 1})
	if err != nil || len(blocks) == 0 {
		t.Fatalf("seed made no published blocks: %v", err)
	}
	fixture.Golden(t, "demo.golden.json", fixture.Indent(t, demoData(t, s, app)), *update)
}

// update rewrites the seeded demo's data: go test ./cmd -run TestCLISeed -update.
var update = flag.Bool("update", false, "rewrite testdata/demo.golden.json")

// demoBlock is a content block of the demo as the golden file lists it;
// the handlers' docs test builds its world from these.
type demoBlock struct {
	Name   string          `json:"name"`
	Status string          `json:"status"`
	Items  json.RawMessage `json:"items"`
}

// demoData is what the seeded demo holds, without keys, ids of keys and
// times, which differ on every run: its blocks in id order, its
// audiences and its campaigns.
func demoData(t *testing.T, s *store.DB, app int64) map[string]any {
	ctx := context.Background()
	all := store.ListOptions{Limit: 100, Page: 1}
	blocks, _, err := s.FindContents(ctx, app, "", all)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(blocks, func(a, b *store.ContentView) int { return int(a.ID - b.ID) })
	var content []demoBlock
	for _, b := range blocks {
		content = append(content, demoBlock{b.Name, b.Status, b.Items})
	}
	auds, _, err := s.FindAudiences(ctx, app, "", all)
	if err != nil {
		t.Fatal(err)
	}
	var audiences []any
	for _, a := range auds {
		audiences = append(audiences, map[string]any{"name": a.Name, "status": a.Status, "definition": a.Definition, "customerCount": a.CustomerCount})
	}
	camps, _, err := s.FindCampaigns(ctx, app, "", all)
	if err != nil {
		t.Fatal(err)
	}
	var campaigns []any
	for _, c := range camps {
		var vs []any
		for _, v := range c.Variants {
			vs = append(vs, map[string]any{"name": v.Name, "contentViewId": v.ContentViewID, "trafficAllocation": v.TrafficAllocation, "isControl": v.IsControl})
		}
		campaigns = append(campaigns, map[string]any{"name": c.Name, "status": c.Status, "goalEventId": c.GoalEventID, "variants": vs})
	}
	return map[string]any{"content": content, "audiences": audiences, "campaigns": campaigns}
}

// cliServer is a running `service serve`.
type cliServer struct {
	cmd  *exec.Cmd
	base string
	done chan error
	logs chan map[string]any
}

func cliServe(t *testing.T, db string, extra ...string) *cliServer {
	t.Helper()
	return cliServeEnv(t, db, cliEnv(), extra...)
}

// cliServeEnv is cliServe with the environment env.
func cliServeEnv(t *testing.T, db string, env []string, extra ...string) *cliServer {
	t.Helper()
	c := exec.Command(cliBin, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--shutdown-timeout", "3s"}, extra...)...)
	c.Env = env
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	s := &cliServer{cmd: c, done: make(chan error, 1), logs: make(chan map[string]any, 1024)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				line = map[string]any{"msg": "NOT JSON", "line": sc.Text()}
			}
			if line["msg"] == "serving" {
				a, _ := line["addr"].(string)
				addr <- a
			}
			select {
			case s.logs <- line:
			default:
			}
		}
		close(s.logs)
		s.done <- c.Wait()
	}()
	t.Cleanup(func() {
		if c.ProcessState == nil {
			c.Process.Kill()
			<-s.done
		}
	})
	select {
	case a := <-addr:
		s.base = "http://" + a
	case err := <-s.done:
		t.Fatalf("serve exited before serving: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve printed no serving line")
	}
	return s
}

func (s *cliServer) do(t *testing.T, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: status %d, body not JSON: %v", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, m
}

func TestCLIServe(t *testing.T) {
	db := cliDB(t)
	app := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "live"), "id")
	srv := cliServe(t, db)

	if code, m := srv.do(t, "GET", "/healthz", "", ""); code != 200 || m["status"] != "ok" || len(m) != 1 {
		t.Fatalf("healthz: %d %v", code, m)
	}
	if code, _ := srv.do(t, "GET", pathList(app), "", ""); code != http.StatusUnauthorized {
		t.Fatalf("no key: status=%d, want 401", code)
	}

	// The CLI writes to the file the server is using.
	k := cliJSON(t, nil, "keys", "create", "--db", db, "--app", strconv.FormatInt(app, 10), "--role", "admin")
	key := k["key"].(string)
	code, m := srv.do(t, "POST", fmt.Sprintf("/v1/apps/%d/content", app), key, `{"name":"written while serving","status":"published"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	content := cliNum(t, m, "id")
	if code, _ := srv.do(t, "GET", pathList(app), key, ""); code != 200 {
		t.Fatalf("list: status=%d", code)
	}
	other := cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "second"), "id")
	if code, _ := srv.do(t, "GET", pathList(other), key, ""); code != http.StatusForbidden {
		t.Fatalf("other app: status=%d, want 403", code)
	}

	// Revoking from the CLI takes effect within the server's key cache TTL
	// (1 s); the bound leaves room for a loaded machine.
	cliJSON(t, nil, "keys", "revoke", "--db", db, "--id", strconv.FormatInt(cliNum(t, k, "id"), 10))
	start := time.Now()
	for {
		code, m := srv.do(t, "GET", pathList(app), key, "")
		if code == http.StatusUnauthorized {
			if e, _ := m["error"].(map[string]any); e["code"] != "UNAUTHORIZED" {
				t.Fatalf("401 body=%v", m)
			}
			break
		}
		if code != 200 {
			t.Fatalf("while revoking: status=%d %v", code, m)
		}
		if time.Since(start) > 15*time.Second {
			t.Fatalf("revoked key still accepted after %v", time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}

	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-srv.done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve still running 30 s after SIGTERM")
	}
	var msgs []string
	for line := range srv.logs {
		msg, _ := line["msg"].(string)
		if msg == "NOT JSON" {
			t.Fatalf("stderr line is not JSON: %v", line["line"])
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 || msgs[len(msgs)-1] != "stopped" {
		t.Fatalf("log messages=%v, want the last to be stopped", msgs)
	}

	if !store.IsPostgresURL(db) {
		sqldb, err := sql.Open("sqlite", "file:"+db)
		if err != nil {
			t.Fatal(err)
		}
		defer sqldb.Close()
		var check string
		if err := sqldb.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("integrity_check=%q, %v", check, err)
		}
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.FindContentByID(context.Background(), app, content)
	if err != nil || c.Name != "written while serving" || c.Status != store.ContentPublished {
		t.Fatalf("content after restart: %+v, %v", c, err)
	}
	keys, err := s.FindKeys(context.Background(), app)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("keys after restart: %+v, %v", keys, err)
	}
}

func TestCLIServeBadFlags(t *testing.T) {
	db := cliDB(t)
	for _, args := range [][]string{
		{"--addr", "127.0.0.1:-1"},
		{"--scheduler-interval", "0s"},
		{"--log-level", "loud"},
		{"--retention", "-1h"},
		{"--drain-delay", "-1s"},
		{"--drain-delay", "15s", "--shutdown-timeout", "15s"},
	} {
		r := cliRun(t, nil, append([]string{"serve", "--db", db}, args...)...)
		if r.code == 0 {
			t.Fatalf("serve %v: exit 0, want failure", args)
		}
	}
}

func pathList(app int64) string { return fmt.Sprintf("/v1/apps/%d/content", app) }

// TestCLIServeDefaultPlan: serve's --default-plan (or SERVICE_DEFAULT_PLAN)
// picks the plan of apps created without one, apps create's included,
// run beside it; a serve started without it puts free back; a name that
// is no plan's is refused at start, before the database is touched, with
// exit 2.
func TestCLIServeDefaultPlan(t *testing.T) {
	db := cliDB(t)
	// On SQLite the refusals name a file that does not exist yet, to see
	// that they create none.
	refused := db
	if !store.IsPostgresURL(db) {
		refused = filepath.Join(t.TempDir(), "new.db")
	}
	for _, tc := range []struct {
		env  []string
		args []string
		bad  string
	}{
		{nil, []string{"--default-plan", "gold"}, "gold"},
		{nil, []string{"--default-plan", "Pro"}, "Pro"},
		{nil, []string{"--default-plan", ""}, ""},
		{cliEnv("SERVICE_DEFAULT_PLAN=platinum"), nil, "platinum"},
	} {
		r := cliRun(t, tc.env, append([]string{"serve", "--db", refused, "--addr", "127.0.0.1:0"}, tc.args...)...)
		want := fmt.Sprintf("--default-plan (or SERVICE_DEFAULT_PLAN) %q: must be one of free, starter, pro, enterprise", tc.bad)
		if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, `"msg":"serving"`) {
			t.Fatalf("serve %v %v: exit %d, stderr %q; want exit 2 saying %q", tc.env, tc.args, r.code, r.stderr, want)
		}
	}
	if !store.IsPostgresURL(db) {
		if _, err := os.Stat(refused); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a refused serve created the database: %v", err)
		}
	}

	srv := cliServeEnv(t, db, cliEnv("SERVICE_DEFAULT_PLAN=pro"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "default"}, `{"id":1,"name":"default","plan":"pro","rateLimit":1000}`},
		{[]string{"--name", "own limit", "--rate-limit", "7"}, `{"id":2,"name":"own limit","plan":"pro","rateLimit":7}`},
		{[]string{"--name", "picked", "--plan", "free"}, `{"id":3,"name":"picked","plan":"free","rateLimit":60}`},
	} {
		if r := cliRun(t, nil, append([]string{"apps", "create", "--db", db}, tc.args...)...); r.code != 0 || r.stdout != tc.want+"\n" {
			t.Fatalf("apps create %v beside serve --default-plan pro: exit %d, stdout %q, stderr %q; want %s", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-srv.done; err != nil {
		t.Fatalf("serve exited with %v", err)
	}

	cliServe(t, db)
	if r := cliRun(t, nil, "apps", "create", "--db", db, "--name", "after"); r.stdout != `{"id":4,"name":"after","plan":"free","rateLimit":60}`+"\n" {
		t.Fatalf("apps create after a serve without --default-plan: %q %q", r.stdout, r.stderr)
	}
}

// TestCLIInstanceKeys: keys create --instance makes a key of no app, its
// plaintext printed once; keys list --instance lists the instance keys
// apart from every app's; keys revoke revokes one; and --instance refuses
// the flags of an app's key.
func TestCLIInstanceKeys(t *testing.T) {
	db := cliDB(t)
	app := fmt.Sprint(cliNum(t, cliJSON(t, nil, "apps", "create", "--db", db, "--name", "N"), "id"))
	cliJSON(t, nil, "keys", "create", "--db", db, "--app", app, "--role", "admin")
	m := cliJSON(t, nil, "keys", "create", "--db", db, "--instance", "--name", "terraform")
	key, _ := m["key"].(string)
	if m["role"] != "instance" || m["name"] != "terraform" || !strings.HasPrefix(key, "sk_i_") || len(m) != 4 {
		t.Fatalf("keys create --instance=%v, want id, role instance, key and name", m)
	}
	unnamed := cliJSON(t, nil, "keys", "create", "--db", db, "--instance")
	if _, ok := unnamed["name"]; ok || len(unnamed) != 3 {
		t.Fatalf("an unnamed instance key=%v", unnamed)
	}
	for _, args := range [][]string{
		{"keys", "create", "--instance", "--app", app},
		{"keys", "create", "--instance", "--role", "admin"},
		{"keys", "list", "--instance", "--app", app},
	} {
		cliFail(t, nil, append(args, "--db", db)...)
	}
	r := cliRun(t, nil, "keys", "list", "--db", db, "--instance")
	if r.code != 0 || strings.Contains(r.stdout, key[10:]) {
		t.Fatalf("keys list --instance: exit %d, shows the plaintext: %v\n%s", r.code, strings.Contains(r.stdout, key[10:]), r.stdout)
	}
	list := cliJSON(t, nil, "keys", "list", "--db", db, "--instance")["data"].([]any)
	if len(list) != 2 {
		t.Fatalf("keys list --instance=%v, want the two instance keys", list)
	}
	first := list[0].(map[string]any)
	if first["id"] != m["id"] || first["role"] != "instance" || first["prefix"] != key[:10] || first["appId"] != nil {
		t.Fatalf("listed %v, want the first instance key without an app", first)
	}
	if data := cliJSON(t, nil, "keys", "list", "--db", db, "--app", app)["data"].([]any); len(data) != 1 {
		t.Fatalf("the app's keys=%v, want its admin key alone", data)
	}
	rv := cliJSON(t, nil, "keys", "revoke", "--db", db, "--id", fmt.Sprint(cliNum(t, m, "id")))
	if rv["revokedAt"] == nil || rv["role"] != "instance" {
		t.Fatalf("keys revoke=%v", rv)
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Authenticate(context.Background(), key); err == nil {
		t.Fatal("the revoked instance key still authenticates")
	}
	if k, err := s.Authenticate(context.Background(), unnamed["key"].(string)); err != nil || k.Role != store.RoleInstance || k.AppID != 0 {
		t.Fatalf("the other instance key: %+v %v", k, err)
	}
}
