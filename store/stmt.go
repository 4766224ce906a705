package store

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps hot-path statements prepared, per pool. modernc's driver
// does not cache prepared statements, and on the SDK paths parsing and
// planning SQL cost about as much as running it.
//
// On the writer a statement cannot be prepared from inside a write
// transaction: the pool's one connection is the transaction's, so preparing
// would wait for itself. A miss there runs the query unprepared and
// prepares it in the background once the writer is free; database/sql then
// reuses it in every transaction on that connection.
type stmtCache struct {
	pool       *sql.DB
	background bool // prepare misses in the background (the writer)

	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool
	closed  bool
}

func newStmtCache(pool *sql.DB, background bool) *stmtCache {
	return &stmtCache{pool: pool, background: background, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// get returns the prepared statement for q, or nil when it is not ready.
func (c *stmtCache) get(q string) *sql.Stmt {
	c.mu.Lock()
	if st := c.m[q]; st != nil || c.closed {
		c.mu.Unlock()
		return st
	}
	if c.background {
		if !c.pending[q] {
			c.pending[q] = true
			go c.prepare(q)
		}
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	c.prepare(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[q]
}

func (c *stmtCache) prepare(q string) {
	st, err := c.pool.Prepare(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, q)
	if err != nil || c.closed || c.m[q] != nil {
		if st != nil {
			st.Close()
		}
		return // closed meanwhile, or a race: the next miss tries again
	}
	c.m[q] = st
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, st := range c.m {
		st.Close()
	}
	clear(c.m)
}

// exec runs a query of constant text inside the write transaction, through
// a prepared statement when one is ready. Only constant texts belong here:
// each distinct text stays prepared for the life of the database handle.
func (tx *Tx) exec(q string, args ...any) (sql.Result, error) {
	if st := tx.db.wstmts.get(q); st != nil {
		return tx.Stmt(st).Exec(args...)
	}
	return tx.Exec(q, args...)
}

// queryRow is exec's counterpart for single-row queries.
func (tx *Tx) queryRow(q string, args ...any) *sql.Row {
	if st := tx.db.wstmts.get(q); st != nil {
		return tx.Stmt(st).QueryRow(args...)
	}
	return tx.QueryRow(q, args...)
}

// query is exec's counterpart for queries returning rows.
func (tx *Tx) query(q string, args ...any) (*sql.Rows, error) {
	if st := tx.db.wstmts.get(q); st != nil {
		return tx.Stmt(st).Query(args...)
	}
	return tx.Query(q, args...)
}

// readRow runs a single-row query of constant text on the reader pool
// through a prepared statement.
func (db *DB) readRow(ctx context.Context, q string, args ...any) *sql.Row {
	if st := db.rstmts.get(q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return db.read.QueryRowContext(ctx, q, args...)
}

type counterDelta struct{ impressions, conversions int64 }

// countImpression and countConversion add to a variant's counters at
// commit: a batch of a hundred new users then costs one UPDATE per variant
// instead of a hundred.
func (tx *Tx) countImpression(variantID int64) { tx.delta(variantID).impressions++ }

func (tx *Tx) countConversion(variantID int64) { tx.delta(variantID).conversions++ }

func (tx *Tx) delta(variantID int64) *counterDelta {
	if tx.counts == nil {
		tx.counts = map[int64]*counterDelta{}
	}
	d := tx.counts[variantID]
	if d == nil {
		d = &counterDelta{}
		tx.counts[variantID] = d
	}
	return d
}

func (tx *Tx) flushCounts() error {
	for id, d := range tx.counts {
		if _, err := tx.exec(`UPDATE campaign_variants SET impressions = impressions + ?, conversions = conversions + ? WHERE id = ?`,
			d.impressions, d.conversions, id); err != nil {
			return err
		}
	}
	clear(tx.counts)
	return nil
}
