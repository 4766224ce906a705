// Package migrations holds the database schema as numbered golang-migrate
// files, embedded so the single binary carries its own schema.
package migrations

import (
	"embed"
	"io/fs"
)

// FS holds every NNNN_name.up.sql and .down.sql file of this folder.
//
//go:embed *.sql
var FS embed.FS

// Postgres holds the PostgreSQL store's migrations (postgres/), numbered
// like the SQLite ones: the first is the SQLite schema's version when
// PostgreSQL joined, and later ones carry the same numbers on both.
var Postgres = func() fs.FS {
	sub, err := fs.Sub(postgresFS, "postgres")
	if err != nil {
		panic(err)
	}
	return sub
}()

//go:embed postgres/*.sql
var postgresFS embed.FS

// PostgresSchema is the complete current PostgreSQL schema, which
// `service migrate schema` prints for a postgres:// database.
//
//go:embed postgres/schema.sql
var PostgresSchema string
