package store

import (
	"database/sql/driver"
	"strings"
)

// SQLite takes the rows a group commit queued (rows.go) as multi-row
// VALUES statements, run on the driver connection (sqlite_rawrows.go).
// PostgreSQL takes them as arrays instead (postgres_rows.go).

// multiRow is an INSERT whose VALUES list comes in power-of-two lengths up
// to max rows, so the writer keeps few distinct statements prepared.
//
// Each statement costs its commit a run of the driver and of SQLite's
// statement machinery, so the fewer a commit needs the better: every row
// of ours has at most eight values, and sixty-four of them go in one
// statement. Binding is linear in the parameters since modernc.org/sqlite
// v1.60.1; before, each parameter searched the argument list from its
// start, and statements were held to 128 parameters (sixteen events) to
// bound that square. maxParams still gives a wider row fewer rows a
// statement.
type multiRow struct {
	max   int
	texts map[int]string
}

const (
	maxRowsPerStmt = 64
	maxParams      = 512
)

func newMultiRow(prefix, row, suffix string) multiRow {
	m := multiRow{max: maxRowsPerStmt, texts: map[int]string{}}
	for m.max > 1 && m.max*strings.Count(row, "?") > maxParams {
		m.max /= 2
	}
	for n := 1; n <= m.max; n *= 2 {
		m.texts[n] = prefix + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") + suffix
	}
	return m
}

// chunks calls fn with consecutive runs of rows [i, i+n), n a power of two.
func (m multiRow) chunks(rows int, fn func(i, n int, q string) error) error {
	for i := 0; i < rows; {
		n := m.max
		for n > rows-i {
			n /= 2
		}
		if err := fn(i, n, m.texts[n]); err != nil {
			return err
		}
		i += n
	}
	return nil
}

const assignPrefix = `INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES `

// The group commit's statements, prepared when the store opens (sqlite.go).
var (
	usersInsert  = newMultiRow(`INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen) VALUES `, `(?, ?, '{}', ?, ?)`, usersUpsert)
	assignInsert = newMultiRow(assignPrefix, `(?, ?, ?, ?)`, assignSuffix)
	// RETURNING names the rows inserted: the others were stored already.
	assignReturning = newMultiRow(assignPrefix, `(?, ?, ?, ?)`, assignSuffix+` RETURNING campaign_id, user_key`)
	// OR FAIL: a statement that may abort halfway makes SQLite copy every
	// page it touches into a statement journal first, to undo just that
	// statement. Here a failure fails the whole transaction, which is
	// rolled back and retried request by request, so nothing needs undoing
	// statement by statement.
	eventsInsert = newMultiRow(`INSERT OR FAIL INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts) VALUES `,
		`(?, ?, ?, ?, ?, ?, ?)`, ``)
	// Metric values (Tx.flushMetrics): a conversion goes in once, the
	// others add; each returns the rows it changed, as RETURNING's rows
	// come in no promised order.
	metricConversionsInsert = newMultiRow(metricValuesPrefix, `(?, ?, ?, ?, 1)`,
		` ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value`)
	metricValuesAdd = newMultiRow(metricValuesPrefix, `(?, ?, ?, ?, ?)`,
		` ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING campaign_id, metric_id, user_key, value`)
)

// multiRows are the group commit's multi-row statements, prepared when the
// store opens.
var multiRows = []multiRow{usersInsert, assignInsert, assignReturning, eventsInsert,
	metricConversionsInsert, metricValuesAdd, indexValues, indexFromEvents}

const metricValuesPrefix = `INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES `

// moveMetricValuesSQLite is sqliteEngine.moveMetricValues.
func (tx *Tx) moveMetricValuesSQLite(conversion bool, list []*metricMove, moved func(metricValueRef, float64)) error {
	m, cols := metricValuesAdd, 5
	if conversion {
		m, cols = metricConversionsInsert, 4
	}
	var campaign, metric, variant lastBox[int64]
	return m.chunks(len(list), func(i, n int, q string) error {
		args := tx.argsFor(cols * n)
		for _, mv := range list[i : i+n] {
			args = rowArgs(args, campaign.of(mv.ref.campaign), metric.of(mv.ref.metric), mv.ref.key, variant.of(mv.variant))
			if !conversion {
				args = rowArgs(args, mv.delta)
			}
		}
		return tx.queryRows(q, args, func(v []driver.Value) error {
			ref := metricValueRef{campaign: asInt64(v[0]), metric: asInt64(v[1])}
			switch k := v[2].(type) {
			case string:
				ref.key = k
			case []byte:
				ref.key = string(k)
			}
			moved(ref, asFloat64(v[3]))
			return nil
		})
	})
}

