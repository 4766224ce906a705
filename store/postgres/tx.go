package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A transaction begun through database/sql with the default options sends
// its BEGIN with its first statement, not in a round trip of its own, and
// one that ends with ExecCommit sends its COMMIT with its last statement;
// one that runs nothing sends neither. A group commit of new users was six
// round trips (BEGIN, the campaign's status, users, assignments, counters,
// COMMIT) and is four, which pgx can pipeline where database/sql cannot.
// A round trip costs the service and the server system calls, a wakeup
// each and the server a statement's start and end: on one core, the four
// took new users from 0.236–0.238 of a bare server's rate to 0.250–0.259.
//
// database/sql's rows can only come from pgx's stdlib running its own
// query, which cannot carry the BEGIN: RawQuery and RawQueryRow scan with
// pgx instead, for the statements that open a group commit. Every other
// statement of a transaction goes through rebindConn's Exec, Query or
// Prepare (the store's pools prepare nothing through database/sql on
// PostgreSQL), and each sends the BEGIN still owed first: a statement run
// outside the transaction would be committed on its own.

// txState is where a connection's lazily begun transaction stands.
type txState uint8

const (
	txNone      txState = iota // no transaction, or one begun by pgx's own BeginTx
	txPending                  // begun for database/sql, BEGIN not sent yet
	txOpen                     // BEGIN sent
	txCommitted                // committed by ExecCommit; database/sql's Commit has nothing left to do
)

// lazyTx is the database/sql transaction of a rebindConn whose BEGIN goes
// with its first statement.
type lazyTx struct {
	ctx context.Context
	c   *rebindConn
}

// BeginTx begins lazily for the default options; other options (a read
// only or isolated transaction) begin at once, as pgx does.
func (c *rebindConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly || sql.IsolationLevel(opts.Isolation) != sql.LevelDefault {
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	if c.tx != txNone {
		return nil, errors.New("postgres: transaction already begun on this connection")
	}
	c.tx = txPending
	return lazyTx{ctx, c}, nil
}

func (c *rebindConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// sendBegin sends the BEGIN a transaction still owes, before a statement
// that cannot carry it.
func (c *rebindConn) sendBegin(ctx context.Context) error {
	if c.tx != txPending {
		return nil
	}
	c.tx = txOpen
	_, err := c.Conn.Conn().Exec(ctx, "begin")
	return err
}

// execFirst runs the statement that opens a transaction, with its BEGIN
// in the same round trip.
func (c *rebindConn) execFirst(ctx context.Context, q string, args []any) (pgconn.CommandTag, error) {
	c.tx = txOpen
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue(q, args...)
	br := c.Conn.Conn().SendBatch(ctx, b)
	_, err := br.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (t lazyTx) Commit() error {
	c := t.c
	switch c.tx {
	case txPending, txCommitted:
		// Nothing ran, or ExecCommit committed it.
		c.tx = txNone
		return nil
	case txOpen:
		c.tx = txNone
		tag, err := c.Conn.Conn().Exec(t.ctx, "commit")
		if err != nil {
			if c.Conn.Conn().PgConn().TxStatus() != 'I' {
				// Where the commit stands is unknown: the connection is
				// not used again.
				_ = c.Conn.Close()
			}
			return err
		}
		if tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	}
	return sql.ErrTxDone
}

func (t lazyTx) Rollback() error {
	c := t.c
	switch c.tx {
	case txPending, txCommitted:
		c.tx = txNone
		return nil
	case txOpen:
		c.tx = txNone
		if c.Conn.Conn().PgConn().TxStatus() == 'I' {
			// A COMMIT sent by ExecCommit failed, which ended the
			// transaction.
			return nil
		}
		_, err := c.Conn.Conn().Exec(t.ctx, "rollback")
		if err != nil {
			_ = c.Conn.Close()
		}
		return err
	}
	return sql.ErrTxDone
}

// conn returns the store's driver connection that database/sql's
// sql.Conn.Raw hands over.
func conn(dc any) (*rebindConn, error) {
	c, ok := dc.(*rebindConn)
	if !ok {
		return nil, errors.New("postgres: not a store connection")
	}
	return c, nil
}

// query sends r, rebound, on pgx's connection, with the BEGIN still owed
// before it in the same round trip; done closes what it opened and returns
// the first error, the rows' included.
func (c *rebindConn) query(ctx context.Context, r string, args []any) (rows pgx.Rows, done func() error) {
	failed := func(err error) (pgx.Rows, func() error) {
		return nil, func() error { return c.pgInputError(err) }
	}
	pc := c.Conn.Conn()
	if c.tx != txPending {
		rows, err := pc.Query(ctx, r, args...)
		if err != nil {
			if rows != nil {
				rows.Close()
			}
			return failed(err)
		}
		return rows, func() error { rows.Close(); return c.pgInputError(rows.Err()) }
	}
	c.tx = txOpen
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue(r, args...)
	br := pc.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		rows, err = br.Query()
	}
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		br.Close()
		return failed(err)
	}
	return rows, func() error {
		rows.Close()
		err := rows.Err()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return c.pgInputError(err)
	}
}

// RawQuery runs q, with ? placeholders, on the store's driver connection dc
// (sql.Conn.Raw's), and hands each row to each, to scan with pgx's own
// scanning; in a transaction whose BEGIN is still owed, the two go in one
// round trip.
func RawQuery(ctx context.Context, dc any, q string, args []any, each func(pgx.CollectableRow) error) error {
	c, err := conn(dc)
	if err != nil {
		return err
	}
	r, err := rebind(q, len(args))
	if err != nil {
		return err
	}
	rows, done := c.query(ctx, r, args)
	for rows != nil && rows.Next() {
		if err = each(rows); err != nil {
			break
		}
	}
	if derr := done(); err == nil {
		err = derr
	}
	return err
}

// RawQueryRow is RawQuery for one row, scanned into dest. No row is
// sql.ErrNoRows, as database/sql reports it.
func RawQueryRow(ctx context.Context, dc any, q string, args []any, dest ...any) error {
	c, err := conn(dc)
	if err != nil {
		return err
	}
	r, err := rebind(q, len(args))
	if err != nil {
		return err
	}
	rows, done := c.query(ctx, r, args)
	if rows != nil && rows.Next() {
		err = rows.Scan(dest...)
	} else {
		err = sql.ErrNoRows
	}
	if derr := done(); derr != nil {
		return derr
	}
	return err
}

// ExecCommit runs q, with ? placeholders, as the last statement of the
// transaction begun on the store's driver connection dc (sql.Conn.Raw's),
// and commits it in the same round trip: with its BEGIN too when nothing
// else ran. database/sql's Commit then has nothing to send. When q fails,
// PostgreSQL skips the COMMIT and the transaction is left to be rolled
// back; a COMMIT that turns into a rollback is pgx.ErrTxCommitRollback.
func ExecCommit(ctx context.Context, dc any, q string, args ...any) error {
	c, err := conn(dc)
	if err != nil {
		return err
	}
	r, err := rebind(q, len(args))
	if err != nil {
		return err
	}
	if c.tx != txPending && c.tx != txOpen {
		return errors.New("postgres: ExecCommit outside a transaction")
	}
	b := &pgx.Batch{}
	if c.tx == txPending {
		b.Queue("begin")
	}
	c.tx = txOpen
	b.Queue(r, args...)
	b.Queue("commit")
	br := c.Conn.Conn().SendBatch(ctx, b)
	var tag pgconn.CommandTag
	for range b.QueuedQueries {
		if tag, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return c.pgInputError(err)
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	c.tx = txCommitted
	return nil
}
