package store

import (
	"context"
	"database/sql"
	"maps"
	"slices"
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
	// eng is the pool's store's engine, for the queries that run on a
	// conn.
	eng engine
	// off leaves statements to the driver: pgx prepares and caches each
	// connection's statements by itself.
	off bool

	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool
	closed  bool
}

func newStmtCache(pool *sql.DB, background bool) *stmtCache {
	return &stmtCache{pool: pool, background: background, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// maxPrepared bounds each pool's prepared statements. The store has a few
// hundred texts; the bound only matters for texts built at run time.
const maxPrepared = 2048

// get returns the prepared statement for q, or nil when it is not ready.
func (c *stmtCache) get(q string) *sql.Stmt {
	if c.off {
		return nil
	}
	c.mu.Lock()
	if st := c.m[q]; st != nil || c.closed {
		c.mu.Unlock()
		return st
	}
	if len(c.m)+len(c.pending) >= maxPrepared {
		// A text built at run time in too many shapes runs unprepared
		// rather than growing the cache without end.
		c.mu.Unlock()
		return nil
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

// conn is where a query runs: a write transaction, a read-only transaction
// or the reader pool, with the context of the operation it serves. Queries
// go through a prepared statement of the pool's cache when one is ready,
// else run as plain text. It is the store's one way to run a query: Tx
// embeds it and keeps its *sql.Tx to itself. Each distinct text stays
// prepared for the life of the database handle, up to maxPrepared.
type conn struct {
	ctx   context.Context
	stmts *stmtCache
	tx    *sql.Tx // nil: run on the pool itself
}

// prepared returns the ready statement for q, bound to the transaction if
// there is one, or nil.
func (c conn) prepared(q string) *sql.Stmt {
	st := c.stmts.get(q)
	if st != nil && c.tx != nil {
		st = c.tx.StmtContext(c.ctx, st)
	}
	return st
}

func (c conn) exec(q string, args ...any) (sql.Result, error) {
	if st := c.prepared(q); st != nil {
		return st.ExecContext(c.ctx, args...)
	}
	if c.tx != nil {
		return c.tx.ExecContext(c.ctx, q, args...)
	}
	return c.stmts.pool.ExecContext(c.ctx, q, args...)
}

func (c conn) queryRow(q string, args ...any) *sql.Row {
	if st := c.prepared(q); st != nil {
		return st.QueryRowContext(c.ctx, args...)
	}
	if c.tx != nil {
		return c.tx.QueryRowContext(c.ctx, q, args...)
	}
	return c.stmts.pool.QueryRowContext(c.ctx, q, args...)
}

func (c conn) query(q string, args ...any) (*sql.Rows, error) {
	if st := c.prepared(q); st != nil {
		return st.QueryContext(c.ctx, args...)
	}
	if c.tx != nil {
		return c.tx.QueryContext(c.ctx, q, args...)
	}
	return c.stmts.pool.QueryContext(c.ctx, q, args...)
}

// reader runs queries on the reader pool for ctx.
func (db *DB) reader(ctx context.Context) conn { return conn{ctx, db.rstmts, nil} }

// readTx runs queries in a read-only transaction, for reads that need one
// consistent snapshot.
func (db *DB) readTx(ctx context.Context, tx *sql.Tx) conn { return conn{ctx, db.rstmts, tx} }

// readRow is reader(ctx).queryRow, for the hot single-row reads.
func (db *DB) readRow(ctx context.Context, q string, args ...any) *sql.Row {
	return db.reader(ctx).queryRow(q, args...)
}

// counterDelta is what a transaction adds to a variant's counters:
// impressions (CUPED's n), conversions (its sum of Y), and the sums of the
// covariate X, of X² and of X·Y.
type counterDelta struct{ impressions, conversions, sumX, sumXX, sumXY int64 }

// countImpression and countConversion add to a variant's counters at
// commit: a batch of a hundred new users then costs one UPDATE per variant
// instead of a hundred.
func (tx *Tx) countImpression(variantID int64) { tx.delta(variantID).impressions++ }

func (tx *Tx) countConversion(variantID int64) { tx.delta(variantID).conversions++ }

// countCovariate adds a new assignment's covariate x to its variant's sums.
func (tx *Tx) countCovariate(variantID, x int64) {
	if x == 0 {
		return
	}
	d := tx.delta(variantID)
	d.sumX += x
	d.sumXX += x * x
}

// countConvertedCovariate adds the covariate x of a converting user to its
// variant's sum of X·Y (Y is 1).
func (tx *Tx) countConvertedCovariate(variantID, x int64) {
	if x != 0 {
		tx.delta(variantID).sumXY += x
	}
}

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

// flushCounts writes the counter increments gathered over the transaction.
// Variants go in ascending id, as in every transaction: two processes'
// group commits that count the same variants then lock their rows in one
// order, and never each wait for the other.
func (tx *Tx) flushCounts() error {
	if len(tx.counts) == 0 {
		return nil
	}
	// In id order, as every writer takes these rows' locks: two processes
	// on one PostgreSQL database, each locking the other's next row, would
	// deadlock.
	ids := slices.Sorted(maps.Keys(tx.counts))
	if err := tx.db.eng.flushCounts(tx, ids); err != nil {
		return err
	}
	clear(tx.counts)
	return nil
}

// flushCountsEach writes the deltas of the variants ids, sorted, with a
// statement per variant and another for its hour's: on SQLite, in the
// process, a statement costs no round trip.
func (tx *Tx) flushCountsEach(ids []int64) error {
	for _, id := range ids {
		d := tx.counts[id]
		if d.sumX != 0 || d.sumXY != 0 {
			// Only users with history move the CUPED sums; everyone else
			// keeps the one statement of the counters.
			if _, err := tx.exec(`UPDATE campaign_variants SET impressions = impressions + ?, conversions = conversions + ?,
				cuped_sum_x = cuped_sum_x + ?, cuped_sum_xx = cuped_sum_xx + ?, cuped_sum_xy = cuped_sum_xy + ? WHERE id = ?`,
				d.impressions, d.conversions, d.sumX, d.sumXX, d.sumXY, id); err != nil {
				return err
			}
			continue
		}
		if _, err := tx.exec(`UPDATE campaign_variants SET impressions = impressions + ?, conversions = conversions + ? WHERE id = ?`,
			d.impressions, d.conversions, id); err != nil {
			return err
		}
	}
	// The same increments per hour, for the results page's daily charts.
	return tx.flushHours(ids)
}
