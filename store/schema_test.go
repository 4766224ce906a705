package store

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
