package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"service/internal/fixture"
	"service/internal/markdown"
	"service/internal/testclock"
)

// update rewrites the golden answers of docs/api.md's examples:
// go test ./handlers -run TestDocsExamples -update.
var update = flag.Bool("update", false, "rewrite the golden files: testdata/api_examples.golden.json, testdata/assignment_vectors.json")

// docsExample is one example of docs/api.md: a bash script of curl
// commands, and the answer shown after it, which is its last command's.
type docsExample struct {
	script string
	line   int    // of the script's block in docs/api.md
	shown  string // the documented answer
}

// docsSetupVars are the variables docs/api.md's setup block defines for
// every example, each with the test's value for it.
var docsSetupVars = []string{"BASE", "APP_ID", "ADMIN_KEY", "CLIENT_KEY", "INSTANCE_KEY"}

// docsExamples reads the examples of docs/api.md: every sh block that runs
// curl, which must be followed by the json block of its answer. It checks
// that the block marked "api-examples: setup" sets exactly docsSetupVars,
// the variables the test gives the examples in its place.
func docsExamples(t *testing.T) []docsExample {
	text, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := markdown.Blocks(string(text))
	var out []docsExample
	setups := 0
	for i, b := range blocks {
		if b.Marker == "api-examples: setup" {
			setups++
			var set []string
			for _, m := range regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)=`).FindAllStringSubmatch(b.Text, -1) {
				set = append(set, m[1])
			}
			if !slices.Equal(set, docsSetupVars) {
				t.Fatalf("docs/api.md:%d: the setup block sets %v, want %v", b.Line, set, docsSetupVars)
			}
			continue
		}
		if b.Info != "sh" || !regexp.MustCompile(`(^|[\s(])curl `).MatchString(b.Text) {
			continue
		}
		if i+1 == len(blocks) || blocks[i+1].Info != "json" {
			t.Fatalf("docs/api.md:%d: a curl example without the json block of its answer after it", b.Line)
		}
		out = append(out, docsExample{script: b.Text, line: b.Line, shown: blocks[i+1].Text})
	}
	if setups != 1 || len(out) == 0 {
		t.Fatalf("docs/api.md: %d setup blocks and %d curl examples, want one and some", setups, len(out))
	}
	return out
}

// docsPrelude defines two functions in the examples' shell. curl runs the
// real curl and appends to $DOCS_LOG the example's number, the request's
// method, URL and status, and the answer, which it prints as curl would
// for the example to pipe on; an answer of 300 or above fails the script.
// date reads its -d relative to $DOCS_NOW, the server's clock in the test,
// so that "+9 days" gives the same date, and the same answers, on every run.
const docsPrelude = `set -euo pipefail
curl() {
	local out meta
	out=$(mktemp)
	meta=$(command curl -sS -o "$out" -w '%{method} %{url_effective} %{http_code}' "$@") || { rm -f "$out"; return 1; }
	{ printf '%s %s\n' "$DOCS_EXAMPLE" "$meta"; cat "$out"; printf '\n\036\n'; } >>"$DOCS_LOG"
	cat "$out"
	rm -f "$out"
	[ "${meta##* }" -lt 300 ]
}
date() {
	local a=()
	while [ $# -gt 0 ]; do
		if [ "$1" = -d ]; then a+=(-d "$DOCS_NOW $2"); shift 2; else a+=("$1"); shift; fi
	done
	command date "${a[@]}"
}
`

// docsAnswer is one request an example made and its answer.
type docsAnswer struct {
	example int
	request string // method and path
	status  int
	body    []byte
}

// readDocsLog reads what the prelude's curl wrote: records of a line
// "example method URL status", then the answer, then a line holding \036.
func readDocsLog(t *testing.T, path, base string) []docsAnswer {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docsAnswer
	for _, rec := range strings.Split(string(raw), "\n\x1e\n") {
		if rec == "" {
			continue
		}
		head, body, _ := strings.Cut(rec, "\n")
		var a docsAnswer
		var method, url string
		if _, err := fmt.Sscanf(head, "%d %s %s %d", &a.example, &method, &url, &a.status); err != nil || !strings.HasPrefix(url, base) {
			t.Fatalf("a log line the test cannot read: %q (%v)", head, err)
		}
		a.request, a.body = method+" "+strings.TrimPrefix(url, base), []byte(body)
		out = append(out, a)
	}
	return out
}

// docsKeys matches the API keys and key prefixes the provisioning
// examples create, which are random: the golden file keeps their role.
var docsKeys = regexp.MustCompile(`sk_([arci])_[0-9a-f]{5,48}`)

// keyShape lists every object key path of a JSON value, array elements
// merged, so a documented answer can be compared with a real one without
// its ids and times.
func keyShape(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out[prefix+"."+k] = true
			keyShape(e, prefix+"."+k, out)
		}
	case []any:
		for _, e := range x {
			keyShape(e, prefix+"[]", out)
		}
	}
}

func shapeOf(t *testing.T, what string, raw []byte) []string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, raw)
	}
	m := map[string]bool{}
	keyShape(v, "", m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestDocsExamples runs the examples of docs/api.md as a reader would: in
// order, in one bash, with the real curl and jq, against the real router on
// a real HTTP listener, with the setup block's variables given the test's
// app, keys and address, and the database's clock at the documented
// moment. Every request must succeed; each example's last answer must have
// the fields of the answer documented after it (ids and times aside); and
// all the answers together must equal testdata/api_examples.golden.json.
func TestDocsExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the docs' examples run with %s, which is not installed (apt-get install curl jq)", tool)
		}
	}
	now := time.Date(2026, 11, 22, 0, 44, 37, 920_000_000, time.UTC)
	e := newEnv(t)
	e.DB.Now = testclock.New(now).Now
	// Every exchange is recorded, as testEnv.do records its own, for
	// TestMain's check against the OpenAPI document.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		e.Srv.ServeHTTP(rec, r)
		exchanges.record(r, body, rec)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()

	examples := docsExamples(t)
	var script strings.Builder
	script.WriteString(docsPrelude)
	for i, ex := range examples {
		fmt.Fprintf(&script, "DOCS_EXAMPLE=%d\n%s", i, ex.script)
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "answers")
	values := []string{srv.URL, strconv.FormatInt(e.App.ID, 10), e.Admin, e.Cli, e.instanceKey()}
	env := []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "DOCS_LOG=" + logPath,
		"DOCS_NOW=" + now.Format(time.RFC3339Nano)}
	for i, name := range docsSetupVars {
		env = append(env, name+"="+values[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	answers := readDocsLog(t, logPath, srv.URL)
	if err != nil {
		last := "none"
		if n := len(answers); n > 0 {
			a := answers[n-1]
			last = fmt.Sprintf("%s (example at docs/api.md:%d): %d %s", a.request, examples[a.example].line, a.status, a.body)
		}
		t.Fatalf("the examples failed: %v\n%s\nlast request: %s", err, out, last)
	}

	type answer struct {
		Request string          `json:"request"`
		Status  int             `json:"status"`
		Answer  json.RawMessage `json:"answer"`
	}
	var got []answer
	for i, ex := range examples {
		var mine []docsAnswer
		for _, a := range answers {
			if a.example == i {
				mine = append(mine, a)
			}
		}
		if len(mine) == 0 {
			t.Errorf("docs/api.md:%d: the example sent no request", ex.line)
			continue
		}
		last := mine[len(mine)-1]
		if real, shown := shapeOf(t, last.request+" answer", last.body), shapeOf(t, last.request+" documented answer", []byte(ex.shown)); !slices.Equal(real, shown) {
			t.Errorf("docs/api.md:%d: %s: the documented answer has fields %v, the service answers %v", ex.line, last.request, shown, real)
		}
		for _, a := range mine {
			got = append(got, answer{a.request, a.status, docsKeys.ReplaceAll(bytes.TrimSpace(a.body), []byte("sk_${1}_…"))})
		}
	}
	fixture.Golden(t, "api_examples.golden.json", fixture.Indent(t, got), *update)
	if *update {
		t.Logf("rewrote testdata/api_examples.golden.json: %d answers", len(got))
	}
}

// TestDocsTables: every table in the project's Markdown renders as one
// table with every row in its columns: each row has the header's cells,
// and no paragraph line sits inside a table or cuts a row off from it.
func TestDocsTables(t *testing.T) {
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, filepath.Join("..", "docs", "api.md")) || !slices.Contains(files, filepath.Join("..", "README.md")) {
		t.Fatalf("found %v, without README.md or docs/api.md", files)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range markdown.TableProblems(string(text)) {
			t.Errorf("%s: %s", strings.TrimPrefix(filepath.ToSlash(f), "../"), p)
		}
	}
}
