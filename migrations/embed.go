// Package migrations holds the database schema as numbered golang-migrate
// files, embedded so the single binary carries its own schema.
package migrations

import "embed"

// FS holds every NNNN_name.up.sql and .down.sql file of this folder.
//
//go:embed *.sql
var FS embed.FS
