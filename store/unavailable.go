package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"service/store/postgres"
)

// DefaultTimeout bounds the database work of one request, pool waits
// included, unless Options.Timeout says otherwise (serve's --db-timeout).
const DefaultTimeout = 5 * time.Second

// IsUnavailable reports whether err means the database could not do the
// work now, though the request itself was fine: it did not answer within
// the time given, its connection broke or was refused, it is starting or
// shutting down, or it gave up waiting for a lock. Such a request may be
// tried again as it is: the API answers 503 with Retry-After, never 500.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, driver.ErrBadConn),
		errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.As(err, &ne):
		return true
	}
	return postgres.Unavailable(err) || isBusy(err)
}
