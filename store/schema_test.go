package store

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"service/internal/pgtest"
)

// update rewrites files that tests compare against (schema.sql) from what
// the code produces: go test ./store -run TestSchema -update.
var update = flag.Bool("update", false, "rewrite ../schema.sql from the migrations")

// schemaFile is the top-level schema.sql, relative to this package.
const schemaFile = "../schema.sql"

// schemaObject is one row of sqlite_master.
type schemaObject struct {
	typ, name, table, sql string
}

// schemaObjects reads the objects of a database's schema, leaving out
// SQLite's own and golang-migrate's bookkeeping table: each table in
// creation order, followed by its indexes and triggers, then the views.
func schemaObjects(tb testing.TB, db *sql.DB) []schemaObject {
	tb.Helper()
	rows, err := db.Query(`SELECT type, name, tbl_name, sql FROM sqlite_master
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND tbl_name <> 'schema_migrations'
		ORDER BY rowid`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var all []schemaObject
	for rows.Next() {
		var o schemaObject
		if err := rows.Scan(&o.typ, &o.name, &o.table, &o.sql); err != nil {
			tb.Fatal(err)
		}
		all = append(all, o)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	var out []schemaObject
	for _, t := range all {
		if t.typ != "table" {
			continue
		}
		out = append(out, t)
		for _, o := range all {
			if (o.typ == "index" || o.typ == "trigger") && o.table == t.name {
				out = append(out, o)
			}
		}
	}
	for _, o := range all {
		if o.typ == "view" {
			out = append(out, o)
		}
	}
	return out
}

var (
	sqlComment = regexp.MustCompile(`--[^\n]*`)
	sqlSpace   = regexp.MustCompile(`\s+`)
	sqlPunct   = regexp.MustCompile(`\s*([(),;=])\s*`)
)

// normalSQL makes layout irrelevant: comments go, whitespace runs become
// one space and none is kept around punctuation. Quoted text is not
// special-cased: the schema has no literal whose spacing matters.
func normalSQL(s string) string {
	s = sqlComment.ReplaceAllString(s, "")
	s = sqlSpace.ReplaceAllString(s, " ")
	s = sqlPunct.ReplaceAllString(s, "$1")
	return strings.TrimSpace(s)
}

func (o schemaObject) normal() string {
	return o.typ + " " + o.name + " on " + o.table + ": " + normalSQL(o.sql)
}

const schemaHeader = `-- The complete current schema of the service's database: read it here.
--
-- Generated from migrations/, which remain the way the schema changes: to
-- change it, add a migration (migrations/NNNN_name.up.sql and .down.sql),
-- then rewrite this file with
--
--     go test ./store -run TestSchema -update
--
-- TestSchema fails whenever this file and the migrations disagree.
-- Timestamps are integer milliseconds since the Unix epoch (UTC).
`

// renderSchema writes objects as schema.sql: a blank line before each
// table, its indexes and triggers right after it.
func renderSchema(objs []schemaObject) string {
	var b strings.Builder
	b.WriteString(schemaHeader)
	for _, o := range objs {
		if o.typ == "table" || o.typ == "view" {
			b.WriteString("\n")
		}
		b.WriteString(strings.TrimSpace(o.sql))
		b.WriteString(";\n")
	}
	return b.String()
}

// TestSchema applies every migration to one empty database and schema.sql
// to another, and requires the same objects with the same definitions.
func TestSchema(t *testing.T) {
	if pgtest.Selected() {
		testPostgresSchema(t)
		return
	}
	migrated := mustOpenDB(t)
	want := schemaObjects(t, migrated.read)
	if len(want) == 0 {
		t.Fatal("the migrations created no tables")
	}
	if *update {
		if err := os.WriteFile(schemaFile, []byte(renderSchema(want)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s: %d objects", schemaFile, len(want))
	}
	text, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./store -run TestSchema -update)", err)
	}
	plain, err := sql.Open("sqlite", DSN(filepath.Join(t.TempDir(), "schema.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.ExecContext(context.Background(), string(text)); err != nil {
		t.Fatalf("schema.sql does not apply to an empty database: %v", err)
	}
	got := schemaObjects(t, plain)

	byName := map[string]string{}
	for _, o := range got {
		byName[o.typ+" "+o.name] = o.normal()
	}
	for _, o := range want {
		g, ok := byName[o.typ+" "+o.name]
		delete(byName, o.typ+" "+o.name)
		switch {
		case !ok:
			t.Errorf("schema.sql lacks %s %s, which the migrations create:\n  %s", o.typ, o.name, normalSQL(o.sql))
		case g != o.normal():
			t.Errorf("schema.sql differs from the migrations on %s %s:\n  schema.sql: %s\n  migrations: %s", o.typ, o.name, g, o.normal())
		}
	}
	for k, g := range byName {
		t.Errorf("schema.sql has %s, which the migrations do not create:\n  %s", k, g)
	}
	if t.Failed() {
		t.Log("after adding a migration, rewrite schema.sql with: go test ./store -run TestSchema -update")
	}
}

// pgSchemaFile is the PostgreSQL schema, relative to this package.
const pgSchemaFile = "../migrations/postgres/schema.sql"

const pgSchemaHeader = `-- The complete current PostgreSQL schema of the service's database: read
-- it here. As pg_dump --schema-only prints it, without its settings.
--
-- Generated from migrations/postgres/, which remain the way the schema
-- changes: to change it, add a migration there (and its SQLite twin in
-- migrations/), then rewrite this file with
--
--     make test-postgres-schema
--
-- TestSchema, in the PostgreSQL run, fails whenever this file and the
-- migrations disagree. Timestamps are BIGINT milliseconds since the Unix
-- epoch (UTC).
`

// pgDump prints the schema of the database at url without the migrations'
// bookkeeping, settings, comments and blank lines: what the migrations
// built, in pg_dump's stable order.
func pgDump(tb testing.TB, url string) string {
	tb.Helper()
	bin := "pg_dump"
	if dir := os.Getenv("PG_BINDIR"); dir != "" {
		bin = filepath.Join(dir, "pg_dump")
	}
	out, err := exec.Command(bin, "--schema-only", "--no-owner", "--no-privileges", "--exclude-table=schema_migrations", "--dbname="+url).Output()
	if err != nil {
		tb.Fatalf("pg_dump: %v", err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case line == "", strings.HasPrefix(line, "--"), strings.HasPrefix(line, "SET "), strings.HasPrefix(line, `\`),
			strings.HasPrefix(line, "SELECT pg_catalog.set_config"), strings.HasPrefix(line, "COMMENT ON EXTENSION"):
			continue
		}
		b.WriteString(line)
		b.WriteString("\n")
		if strings.HasSuffix(line, ";") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// testPostgresSchema dumps a migrated database and one built from
// schema.sql, and requires both to equal the file.
func testPostgresSchema(t *testing.T) {
	migrated := pgDump(t, mustOpenDBPathOnly(t))
	if !strings.Contains(migrated, "CREATE TABLE") {
		t.Fatal("the migrations created no tables")
	}
	if *update {
		if err := os.WriteFile(pgSchemaFile, []byte(pgSchemaHeader+"\n"+migrated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", pgSchemaFile)
	}
	text, err := os.ReadFile(pgSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimPrefix(string(text), pgSchemaHeader+"\n"); got != migrated {
		t.Errorf("%s differs from what the migrations build (rewrite it with make test-postgres-schema):\n%s", pgSchemaFile, firstDiff(got, migrated))
	}
	plain := pgtest.EmptyDB(t, "")
	conn, err := sql.Open("pgx", plain)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(string(text)); err != nil {
		t.Fatalf("schema.sql does not apply to an empty database: %v", err)
	}
	if got := pgDump(t, plain); got != migrated {
		t.Errorf("schema.sql applied to an empty database differs from the migrations:\n%s", firstDiff(got, migrated))
	}
}

// mustOpenDBPathOnly opens and migrates a new database, and returns where
// it is.
func mustOpenDBPathOnly(tb testing.TB) string {
	tb.Helper()
	_, path := mustOpenDBPath(tb)
	return path
}

// firstDiff shows the first line where two texts differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  file:       %q\n  migrations: %q", i+1, x, y)
		}
	}
	return "(equal)"
}
