package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"service/internal/markdown"
	"service/internal/pgtest"
	"service/store"
)

// The docs' shell commands, run as a reader pastes them: in one bash, in a
// directory holding ./service (the real binary), against serve on that
// directory's data.db, with the server's address in place of the docs'
// http://localhost:8080.

// docScript joins the sh blocks of file marked with marker, in order, and
// points their BASE=http://localhost:8080 line at base.
//
// db is the database the server runs on: the docs' data.db in the SQLite
// run, else a PostgreSQL URL that their --db data.db then names instead.
func docScript(t *testing.T, file, marker, base, db string) string {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	n := 0
	for _, b := range markdown.Blocks(string(text)) {
		if b.Marker == marker {
			if b.Info != "sh" {
				t.Fatalf("%s:%d: a block marked %q is %q, not sh", file, b.Line, marker, b.Info)
			}
			script.WriteString(b.Text)
			n++
		}
	}
	baseLine := regexp.MustCompile(`(?m)^BASE=http://localhost:8080([ \t].*)?$`)
	if found := len(baseLine.FindAllString(script.String(), -1)); n == 0 || found != 1 {
		t.Fatalf("%s: %d blocks marked %q, with %d lines BASE=http://localhost:8080; want some, and one", file, n, marker, found)
	}
	out := baseLine.ReplaceAllLiteralString(script.String(), "BASE="+base)
	if store.IsPostgresURL(db) {
		out = strings.ReplaceAll(out, "--db data.db", "--db '"+db+"'")
	}
	return out
}

// docsDir is a directory holding ./service, and serve running on its
// data.db; it returns the directory and the server's base URL (no /v1).
func docsDir(t *testing.T) (dir string, s *e2eServer, base, db string) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the docs' commands run with %s, which is not installed (apt-get install curl jq)", tool)
		}
	}
	dir = t.TempDir()
	if err := os.Symlink(cliBin, filepath.Join(dir, "service")); err != nil {
		t.Fatal(err)
	}
	db = pgtest.DB(t, filepath.Join(dir, "data.db"))
	s = e2eServe(t, "--db", db)
	return dir, s, strings.TrimSuffix(s.base, "/v1"), db
}

// runDocScript runs script in dir with bash, stopping at the first failing
// command, and returns what it printed; vars names variables the script
// sets, whose values it returns too.
func runDocScript(t *testing.T, dir, script string, vars ...string) (stdout []byte, values map[string]string) {
	t.Helper()
	// The epilogue prints the variables as one JSON object on fd 3, apart
	// from the script's own output.
	var epilogue strings.Builder
	epilogue.WriteString("\njq -n")
	for _, v := range vars {
		fmt.Fprintf(&epilogue, " --arg %s \"$%s\"", v, v)
	}
	epilogue.WriteString(" '$ARGS.named' >&3\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script+epilogue.String())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = dir, cliEnv(), &out, &errOut, []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	named, _ := io.ReadAll(r)
	r.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the commands failed: %v\nstdout:\n%s\nstderr:\n%s\nscript:\n%s", err, out.Bytes(), errOut.Bytes(), script)
	}
	if err := json.Unmarshal(named, &values); err != nil {
		t.Fatalf("variables %q: %v", named, err)
	}
	for _, v := range vars {
		if values[v] == "" || values[v] == "null" {
			t.Fatalf("the commands left %s empty (%q); stdout:\n%s", v, values[v], out.Bytes())
		}
	}
	return out.Bytes(), values
}

// jsonValues decodes the JSON values printed one after another.
func jsonValues(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var vs []map[string]any
	d := json.NewDecoder(bytes.NewReader(out))
	for {
		var v map[string]any
		err := d.Decode(&v)
		if errors.Is(err, io.EOF) {
			return vs
		}
		if err != nil {
			t.Fatalf("output is not a run of JSON objects: %v\n%s", err, out)
		}
		vs = append(vs, v)
	}
}