// asInt64 and asFloat64 read a number the driver returned, whatever its
// storage class.
func asInt64(v driver.Value) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

func asFloat64(v driver.Value) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// lastBox turns values into database/sql arguments, reusing the previous
// interface value while the value repeats: the rows of one batch share the
// app, the time and often the event's name and the variant, and every new
// interface value holding an int64 or a string is an allocation.
type lastBox[T comparable] struct {
	v   T
	box any
}

func (b *lastBox[T]) of(v T) any {
	if b.box == nil || v != b.v {
		b.v, b.box = v, v
	}
	return b.box
}

// flushUsersSQLite writes tx.userOrder.
func (tx *Tx) flushUsersSQLite() error {
	now := any(ms(tx.now))
	var app lastBox[int64]
	return usersInsert.chunks(len(tx.userOrder), func(i, n int, q string) error {
		args := tx.argsFor(4 * n)
		for _, u := range tx.userOrder[i : i+n] {
			args = rowArgs(args, app.of(u.appID), u.userID, now, now)
		}
		_, err := tx.execRows(q, args)
		return err
	})
}

// insertEventsSQLite writes tx.events and sets each one's id.
func (tx *Tx) insertEventsSQLite() error {
	now := any(ms(tx.now))
	var app lastBox[int64]
	var name lastBox[string]
	return eventsInsert.chunks(len(tx.events), func(i, n int, q string) error {
		args := tx.argsFor(7 * n)
		for _, e := range tx.events[i : i+n] {
			args = rowArgs(args, app.of(e.appID), name.of(e.eventID), e.user, e.session, e.meta, e.l, now)
		}
		return tx.insertEventRows(q, args, tx.events[i:i+n])
	})
}

// insertAssignmentsSQLite writes the queued assignments. Nearly always
// every one is new, so they go in with a plain INSERT … DO NOTHING first:
// when its change count is every row, each was inserted, without the cost
// of RETURNING a result row per user (a seventh of a new user's store
// CPU). Otherwise a savepoint undoes that insert and the RETURNING form
// names the rows it inserts.
func (tx *Tx) insertAssignmentsSQLite() error {
	if _, err := tx.exec(`SAVEPOINT assignments`); err != nil {
		return err
	}
	all, err := tx.insertAssignments(false)
	if err == nil && !all {
		if _, err = tx.exec(`ROLLBACK TO assignments`); err == nil {
			_, err = tx.insertAssignments(true)
		}
	}
	if err != nil {
		return err
	}
	_, err = tx.exec(`RELEASE assignments`)
	return err
}

// insertAssignments writes the queued assignments. Without returning it
// reports whether every row went in, and marks them all inserted if so;
// with it, it marks the rows inserted that RETURNING names.
func (tx *Tx) insertAssignments(returning bool) (all bool, err error) {
	now := any(ms(tx.now))
	var campaignArg, variantArg lastBox[int64]
	m := assignInsert
	if returning {
		m = assignReturning
	}
	var changed int64
	err = m.chunks(len(tx.assigns), func(i, n int, q string) error {
		chunk := tx.assigns[i : i+n]
		args := tx.argsFor(4 * n)
		for _, a := range chunk {
			args = rowArgs(args, campaignArg.of(a.ref.campaign), a.ref.key, variantArg.of(a.vid), now)
		}
		if !returning {
			r, err := tx.execRows(q, args)
			if err != nil {
				return err
			}
			k, err := r.RowsAffected()
			changed += k
			return err
		}
		// Rare (a user stored already: a returning user the cache forgot,
		// the same new user in two batches): the rows it names are read
		// through database/sql.
		vals := make([]any, len(args))
		for j, a := range args {
			vals[j] = a.Value
		}
		return tx.markInserted(tx.query(q, vals...))
	})
	if err != nil || returning || changed != int64(len(tx.assigns)) {
		return false, err
	}
	for i := range tx.assigns {
		tx.assigns[i].inserted = true
	}
	return true, nil
}
