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
// its BEGIN with its first statement, not in a round trip of its own; a
// statement put off with Defer goes with the next one; one that ends with
// ExecCommit sends its COMMIT with its last statement; one that runs
// nothing sends nothing. A group commit of new users was six round trips
// (BEGIN, the campaign's status, users, assignments, counters, COMMIT) and
// is three, which pgx can pipeline where database/sql cannot. A round trip
// costs the service and the server system calls, a wakeup each and the
// server a statement's start and end: with both on one core, going from
// six to three took BenchmarkBatchNewUsers from 17.1–17.7 µs of the core a
// user to 14.6–14.8.
//
// database/sql's rows can only come from pgx's stdlib running its own
// query, which cannot carry what is owed: RawQuery and RawQueryRow scan
// with pgx instead, for the statements that open a group commit. Every
// other statement of a transaction goes through rebindConn's Exec, Query
// or Prepare (the store's pools prepare nothing through database/sql on
// PostgreSQL), and each sends what is owed first: a statement run outside
// the transaction would be committed on its own, and one put off must run
// before anything that reads what it writes.

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

// owedStmt is a statement put off by Defer.
type owedStmt struct {
	q    string
	args []any
	each func(pgx.CollectableRow) error
}

// owes reports whether the transaction owes the server its BEGIN or a
// statement put off.
func (c *rebindConn) owes() bool { return c.tx == txPending || len(c.owed) > 0 }

// batch returns a batch that starts with what the transaction owes, and
// reads its results: pgx sends it in one round trip.
func (c *rebindConn) batch() (*pgx.Batch, func(pgx.BatchResults) error) {
	b := &pgx.Batch{}
	begin := c.tx == txPending
	if begin {
		b.Queue("begin")
		c.tx = txOpen
	}
	owed := c.owed
	for _, o := range owed {
		b.Queue(o.q, o.args...)
	}
	c.owed = nil
	return b, func(br pgx.BatchResults) error {
		if begin {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		for _, o := range owed {
			rows, err := br.Query()
			for err == nil && rows.Next() {
				if o.each != nil {
					err = o.each(rows)
				}
			}
			if rows != nil {
				rows.Close()
				if err == nil {
					err = rows.Err()
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// sendOwed sends what the transaction owes, before a statement that
// cannot carry it.
func (c *rebindConn) sendOwed(ctx context.Context) error {
	if !c.owes() {
		return nil
	}
	b, read := c.batch()
	br := c.Conn.Conn().SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// execOwed runs q, and then the statements then, after what the
// transaction owes, all in one round trip; the tag is the last one's.
func (c *rebindConn) execOwed(ctx context.Context, q string, args []any, then ...string) (pgconn.CommandTag, error) {
	b, read := c.batch()
	b.Queue(q, args...)
	for _, t := range then {
		b.Queue(t)
	}
	br := c.Conn.Conn().SendBatch(ctx, b)
	err := read(br)
	var tag pgconn.CommandTag
	for range 1 + len(then) {
		if err == nil {
			tag, err = br.Exec()
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// committed is the error of a COMMIT that answered tag: PostgreSQL answers
// ROLLBACK to the COMMIT of a transaction a statement failed.
func committed(tag pgconn.CommandTag) error {
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Defer puts off q, with ? placeholders, in the transaction begun on the
// store's driver connection dc (sql.Conn.Raw's), until the transaction's
// next statement, which it precedes in the same round trip; each is
// handed its rows then. args must not change until then. An error of q
// is that next statement's.
func Defer(dc any, q string, args []any, each func(pgx.CollectableRow) error) error {
	c, r, err := storeConn(dc, q, len(args), "Defer")
	if err != nil {
		return err
	}
	c.owed = append(c.owed, owedStmt{r, args, each})
	return nil
}

func (t lazyTx) Commit() error {
	c := t.c
	switch {
	case c.tx == txCommitted || c.tx == txPending && len(c.owed) == 0:
		// ExecCommit committed it, or nothing ran.
		c.tx = txNone
		return nil
	case c.tx == txPending || c.tx == txOpen:
		tag, err := c.execOwed(t.ctx, "commit", nil)
		c.tx = txNone
		if err != nil {
			switch c.Conn.Conn().PgConn().TxStatus() {
			case 'I':
			case 'E':
				// A statement put off failed, and the COMMIT was skipped.
				if _, rerr := c.Conn.Conn().Exec(t.ctx, "rollback"); rerr != nil {
					_ = c.Conn.Close()
				}
			default:
				// Where the commit stands is unknown: the connection is
				// not used again.
				_ = c.Conn.Close()
			}
			return c.pgInputError(err)
		}
		return committed(tag)
	}
	return sql.ErrTxDone
}

func (t lazyTx) Rollback() error {
	c := t.c
	c.owed = nil // never sent
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

// storeConn returns the store's driver connection dc (sql.Conn.Raw's) and
// q rebound for args arguments; with what, it refuses a connection outside
// a transaction begun lazily, for what only such a transaction can do.
func storeConn(dc any, q string, args int, what string) (*rebindConn, string, error) {
	c, ok := dc.(*rebindConn)
	if !ok {
		return nil, "", errors.New("postgres: not a store connection")
	}
	if what != "" && c.tx != txPending && c.tx != txOpen {
		return nil, "", errors.New("postgres: " + what + " outside a transaction")
	}
	r, err := rebind(q, args)
	return c, r, err
}

// query sends r, rebound, on pgx's connection, after what the transaction
// owes in the same round trip; done closes what it opened and returns the
// first error, the rows' included.
func (c *rebindConn) query(ctx context.Context, r string, args []any) (rows pgx.Rows, done func() error) {
	failed := func(err error) (pgx.Rows, func() error) {
		return nil, func() error { return c.pgInputError(err) }
	}
	pc := c.Conn.Conn()
	if !c.owes() {
		rows, err := pc.Query(ctx, r, args...)
		if err != nil {
			if rows != nil {
				rows.Close()
			}
			return failed(err)
		}
		return rows, func() error { rows.Close(); return c.pgInputError(rows.Err()) }
	}
	b, read := c.batch()
	b.Queue(r, args...)
	br := pc.SendBatch(ctx, b)
	err := read(br)
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
	c, r, err := storeConn(dc, q, len(args), "")
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
	found := false
	err := RawQuery(ctx, dc, q, args, func(r pgx.CollectableRow) error {
		if found {
			return nil
		}
		found = true
		return r.Scan(dest...)
	})
	if err == nil && !found {
		return sql.ErrNoRows
	}
	return err
}

// ExecCommit runs q, with ? placeholders, as the last statement of the
// transaction begun on the store's driver connection dc (sql.Conn.Raw's),
// and commits it in the same round trip, after what the transaction owes.
// database/sql's Commit then has nothing to send. When q fails, PostgreSQL
// skips the COMMIT and the transaction is left to be rolled back; a COMMIT
// that turns into a rollback is pgx.ErrTxCommitRollback.
func ExecCommit(ctx context.Context, dc any, q string, args ...any) error {
	c, r, err := storeConn(dc, q, len(args), "ExecCommit")
	if err != nil {
		return err
	}
	tag, err := c.execOwed(ctx, r, args, "commit")
	if err == nil {
		err = committed(tag)
	}
	if err != nil {
		return c.pgInputError(err)
	}
	c.tx = txCommitted
	return nil
}
