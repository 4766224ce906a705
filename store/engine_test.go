package store

import (
	goscanner "go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engineMarkers are texts that belong to one engine: its SQL (table
// hints, functions, catalogs, pragmas, placeholders), its own state, or a
// branch on which engine runs. The domain files must hold none of them
// outside comments: what differs between the engines sits behind engine,
// in the sqlite_* and postgres_* files.
var engineMarkers = []string{
	"pg != nil", "pg == nil", "db.pg", "pgEngine()", "sqliteEngine", "postgresEngine",
	"NOT INDEXED", "INDEXED BY", "event_users", "json_each", "jsonb", "WITH ORDINALITY", "unnest(",
	"pg_", "$1", "PRAGMA", "FOR UPDATE", "SKIP LOCKED", "VACUUM", "ANALYZE", "GREATEST(", "strpos(",
	"data_version", "advisory", ".ix.", "db.ckpt", "db.watch", "isPGCode",
	"INSERT OR ", "sqlite_", "::", "ILIKE", "LATERAL", "xid",
}

// TestDomainFilesHoldNoEngineCode keeps the seam between the domain and the
// engines a boundary rather than a convention: a domain file that names an
// engine's SQL or asks which engine it runs on fails here, naming the file
// and the line.
func TestDomainFilesHoldNoEngineCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "sqlite") || strings.HasPrefix(name, "postgres") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for line, text := range codeLines(t, name, src) {
			for _, m := range engineMarkers {
				if strings.Contains(text, m) {
					t.Errorf("%s:%d: %q belongs to an engine; move it behind engine (engine.go), into the sqlite_*/postgres_* files", name, line+1, m)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d domain files, want the store's (run from the package directory)", checked)
	}
}

// codeLines returns src's lines with its comments blanked out.
func codeLines(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var s goscanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { t.Fatalf("%s: %s", pos, msg) }, goscanner.ScanComments)
	code := []byte(string(src))
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT {
			off := file.Offset(pos)
			for i := off; i < off+len(lit); i++ {
				if code[i] != '\n' {
					code[i] = ' '
				}
			}
		}
	}
	return strings.Split(string(code), "\n")
}