// TestReadmeFirstABTest runs the README's "Your first A/B test", the blocks
// marked first-ab-test, on a fresh database, and then again on the same
// one: the second run makes app 2 and must work the same, its ids taken
// from the answers as the first run's were.
func TestReadmeFirstABTest(t *testing.T) {
	dir, s, base, db := docsDir(t)
	script := docScript(t, "../README.md", "first-ab-test", base, db)
	for run := int64(1); run <= 2; run++ {
		t.Run(fmt.Sprint("Run", run), func(t *testing.T) {
			out, v := runDocScript(t, dir, script, "APP_ID", "ADMIN_KEY", "CLIENT_KEY", "HERO_A", "HERO_B", "CAMPAIGN_ID")
			if v["APP_ID"] != strconv.FormatInt(run, 10) {
				t.Fatalf("APP_ID=%s, want %d: a new app each run", v["APP_ID"], run)
			}
			if !strings.HasPrefix(v["ADMIN_KEY"], "sk_a_") || !strings.HasPrefix(v["CLIENT_KEY"], "sk_c_") {
				t.Fatalf("keys %q, %q", v["ADMIN_KEY"], v["CLIENT_KEY"])
			}

			// What the reader sees: the started campaign, the user's
			// variant with its impression, and the results last.
			printed := jsonValues(t, out)
			var started, assigned bool
			for _, p := range printed {
				started = started || p["status"] == "active"
				assigned = assigned || p["impressionRecorded"] == true
			}
			if !started || !assigned || len(printed) == 0 {
				t.Fatalf("printed no active campaign (%v) or no recorded impression (%v):\n%s", started, assigned, out)
			}
			if last := printed[len(printed)-1]; e2eNum(last, "totalImpressions") != 1 || e2eNum(last, "totalConversions") != 1 {
				t.Fatalf("results printed %v, want 1 impression and 1 conversion", last)
			}

			// What the service holds: the campaign of the two blocks,
			// active, with the user's impression and conversion on one
			// variant.
			c := s.call(t, 200, "GET", "/campaigns/"+v["CAMPAIGN_ID"], v["ADMIN_KEY"], nil)
			if c["status"] != "active" || c["goalEventId"] != "purchase" || fmt.Sprint(c["appId"]) != v["APP_ID"] {
				t.Fatalf("campaign %v", c)
			}
			vs := c["variants"].([]any)
			var blocks []string
			var impressions, conversions int64
			for _, x := range vs {
				m := x.(map[string]any)
				blocks = append(blocks, fmt.Sprint(m["contentViewId"]))
				impressions += e2eNum(m, "impressions")
				conversions += e2eNum(m, "conversions")
				if e2eNum(m, "conversions") > e2eNum(m, "impressions") {
					t.Fatalf("variant %v: a conversion without its impression", m)
				}
			}
			if got, want := strings.Join(blocks, ","), v["HERO_A"]+","+v["HERO_B"]; got != want {
				t.Fatalf("variants show blocks %s, want %s", got, want)
			}
			if impressions != 1 || conversions != 1 {
				t.Fatalf("impressions=%d conversions=%d, want 1 and 1", impressions, conversions)
			}
		})
	}
}

// TestDocsAPISetup runs docs/api.md's setup block, which gives every
// example of that page its app and keys: the keys it keeps belong to the
// app it made, with the roles the examples use them for, and the instance
// key of the provisioning examples manages apps on the running server.
func TestDocsAPISetup(t *testing.T) {
	dir, s, base, db := docsDir(t)
	// Another app first, as seed makes: the setup must not assume app 1.
	e2eCLI(t, "apps", "create", "--db", db, "--name", "Other")
	_, v := runDocScript(t, dir, docScript(t, "../docs/api.md", "api-examples: setup", base, db), "BASE", "APP_ID", "ADMIN_KEY", "CLIENT_KEY", "INSTANCE_KEY")
	if v["BASE"] != base || v["APP_ID"] != "2" {
		t.Fatalf("BASE=%s APP_ID=%s, want %s and 2", v["BASE"], v["APP_ID"], base)
	}
	s.call(t, 200, "GET", "/apps/"+v["APP_ID"]+"/campaigns", v["ADMIN_KEY"], nil)
	s.call(t, 201, "POST", "/apps/"+v["APP_ID"]+"/events", v["CLIENT_KEY"], map[string]any{"eventId": "setup-checked"})
	// The client key is a client key: management routes refuse it.
	s.call(t, 403, "GET", "/apps/"+v["APP_ID"]+"/campaigns", v["CLIENT_KEY"], nil)
	// The instance key provisions, and may call no app route.
	if got := s.call(t, 200, "GET", "/apps/"+v["APP_ID"], v["INSTANCE_KEY"], nil); got["name"] != "API examples" {
		t.Fatalf("GET /apps/%s with the instance key: %v", v["APP_ID"], got)
	}
	s.call(t, 403, "GET", "/apps/"+v["APP_ID"]+"/campaigns", v["INSTANCE_KEY"], nil)
	s.call(t, 403, "GET", "/apps", v["ADMIN_KEY"], nil)
}
