package store

import (
	"errors"
	"fmt"
	"time"

	"service/jsonjs"
)

// Error codes, mapped to HTTP statuses by the handlers.
const (
	EINVALID   = "invalid"
	ENOTFOUND  = "not_found"
	EFORBIDDEN = "forbidden"
	EINTERNAL  = "internal"
)

// Error is an application error whose message is safe to show a client.
type Error struct {
	Code    string
	Message string
	Details map[string]any
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with a formatted, client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an application error, or EINTERNAL for any
// other error (whose text must never reach a client).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// FieldErrors collects every bad body field of a request, so a client learns
// all of them at once.
type FieldErrors map[string]string

// Add records a problem with the field at path; the first reason wins.
func (f FieldErrors) Add(path, reason string) {
	if _, ok := f[path]; !ok {
		f[path] = reason
	}
}

// Err returns nil when no field is bad, else an EINVALID error listing them.
func (f FieldErrors) Err() error {
	if len(f) == 0 {
		return nil
	}
	fields := make(map[string]any, len(f))
	for k, v := range f {
		fields[k] = v
	}
	return &Error{Code: EINVALID, Message: "request has invalid fields", Details: map[string]any{"fields": fields}}
}

// notFound is the error for a missing resource, and for one of another app,
// which must look exactly the same.
func notFound(what string) error {
	return Errorf(ENOTFOUND, "%s not found", what)
}

// moveError is the refusal of a state-machine move.
func moveError(what, from, to string) error {
	return &Error{Code: EINVALID, Message: fmt.Sprintf("%s cannot move from %s to %s", what, from, to),
		Details: map[string]any{"from": from, "to": to}}
}

// Time marshals as RFC 3339 UTC with milliseconds, the one format of the API.
type Time struct{ time.Time }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	return jsonjs.AppendQuotedTime(make([]byte, 0, len(jsonjs.TimeLayout)+2), t.Time), nil
}

// NewTime wraps t.
func NewTime(t time.Time) Time { return Time{t.UTC()} }

// TimePtr wraps an optional time.
func TimePtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	v := NewTime(*t)
	return &v
}
