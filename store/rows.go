package store

import (
	"cmp"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
)

// Rows that the operations of one group commit add to the same table are
// written at commit by one multi-row statement per table, not by one
// statement per operation: a batch of sixty new users or events then costs
// SQLite's per-statement work (and the driver's) a handful of times instead
// of sixty. Only writes that nothing in the batch reads back are deferred:
// a user sighting without attributes (flushed before any audience check,
// which reads profiles), a first assignment (flushed before a conversion
// is looked for) and an event row.

// multiRow is an INSERT whose VALUES list comes in power-of-two lengths up
// to max rows, so the writer keeps few distinct statements prepared.
//
// The driver binds each of a statement's parameters by searching the
// argument list from its start (modernc.org/sqlite's conn.bind), so binding
// costs the square of the parameters: sixty-four events of seven values
// spent more binding than inserting. So a statement holds at most about
// maxParams parameters, and a wider row gets fewer rows a statement.
type multiRow struct {
	max   int
	texts map[int]string
}

const (
	maxRowsPerStmt = 64
	maxParams      = 128
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

const (
	assignPrefix = `INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at) VALUES `
	assignSuffix = ` ON CONFLICT (campaign_id, user_key) DO NOTHING`
)

var (
	usersUpsert = fmt.Sprintf(` ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
		WHERE users.last_seen <= excluded.last_seen - %d`, lastSeenResolution)
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
)

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

// txBufs are the containers a write transaction gathers its rows in. They
// pass from one transaction to the next (DB.bufs) rather than grow from
// nothing in each group commit: on the SDK's write paths they were a third
// of the bytes the store allocated per request.
type txBufs struct {
	users     map[userRef]struct{}
	userOrder []userRef
	// fresh are users this transaction inserted, where its users
	// statement reports them (PostgreSQL's). Logging an event records its
	// user in the same transaction, so a user first seen now logged no
	// event before now: their CUPED covariate is 0 without a query.
	fresh     map[userRef]struct{}
	events    []pendingEvent
	logs      map[logKey]int // index in events of each queued logId
	assigns   []pendingAssign
	assignIdx map[int64]map[string]int // campaign, user key -> index in assigns
	// staged are the events this transaction wrote, for the event indexer.
	staged []indexRow
	// args backs the arguments of one multi-row statement at a time, and
	// cols the arrays of one PostgreSQL statement.
	args []driver.NamedValue
	cols pgColumns
	// runs and runText back the event_users rows of an indexing chunk.
	runs    []indexRun
	runText []byte
}

// maxKeptRows bounds what a buffer keeps between transactions: a rare
// large transaction's buffers go to the collector.
const maxKeptRows = 4096

// reset empties the buffers for the next transaction, dropping every
// reference they hold so that nothing they held stays reachable.
func (b *txBufs) reset() {
	clear(b.users)
	clear(b.fresh)
	clear(b.logs)
	// A campaign's map of keys is kept for its next new users, unless
	// many campaigns took first assignments.
	if len(b.assignIdx) > 16 {
		clear(b.assignIdx)
	}
	for _, byKey := range b.assignIdx {
		clear(byKey)
	}
	b.userOrder = emptied(b.userOrder)
	b.events = emptied(b.events)
	b.assigns = emptied(b.assigns)
	b.staged = emptied(b.staged)
	b.args = emptied(b.args)
	b.runs = emptied(b.runs)
	if cap(b.runText) > 64*maxKeptRows {
		b.runText = nil
	}
}

// emptied returns s with no elements, zeroing the ones it held, or nil
// when it grew past maxKeptRows.
func emptied[T any](s []T) []T {
	if cap(s) > maxKeptRows {
		return nil
	}
	clear(s[:cap(s)])
	return s[:0]
}

// argsFor returns an empty argument list with room for n values; what a
// previous statement left in it is overwritten, and reset drops it.
func (b *txBufs) argsFor(n int) []driver.NamedValue {
	if cap(b.args) < n {
		b.args = make([]driver.NamedValue, 0, n)
	}
	return b.args[:0]
}

type userRef struct {
	appID  int64
	userID string
}

type pendingEvent struct {
	appID                  int64
	eventID                string
	user, session, meta, l any
	res                    *EventResult
	// dups are the answers of later events of the same transaction with
	// this event's logId: they get its id once the row is written.
	dups []*EventResult
}

// logKey names an event by its idempotency key.
type logKey struct {
	appID int64
	logID string
}

// pendingLog returns the event queued in this transaction with the logId,
// or nil: a logId repeated before the commit must not insert a second row.
func (tx *Tx) pendingLog(appID int64, logID string) *pendingEvent {
	if i, ok := tx.logs[logKey{appID, logID}]; ok {
		return &tx.events[i]
	}
	return nil
}

// touchUserLater records a sighting without attributes for the commit: the
// user is inserted if unknown, and last_seen moves forward at most once a
// minute (see touchUser).
func (tx *Tx) touchUserLater(appID int64, userID string) {
	if tx.users == nil {
		tx.users = map[userRef]struct{}{}
	}
	k := userRef{appID, userID}
	if _, ok := tx.users[k]; !ok {
		tx.users[k] = struct{}{}
		tx.userOrder = append(tx.userOrder, k)
	}
}

// flushUsers writes the queued sightings. On PostgreSQL they go in sorted,
// so that two processes' group commits lock the same users' rows in one
// order (see sortAssignments).
func (tx *Tx) flushUsers() error {
	if len(tx.userOrder) == 0 {
		return nil
	}
	if tx.db.dia.lockOrder {
		slices.SortFunc(tx.userOrder, func(a, b userRef) int {
			return cmp.Or(cmp.Compare(a.appID, b.appID), strings.Compare(a.userID, b.userID))
		})
	}
	var err error
	if tx.db.dia.columns {
		err = tx.flushUsersPG()
	} else {
		now := any(ms(tx.now))
		var app lastBox[int64]
		err = tx.db.dia.usersInsert.chunks(len(tx.userOrder), func(i, n int, q string) error {
			args := tx.argsFor(4 * n)
			for _, u := range tx.userOrder[i : i+n] {
				args = rowArgs(args, app.of(u.appID), u.userID, now, now)
			}
			_, err := tx.execRows(q, args)
			return err
		})
	}
	clear(tx.users)
	tx.userOrder = tx.userOrder[:0]
	return err
}

// insertEventLater queues an event row for the commit, which fills res.ID.
func (tx *Tx) insertEventLater(e pendingEvent) {
	if l, ok := e.l.(string); ok {
		if tx.logs == nil {
			tx.logs = map[logKey]int{}
		}
		tx.logs[logKey{e.appID, l}] = len(tx.events)
	}
	tx.events = append(tx.events, e)
}

func (tx *Tx) flushEvents() error {
	if len(tx.events) == 0 {
		return nil
	}
	var err error
	if tx.db.dia.columns {
		err = tx.insertEventsPG()
	} else {
		now := any(ms(tx.now))
		var app lastBox[int64]
		var name lastBox[string]
		err = tx.db.dia.eventsInsert.chunks(len(tx.events), func(i, n int, q string) error {
			args := tx.argsFor(7 * n)
			for _, e := range tx.events[i : i+n] {
				args = rowArgs(args, app.of(e.appID), name.of(e.eventID), e.user, e.session, e.meta, e.l, now)
			}
			return tx.insertEventRows(q, args, tx.events[i:i+n])
		})
	}
	if err == nil {
		for _, e := range tx.events {
			if u, ok := e.user.(string); ok {
				tx.stageEvent(e.appID, u, e.eventID, ms(tx.now), e.res.ID)
			}
			for _, d := range e.dups {
				d.ID = e.res.ID
			}
		}
	}
	tx.events = tx.events[:0]
	clear(tx.logs)
	return err
}

type assignRef struct {
	campaign int64
	key      string // storedKey
}

// pendingAssign is a first assignment waiting for the commit. outs are the
// outcomes of the operations that asked for it: the first records the
// impression if the row is new; later ones (the same user twice in one
// batch) answer the same variant.
type pendingAssign struct {
	ref      assignRef
	vid      int64
	inserted bool
	outs     []*assignOutcome
	// lc, kind and user are what the CUPED covariate x is counted for
	// (see covariates); lc is nil when CUPED is off for the assignment.
	lc   *liveCampaign
	kind byte
	user string
	x    int64
}

// pendingAssignment returns the assignment queued in this transaction for
// the user, or nil.
func (tx *Tx) pendingAssignment(ref assignRef) *pendingAssign {
	if i, ok := tx.assignIdx[ref.campaign][ref.key]; ok {
		return &tx.assigns[i]
	}
	return nil
}

// assignLater queues a first assignment to variant vid for the commit,
// which fills out (see flushAssignments). The caller has found none queued
// for ref (pendingAssignment).
func (tx *Tx) assignLater(ref assignRef, vid int64, out *assignOutcome, lc *liveCampaign, kind byte, user string) {
	if tx.assignIdx == nil {
		tx.assignIdx = map[int64]map[string]int{}
	}
	byKey := tx.assignIdx[ref.campaign]
	if byKey == nil {
		byKey = map[string]int{}
		tx.assignIdx[ref.campaign] = byKey
	}
	byKey[ref.key] = len(tx.assigns)
	p := pendingAssign{ref: ref, vid: vid, outs: []*assignOutcome{out}}
	if lc != nil && lc.cupedMS > 0 {
		p.lc, p.kind, p.user = lc, kind, user
	}
	tx.assigns = append(tx.assigns, p)
}

// flushAssignments inserts the queued assignments, counts an impression for
// each row that is new, and answers the operations that asked: a user
// stored meanwhile (a returning user the cache had forgotten, or the same
// new user's request in the batch before) is answered the stored variant,
// without an impression.
//
// Nearly always every queued row is new, so on SQLite the rows go in with
// a plain INSERT … DO NOTHING first: when its change count is every row, each was
// inserted, without the cost of RETURNING a result row per user (a seventh
// of a new user's store CPU). Otherwise a savepoint undoes that insert and
// the RETURNING form names the rows it inserts.
func (tx *Tx) flushAssignments() error {
	if len(tx.assigns) == 0 {
		return nil
	}
	if tx.db.dia.lockOrder {
		tx.sortAssignments()
	}
	if err := tx.covariates(tx.assigns); err != nil {
		return err
	}
	if err := tx.insertAllAssignments(); err != nil {
		return err
	}
	for i := range tx.assigns {
		a := &tx.assigns[i]
		vid := a.vid
		if a.inserted {
			tx.countImpression(vid)
			if a.x != 0 {
				// Rare: most new users have no goal events before their
				// first assignment, and their rows keep the default 0.
				if _, err := tx.exec(`UPDATE assignments SET covariate = ? WHERE campaign_id = ? AND user_key = ?`, a.x, a.ref.campaign, a.ref.key); err != nil {
					return err
				}
				tx.countCovariate(vid, a.x)
			}
		} else if err := tx.queryRow(`SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`, a.ref.campaign, a.ref.key).Scan(&vid); err != nil {
			return err
		}
		for j, out := range a.outs {
			out.variantID, out.recorded = vid, a.inserted && j == 0
		}
	}
	tx.assigns = tx.assigns[:0]
	for _, byKey := range tx.assignIdx {
		clear(byKey)
	}
	return nil
}

// sortAssignments puts the queued assignments in (campaign, user key)
// order. Rows of a multi-row insert are locked in the order they go in; two
// processes' group commits that insert the same users' first assignments
// (the same new user on two replicas at once) then wait for each other in
// one order instead of deadlocking, and the later one finds the row
// stored.
func (tx *Tx) sortAssignments() {
	if slices.IsSortedFunc(tx.assigns, comparePending) {
		return
	}
	slices.SortFunc(tx.assigns, comparePending)
	for i, a := range tx.assigns {
		tx.assignIdx[a.ref.campaign][a.ref.key] = i
	}
}

func comparePending(a, b pendingAssign) int {
	return cmp.Or(cmp.Compare(a.ref.campaign, b.ref.campaign), strings.Compare(a.ref.key, b.ref.key))
}

// insertAllAssignments writes the queued assignments and marks those that
// went in. On SQLite they go in without RETURNING first, in a savepoint
// that the RETURNING form replaces when a row was stored already (see
// flushAssignments). On PostgreSQL, whose RETURNING costs little next to a
// statement's round trip, one statement does it in one pass.
func (tx *Tx) insertAllAssignments() error {
	if tx.db.dia.columns {
		return tx.insertAssignmentsPG()
	}
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
	m := tx.db.dia.assignInsert
	if returning {
		m = tx.db.dia.assignReturning
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

// markInserted marks inserted the queued assignments that rows, the
// (campaign_id, user_key) a RETURNING named, went in as.
func (tx *Tx) markInserted(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var campaign int64
		var key sql.RawBytes
		if err := rows.Scan(&campaign, &key); err != nil {
			return err
		}
		// By campaign, then by key: a lookup by string(key) alone does
		// not copy the bytes.
		if j, ok := tx.assignIdx[campaign][string(key)]; ok {
			tx.assigns[j].inserted = true
		}
	}
	return rows.Err()
}
