package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL's error codes the store tells apart.
const (
	UniqueViolation          = "23505"
	CharacterNotInRepertoire = "22021"
	DeadlockDetected         = "40P01"
	SerializationFailure     = "40001"
	InvalidCatalogName       = "3D000" // the database named does not exist
)

// IsCode reports whether err is PostgreSQL's error of code.
func IsCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// LostToConcurrent reports whether err is a write transaction's loss to a
// concurrent transaction of another process: a row it inserted was
// inserted and committed by the other first (a logId sent to two replicas
// at once), or the two waited for each other's row locks. Unlike SQLite's
// one writer at a time, PostgreSQL's writers of several processes run at
// once, and a retry resolves either.
func LostToConcurrent(err error) bool {
	return IsCode(err, UniqueViolation) || IsCode(err, DeadlockDetected) || IsCode(err, SerializationFailure)
}

// Unavailable reports PostgreSQL's errors that say "not now" rather than
// "no": a connection that could not be made or was lost (class 08), a
// server shutting down or starting (57P01–57P03), too many connections
// (53300), and a statement or lock wait that outlasted statement_timeout
// or lock_timeout (57014, 55P03).
func Unavailable(err error) bool {
	var ce *pgconn.ConnectError
	// SafeToRetry: pgx sent nothing, as on a connection already closed.
	if errors.As(err, &ce) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "57P01", "57P02", "57P03", "53300", "57014", "55P03":
		return true
	}
	return len(pe.Code) == 5 && pe.Code[:2] == "08"
}
