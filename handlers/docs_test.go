package handlers

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"service/internal/fixture"
	"service/internal/markdown"
	"service/internal/testclock"
)

// update rewrites the golden answers of docs/api.md's examples:
// go test ./handlers -run TestDocsExamples -update.
var update = flag.Bool("update", false, "rewrite testdata/api_examples.golden.json")

// docsExample is one curl example of docs/api.md and the answer printed
// after it.
type docsExample struct {
	method, path, key, body string
	shown                   string // the documented answer
}

var (
	docsBlock = regexp.MustCompile("(?s)```sh\\n(curl .*?)```\\s*```json\\n(.*?)```")
	docsCurl  = regexp.MustCompile(`(?s)^curl -X (\w+) \$BASE(\S+) -H "Authorization: Bearer \$(\w+)".*?-d '(.*?)'`)
)

// docsExamples reads every curl example with its documented answer.
func docsExamples(t *testing.T) []docsExample {
	text, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docsExample
	for _, m := range docsBlock.FindAllStringSubmatch(string(text), -1) {
		c := docsCurl.FindStringSubmatch(m[1])
		if c == nil {
			t.Fatalf("docs/api.md: a curl example this test cannot read:\n%s", m[1])
		}
		out = append(out, docsExample{method: c[1], path: c[2], key: c[3], body: c[4], shown: m[2]})
	}
	if len(out) == 0 {
		t.Fatal("docs/api.md has no curl examples")
	}
	return out
}

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

// TestDocsExamples runs the curl examples of docs/api.md, in order, through
// the real router, on the world they assume: app 1 with the seeded demo's
// content blocks (ids 1 to 3, the third with an email form), and a clock
// at the documented moment. Every answer must be a success with the
// documented fields (ids and times aside), and the answers together must
// equal testdata/api_examples.golden.json.
func TestDocsExamples(t *testing.T) {
	e := newEnv(t)
	e.DB.Now = testclock.New(time.Date(2026, 11, 22, 0, 44, 37, 920_000_000, time.UTC)).Now
	// The seeded demo's blocks (testdata/demo.golden.json), which the
	// examples refer to by id.
	var demo struct {
		Content []struct {
			Name   string          `json:"name"`
			Status string          `json:"status"`
			Items  json.RawMessage `json:"items"`
		} `json:"content"`
		Audiences json.RawMessage `json:"audiences"`
		Campaigns json.RawMessage `json:"campaigns"`
	}
	fixture.JSON(t, "demo.golden.json", &demo)
	for _, b := range demo.Content {
		e.must(http.StatusCreated, "POST", "/v1/apps/1/content", e.Admin, b)
	}
	keys := map[string]string{"ADMIN_KEY": e.Admin, "CLIENT_KEY": e.Cli, "READ_KEY": e.Read}

	type answer struct {
		Request string          `json:"request"`
		Status  int             `json:"status"`
		Answer  json.RawMessage `json:"answer"`
	}
	var got []answer
	for _, ex := range docsExamples(t) {
		key, ok := keys[ex.key]
		if !ok {
			t.Fatalf("%s %s: unknown key $%s", ex.method, ex.path, ex.key)
		}
		rec := e.do(ex.method, ex.path, key, ex.body)
		req := ex.method + " " + ex.path
		if rec.Code >= 300 {
			t.Errorf("%s: status %d: %s", req, rec.Code, rec.Body)
			continue
		}
		body := bytes.TrimSpace(rec.Body.Bytes())
		if real, shown := shapeOf(t, req+" answer", body), shapeOf(t, req+" documented answer", []byte(ex.shown)); !slices.Equal(real, shown) {
			t.Errorf("%s: docs/api.md shows fields %v, the service answers %v", req, shown, real)
		}
		got = append(got, answer{req, rec.Code, body})
	}
	fixture.Golden(t, "api_examples.golden.json", fixture.Indent(t, got), *update)
	if *update {
		t.Logf("rewrote testdata/api_examples.golden.json: %d examples", len(got))
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
