package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"sync"
	"time"
)

// The multi-row statements of a group commit (rows.go) run on the driver
// connection itself, under the transaction database/sql holds on it, rather
// than through database/sql's statement API. Per execution that API turned
// the arguments into a fresh []driver.NamedValue (a statement of sixteen
// events is 112 values, 4.5 KiB), checked each one, and bound the statement
// to the transaction with another allocation: on the event route it was a
// tenth of the bytes allocated per request, with the garbage collection
// they cost. Here the arguments are built as the driver takes them, in a
// buffer the transactions share, and each statement is prepared once on
// the connection.

// rowArgs appends values to a multi-row statement's arguments. Every value
// must already be one the driver binds (int64, string, nil): nothing
// converts it on this path.
func rowArgs(a []driver.NamedValue, vs ...any) []driver.NamedValue {
	for _, v := range vs {
		a = append(a, driver.NamedValue{Ordinal: len(a) + 1, Value: v})
	}
	return a
}

// rowStmts are the multi-row statements prepared on the writer's driver
// connection. The writer pool has one connection; when database/sql
// replaces it, the statements of the old one died with it and are
// dropped. mu is held while a statement runs, so close never finalizes
// one in use, and after close nothing prepares or runs.
type rowStmts struct {
	mu     sync.Mutex
	dc     any
	m      map[string]driver.Stmt
	closed bool
}

func (s *rowStmts) exec(ctx context.Context, dc any, q string, args []driver.NamedValue) (driver.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.stmt(ctx, dc, q)
	if err != nil {
		return nil, err
	}
	x, ok := st.(driver.StmtExecContext)
	if !ok {
		return nil, fmt.Errorf("store: driver statement %T cannot execute", st)
	}
	return x.ExecContext(ctx, args)
}

// query runs q and calls row with each row it returns, whose values are
// valid only during the call.
func (s *rowStmts) query(ctx context.Context, dc any, q string, args []driver.NamedValue, row func([]driver.Value) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.stmt(ctx, dc, q)
	if err != nil {
		return err
	}
	x, ok := st.(driver.StmtQueryContext)
	if !ok {
		return fmt.Errorf("store: driver statement %T cannot query", st)
	}
	rows, err := x.QueryContext(ctx, args)
	if err != nil {
		return err
	}
	vals := make([]driver.Value, len(rows.Columns()))
	for {
		if err = rows.Next(vals); err != nil {
			break
		}
		if err = row(vals); err != nil {
			break
		}
	}
	if cerr := rows.Close(); err == io.EOF {
		err = cerr
	}
	return err
}

// prepare prepares the statements of ms on the writer's connection, where
// the group commits run them, while no commit waits: each is costly to
// parse, and the first commits would otherwise parse them in turn. It is
// best effort: a statement that fails here is prepared when first run.
func (s *rowStmts) prepare(ctx context.Context, w *sql.DB, ms ...multiRow) {
	c, err := w.Conn(ctx)
	if err != nil {
		return
	}
	defer c.Close()
	c.Raw(func(dc any) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, m := range ms {
			for _, q := range m.texts {
				s.stmt(ctx, dc, q)
			}
		}
		return nil
	})
}

// stmt is q prepared on dc; s.mu is held.
func (s *rowStmts) stmt(ctx context.Context, dc any, q string) (driver.Stmt, error) {
	if s.closed {
		return nil, errClosed
	}
	if s.dc != dc {
		s.dc, s.m = dc, map[string]driver.Stmt{}
	}
	st := s.m[q]
	if st == nil {
		p, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return nil, fmt.Errorf("store: driver connection %T cannot prepare", dc)
		}
		var err error
		if st, err = p.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
		s.m[q] = st
	}
	return st, nil
}

// close finalizes the statements of the writer's connection before the
// pool closes it. database/sql discards a connection whose statement a
// cancelled context interrupted, and closing it freed what its statements
// point to: finalizing one of those crashes, so they are only dropped.
// Raw hands over only a connection the pool still keeps, which tells the
// two apart.
func (s *rowStmts) close(w *sql.DB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if c, err := w.Conn(ctx); err == nil {
			c.Raw(func(dc any) error {
				if dc == s.dc {
					for _, st := range s.m {
						st.Close()
					}
				}
				return nil
			})
			c.Close()
		}
		cancel()
	}
	s.dc, s.m, s.closed = nil, nil, true
}

// commitConn commits and hands the connection back to the pool at once,
// as committing a transaction of the pool itself would: the next writer
// must not wait for this transaction's bookkeeping (end).
func (tx *Tx) commitConn() error {
	err := tx.raw.Commit()
	tx.sc.Close()
	return err
}

// insertEventRows runs a multi-row events insert and sets each event's id.
func (tx *Tx) insertEventRows(q string, args []driver.NamedValue, chunk []pendingEvent) error {
	r, err := tx.execRows(q, args)
	if err != nil {
		return err
	}
	// One statement on the only writer numbers its rows consecutively in
	// VALUES order (AUTOINCREMENT never reuses an id), ending at the last
	// insert id.
	last, err := r.LastInsertId()
	if err != nil {
		return err
	}
	for j, e := range chunk {
		e.res.ID = last - int64(len(chunk)-1-j)
	}
	return nil
}

// queryRows runs a multi-row statement that returns rows in the
// transaction, calling row with each (see rowStmts.query).
func (tx *Tx) queryRows(q string, args []driver.NamedValue, row func([]driver.Value) error) error {
	return tx.sc.Raw(func(dc any) error {
		return tx.db.rows.query(tx.ctx, dc, q, args, row)
	})
}

// execRows runs a multi-row statement in the transaction.
func (tx *Tx) execRows(q string, args []driver.NamedValue) (driver.Result, error) {
	var res driver.Result
	err := tx.sc.Raw(func(dc any) (err error) {
		res, err = tx.db.rows.exec(tx.ctx, dc, q, args)
		return err
	})
	return res, err
}
