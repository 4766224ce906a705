package store

import (
	"context"
	"database/sql/driver"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/stdlib"
)

// The store's SQL is written once, with SQLite's ? placeholders. On
// PostgreSQL every connection is wrapped so that a statement's text is
// rewritten to $1, $2, … on its way to pgx, whichever path it takes
// (database/sql's statements, a transaction's Exec, a pool's QueryRow).
// Rewritten texts are kept, so a statement seen before costs one map
// lookup and pgx finds its prepared form in its statement cache.

// rebindConnector wraps pgx's connector.
type rebindConnector struct{ driver.Connector }

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{dc.(*stdlib.Conn)}, nil
}

// rebindConn is pgx's database/sql connection with ? rewritten; every
// other interface it implements is promoted unchanged.
type rebindConn struct{ *stdlib.Conn }

func (c *rebindConn) Prepare(q string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(q))
}

func (c *rebindConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(q))
}

func (c *rebindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.ExecContext(ctx, rebind(q), args)
	return r, pgInputError(err)
}

func (c *rebindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.Conn.QueryContext(ctx, rebind(q), args)
	return r, pgInputError(err)
}

// pgInputError turns PostgreSQL's refusal of a NUL character in text,
// which SQLite would have stored, into the client's error it is: the API
// refuses the \u0000 escape before it gets here, and this covers what
// reaches the store by another way (a dashboard form).
func pgInputError(err error) error {
	if isPGCode(err, pgCharacterNotInRepertoire) {
		return Errorf(EINVALID, "text must not contain the NUL character")
	}
	return err
}

// rebound maps texts with ? to their $n form. Texts are the store's
// constants and the few shapes its dynamic filters build, so it stays small.
var rebound sync.Map

// rebind rewrites each ? outside quotes and comments to $n.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	if r, ok := rebound.Load(q); ok {
		return r.(string)
	}
	r := rebindText(q)
	rebound.Store(q, r)
	return r
}

func rebindText(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
