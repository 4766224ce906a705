// Package postgres is the store's PostgreSQL engine below the domain: the
// connections (pools on pgx, with the ? placeholders rewritten), the
// migrator, the sessions that hold advisory locks, what PostgreSQL's
// errors mean, and the statements only PostgreSQL runs. Package store
// calls it through its engine (store/postgres_engine.go); nothing here
// knows the domain.
package postgres

import (
	"context"
	"database/sql/driver"
	"fmt"
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

// Connector wraps pgx's connector so that its connections rewrite ?
// placeholders. inputError maps the error of a statement the server
// refused for its input (see ErrNUL) to the caller's own.
func Connector(c driver.Connector, inputError func(error) error) driver.Connector {
	return rebindConnector{c, inputError}
}

type rebindConnector struct {
	driver.Connector
	inputError func(error) error
}

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{Conn: dc.(*stdlib.Conn), inputError: c.inputError}, nil
}

// rebindConn is pgx's database/sql connection with ? rewritten; every
// other interface it implements is promoted unchanged.
type rebindConn struct {
	*stdlib.Conn
	inputError func(error) error
	// tx is the transaction database/sql began, whose BEGIN may still be
	// owed, as may the statements put off in owed (tx.go).
	tx   txState
	owed []owedStmt
}

func (c *rebindConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c *rebindConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	r, err := rebind(q, -1)
	if err != nil {
		return nil, err
	}
	// pgx's statement runs on pgx's connection, past what is owed.
	if err := c.sendOwed(ctx); err != nil {
		return nil, err
	}
	return c.Conn.PrepareContext(ctx, r)
}

func (c *rebindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	r, err := rebind(q, len(args))
	if err != nil {
		return nil, err
	}
	if c.owes() {
		vals := make([]any, len(args))
		for i, a := range args {
			vals[i] = a.Value
		}
		tag, err := c.execOwed(ctx, r, vals)
		return driver.RowsAffected(tag.RowsAffected()), c.pgInputError(err)
	}
	res, err := c.Conn.ExecContext(ctx, r, args)
	return res, c.pgInputError(err)
}

func (c *rebindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := rebind(q, len(args))
	if err != nil {
		return nil, err
	}
	// database/sql's rows are built by pgx's stdlib from its own query,
	// which cannot carry what is owed.
	if err := c.sendOwed(ctx); err != nil {
		return nil, c.pgInputError(err)
	}
	rows, err := c.Conn.QueryContext(ctx, r, args)
	return rows, c.pgInputError(err)
}

// pgInputError turns PostgreSQL's refusal of a NUL character in text,
// which SQLite would have stored, into the client's error it is: the API
// refuses the \u0000 escape before it gets here, and this covers what
// reaches the store by another way (a dashboard form).
func (c *rebindConn) pgInputError(err error) error {
	if IsCode(err, CharacterNotInRepertoire) && c.inputError != nil {
		return c.inputError(err)
	}
	return err
}

// rebindResult is a text's rewrite, kept so that a statement seen before
// costs one map lookup.
type rebindResult struct {
	text   string
	params int
	err    error
}

// rebound maps texts with ? to their $n form. Texts are the store's
// constants and the few shapes its dynamic filters build, so it stays small.
var rebound sync.Map

// rebind rewrites q's placeholders for PostgreSQL. With args ≥ 0 it also
// refuses a text whose placeholders do not match the arguments given:
// pgx would count only the $n it was handed, so a ? lost inside a
// literal would otherwise shift every later argument silently.
func rebind(q string, args int) (string, error) {
	if strings.IndexByte(q, '?') < 0 {
		return q, nil
	}
	v, ok := rebound.Load(q)
	if !ok {
		r := rebindResult{}
		r.text, r.params, r.err = rebindText(q)
		v, _ = rebound.LoadOrStore(q, r)
	}
	r := v.(rebindResult)
	if r.err != nil {
		return "", r.err
	}
	if args >= 0 && args != r.params {
		return "", fmt.Errorf("store: statement has %d placeholders but %d arguments: %s", r.params, args, abbrev(q))
	}
	return r.text, nil
}

// RebindText is rebindText, for the store's statement registry.
func RebindText(q string) (string, int, error) { return rebindText(q) }

// rebindText rewrites each ? placeholder outside literals, quoted
// identifiers and comments to $1, $2, … in order, and returns their
// count. PostgreSQL's own ? operators (jsonb's ?, ?| and ?&) are written
// ??, ??| and ??&, as JDBC writes them, and come out as one ?.
//
// It refuses, rather than guesses at, what it cannot rewrite safely: a
// text that already uses $n placeholders beside ?, and a literal,
// identifier or comment left open, since everything after it would be
// read the wrong way.
func rebindText(q string) (string, int, error) {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			// A doubled quote inside is the quote itself: the literal
			// closes and reopens, which copies it unchanged.
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				return "", 0, rebindError("unterminated quote", q)
			}
			if c == '\'' && i > 0 && (q[i-1] == 'E' || q[i-1] == 'e') && (i == 1 || !identByte(q[i-2])) {
				end, ok := escapeStringEnd(q, i+1)
				if !ok {
					return "", 0, rebindError("unterminated E'' string", q)
				}
				b.WriteString(q[i:end])
				i = end
				continue
			}
			b.WriteString(q[i : i+j+2])
			i += j + 2
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end, ok := blockCommentEnd(q, i)
			if !ok {
				return "", 0, rebindError("unterminated /* comment", q)
			}
			b.WriteString(q[i:end])
			i = end
		case c == '$':
			if i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9' && (i == 0 || !identByte(q[i-1])) {
				return "", 0, rebindError("$n placeholder mixed with ?", q)
			}
			tag, ok := dollarTag(q, i)
			if !ok {
				b.WriteByte(c)
				i++
				continue
			}
			j := strings.Index(q[i+len(tag):], tag)
			if j < 0 {
				return "", 0, rebindError("unterminated "+tag+" string", q)
			}
			end := i + len(tag) + j + len(tag)
			b.WriteString(q[i:end])
			i = end
		case c == '?':
			if i+1 < len(q) && q[i+1] == '?' {
				b.WriteByte('?')
				i += 2
				continue
			}
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), n, nil
}

func rebindError(what, q string) error {
	return fmt.Errorf("store: cannot rewrite placeholders: %s: %s", what, abbrev(q))
}

// abbrev keeps an error about a statement readable in a log line.
func abbrev(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 120 {
		return q[:117] + "..."
	}
	return q
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// escapeStringEnd finds the end of an E” string whose body starts at i:
// there a backslash escapes the next byte, so \' does not close it.
func escapeStringEnd(q string, i int) (int, bool) {
	for ; i < len(q); i++ {
		switch q[i] {
		case '\\':
			i++
		case '\'':
			if i+1 < len(q) && q[i+1] == '\'' {
				i++
				continue
			}
			return i + 1, true
		}
	}
	return 0, false
}

// blockCommentEnd finds the end of the /* comment at i. PostgreSQL nests
// block comments, so an inner /* needs its own */.
func blockCommentEnd(q string, i int) (int, bool) {
	depth := 0
	for i < len(q)-1 {
		switch {
		case q[i] == '/' && q[i+1] == '*':
			depth++
			i += 2
		case q[i] == '*' && q[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i, true
			}
		default:
			i++
		}
	}
	return 0, false
}

// dollarTag reads a dollar-quote opener at i: $$ or $tag$, where a tag is
// an identifier that does not start with a digit. A $ inside an identifier
// (PostgreSQL allows it there) opens nothing.
func dollarTag(q string, i int) (string, bool) {
	if i > 0 && identByte(q[i-1]) {
		return "", false
	}
	for j := i + 1; j < len(q); j++ {
		c := q[j]
		if c == '$' {
			return q[i : j+1], true
		}
		if !identByte(c) || (j == i+1 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return "", false
}
