package store

import (
	"cmp"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"

	"service/jsonjs"
)

// Rows that the operations of one group commit add to the same table are
// written at commit by one statement per table (multi-row on SQLite,
// sqlite_rows.go; arrays on PostgreSQL, postgres_rows.go), not by one
// statement per operation: a batch of sixty new users or events then costs
// the per-statement work a handful of times instead of sixty. Only writes
// that nothing in the batch reads back are deferred: a user sighting
// without attributes (flushed before any audience check, which reads
// profiles), a first assignment with its round-robin step, a conversion
// and an event row.
//
// Deferred, they also take their row locks in one order whatever the
// batch holds, which is what keeps two processes' group commits on one
// PostgreSQL database from deadlocking: users by key, round-robin
// campaigns' rows by id, assignments by (campaign, key), conversions by
// the same key, metric values by (campaign, metric, key) and their sums by
// (campaign, metric, variant) (flushMetrics), events, then variants'
// counters by id (flushCounts). A round-robin step, a conversion or a
// metric's sums written in the middle of the batch, as each operation
// came, took a campaign's or a variant's row after some assignments' keys
// in one process and before them in another. What still locks as it comes:
// a user's attributes (touchUser), and a new session link, which writes
// what was queued before it (linkSession).

// assignSuffix and usersUpsert end both stores' inserts of those rows.
const assignSuffix = ` ON CONFLICT (campaign_id, user_key) DO NOTHING`

var usersUpsert = fmt.Sprintf(` ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
	WHERE users.last_seen <= excluded.last_seen - %d`, lastSeenResolution)

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
	fresh map[userRef]struct{}
	// linked are users this transaction linked to a session: recorded
	// with the commit's other sightings, yet never fresh, since the
	// session's earlier events are theirs now.
	linked    map[userRef]struct{}
	events    []pendingEvent
	logs      map[logKey]int // index in events of each queued logId
	assigns   []pendingAssign
	assignIdx map[int64]map[string]int // campaign, user key -> index in assigns
	// rrNext backs the round-robin campaigns of one commit, and convs
	// are the conversions queued for it.
	rrNext []rrCampaign
	convs  []pendingConv
	// metrics are the metric events queued for the commit.
	metrics []pendingMetric
	// wrote are the places (pendingAssign.seq) of the assignments written
	// while conversions were queued, for those conversions to tell the
	// ones queued after them.
	wrote map[assignRef]int
	// staged are the events this transaction wrote, for the event indexer.
	staged []indexRow
	// args backs the arguments of one multi-row statement at a time, and
	// cols the arrays of one PostgreSQL statement.
	args []driver.NamedValue
	cols pgColumns
	// runs and runText back the event_users rows of an indexing chunk.
	runs    []indexRun
	runText []byte
	// journal holds the commit's metric moves (metricmoves.go).
	journal []byte
}

// maxKeptRows bounds what a buffer keeps between transactions: a rare
// large transaction's buffers go to the collector.
const maxKeptRows = 4096

// reset empties the buffers for the next transaction, dropping every
// reference they hold so that nothing they held stays reachable.
func (b *txBufs) reset() {
	clear(b.users)
	clear(b.fresh)
	clear(b.linked)
	clear(b.logs)
	clear(b.wrote)
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
	b.rrNext = emptied(b.rrNext)
	b.convs = emptied(b.convs)
	b.metrics = emptied(b.metrics)
	b.staged = emptied(b.staged)
	b.args = emptied(b.args)
	b.cols.reset()
	b.runs = emptied(b.runs)
	if cap(b.runText) > 64*maxKeptRows {
		b.runText = nil
	}
	b.journal = b.journal[:0]
	if cap(b.journal) > 64*maxKeptRows {
		b.journal = nil
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

// sessionRef is the key of the events a visitor logged by sessionId
// alone: the session under the app's id negated. SQLite's event_users
// holds them so (migration 24), in the same sorted runs as a user's
// (sqlite_eventindex.go), where they never meet a user's, since every
// lookup by user names a real app's id; an erasure or an export names the
// user's and the sessions' events by these keys on both engines.
func sessionRef(appID int64, sessionID string) userRef {
	return userRef{-appID, sessionID}
}

// session reports whether r names a session (sessionRef).
func (r userRef) session() bool { return r.appID < 0 }

// app is the id of the app whose user or session r names.
func (r userRef) app() int64 {
	if r.session() {
		return -r.appID
	}
	return r.appID
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

// sortUsers sorts the queued sightings by key, the order of their rows.
func (tx *Tx) sortUsers() {
	slices.SortFunc(tx.userOrder, func(a, b userRef) int {
		return cmp.Or(cmp.Compare(a.appID, b.appID), strings.Compare(a.userID, b.userID))
	})
}

// flushUsers writes the queued sightings, in the order the engine's row
// locks need (engine.insertUsers).
func (tx *Tx) flushUsers() error {
	if len(tx.userOrder) == 0 {
		return nil
	}
	err := tx.db.eng.insertUsers(tx)
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
	err := tx.db.eng.insertEvents(tx)
	if err == nil {
		for _, e := range tx.events {
			if u, ok := e.user.(string); ok {
				tx.stageEvent(userRef{e.appID, u}, e.eventID, ms(tx.now), e.res.ID)
			} else if s, ok := e.session.(string); ok {
				tx.stageEvent(sessionRef(e.appID, s), e.eventID, ms(tx.now), e.res.ID)
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
	// seq is the assignment's place among those the transaction queued
	// (Tx.queued), which tells a conversion queued before it from one
	// queued after.
	seq int
	// rr is the round-robin campaign whose counter picks vid at the
	// commit (roundRobin), nil for a weighted one.
	rr *liveCampaign
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
// which fills out (see flushAssignments); a round-robin campaign's variant
// is picked there. The caller has found none queued for ref
// (pendingAssignment).
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
	p := pendingAssign{ref: ref, vid: vid, outs: []*assignOutcome{out}, seq: tx.queued}
	tx.queued++
	if lc != nil && lc.cupedMS > 0 {
		p.lc, p.kind, p.user = lc, kind, user
	}
	if lc != nil && lc.roundRobin {
		p.rr = lc
	}
	tx.assigns = append(tx.assigns, p)
}

// flushAssignments takes the round-robin steps of the queued assignments,
// inserts them, counts an impression for each row that is new, and
// answers the operations that asked: a user stored meanwhile (a returning
// user the cache had forgotten, or the same new user's request in another
// batch) is answered the stored variant, without an impression. It runs
// at the commit, and before a session is linked (linkSession).
func (tx *Tx) flushAssignments() error {
	if len(tx.assigns) == 0 {
		return nil
	}
	if err := tx.roundRobin(); err != nil {
		return err
	}
	if err := tx.db.eng.insertAssignments(tx); err != nil {
		return err
	}
	if err := tx.recordCovariates(tx.assigns); err != nil {
		return err
	}
	for i := range tx.assigns {
		a := &tx.assigns[i]
		vid := a.vid
		if a.inserted {
			tx.countImpression(vid)
		} else if err := tx.queryRow(`SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`, a.ref.campaign, a.ref.key).Scan(&vid); err != nil {
			return err
		}
		a.answer(vid, ms(tx.now))
	}
	if len(tx.convs) > 0 || len(tx.metrics) > 0 {
		if tx.wrote == nil {
			tx.wrote = map[assignRef]int{}
		}
		for _, a := range tx.assigns {
			if a.inserted {
				tx.wrote[a.ref] = a.seq
			}
		}
	}
	tx.assigns = tx.assigns[:0]
	for _, byKey := range tx.assignIdx {
		clear(byKey)
	}
	return nil
}

// answer answers the operations that asked for the assignment with the
// variant vid, the first with the impression when the row went in, at
// the time now.
func (a *pendingAssign) answer(vid, now int64) {
	for j, out := range a.outs {
		out.variantID, out.recorded = vid, a.inserted && j == 0
		if a.inserted {
			out.assignedAt = now
		}
	}
}

// rrCampaign is a round-robin campaign with first assignments queued in
// this commit, and the value its counter had.
type rrCampaign struct {
	id   int64
	next int64
}

// roundRobin picks the variant of each queued round-robin assignment. The
// counter is shared by every process on the database: its campaign's row
// stays locked until the transaction ends, so a first assignment
// elsewhere waits and takes the next value, never this one. Campaigns are
// locked in ascending id, before any assignment key, as every commit
// takes them. A user stored already (a returning user the cache forgot,
// or the same new user's request committed by another process) takes no
// value: they are answered what is stored, and their assignment leaves
// the queue. The others take the counter's values in the order they were
// queued, as if each had read and moved it in turn.
func (tx *Tx) roundRobin() error {
	rrs := tx.rrNext[:0]
	for i := range tx.assigns {
		if lc := tx.assigns[i].rr; lc != nil && !slices.ContainsFunc(rrs, func(c rrCampaign) bool { return c.id == lc.id }) {
			rrs = append(rrs, rrCampaign{id: lc.id})
		}
	}
	tx.rrNext = rrs
	if len(rrs) == 0 {
		return nil
	}
	slices.SortFunc(rrs, func(a, b rrCampaign) int { return cmp.Compare(a.id, b.id) })
	stored := false
	for k := range rrs {
		c := &rrs[k]
		if err := tx.queryRow(`SELECT rr_next FROM campaigns WHERE id = ?`+tx.db.eng.forUpdate(), c.id).Scan(&c.next); err != nil {
			return err
		}
		found, err := tx.storedAssignments(c.id)
		if err != nil {
			return err
		}
		// tx.assigns is in the order the assignments were queued: sorting
		// comes after.
		taken := int64(0)
		for i := range tx.assigns {
			a := &tx.assigns[i]
			if a.rr == nil || a.rr.id != c.id {
				continue
			}
			if vid, ok := found[a.ref.key]; ok {
				a.answer(vid, 0)
				a.rr, stored = nil, true
				a.outs = nil
				continue
			}
			a.vid = a.rr.variants[(c.next+taken)%int64(len(a.rr.variants))].id
			taken++
		}
		if taken > 0 {
			if _, err := tx.exec(`UPDATE campaigns SET rr_next = rr_next + ? WHERE id = ?`, taken, c.id); err != nil {
				return err
			}
		}
	}
	if stored {
		tx.dropAnswered()
	}
	return nil
}

// storedAssignments returns the variants stored for the keys of the
// campaign's queued round-robin assignments, by key.
func (tx *Tx) storedAssignments(campaign int64) (map[string]int64, error) {
	list := append(tx.runText[:0], '[')
	for i := range tx.assigns {
		if a := &tx.assigns[i]; a.rr != nil && a.rr.id == campaign {
			if len(list) > 1 {
				list = append(list, ',')
			}
			list = jsonjs.AppendQuote(list, a.ref.key)
		}
	}
	list = append(list, ']')
	tx.runText = list[:0]
	rows, err := tx.query(tx.db.eng.assignmentsOfKeys(), string(list), campaign)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found map[string]int64
	for rows.Next() {
		var key string
		var vid, at int64
		if err := rows.Scan(&key, &vid, &at); err != nil {
			return nil, err
		}
		if found == nil {
			found = map[string]int64{}
		}
		found[key] = vid
	}
	return found, rows.Err()
}

// dropAnswered takes out of the queue the assignments roundRobin answered
// from what was stored (outs emptied), and indexes the others again.
func (tx *Tx) dropAnswered() {
	kept := tx.assigns[:0]
	for _, a := range tx.assigns {
		if a.outs != nil {
			kept = append(kept, a)
		}
	}
	clear(tx.assigns[len(kept):])
	tx.assigns = kept
	for _, byKey := range tx.assignIdx {
		clear(byKey)
	}
	for i, a := range tx.assigns {
		tx.assignIdx[a.ref.campaign][a.ref.key] = i
	}
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
		tx.assignInserted(campaign, key)
	}
	return rows.Err()
}

// assignInserted marks inserted the queued assignment of campaign and key,
// a row of the assignments' RETURNING.
func (tx *Tx) assignInserted(campaign int64, key []byte) {
	// By campaign, then by key: a lookup by string(key) alone does not
	// copy the bytes.
	if j, ok := tx.assignIdx[campaign][string(key)]; ok {
		tx.assigns[j].inserted = true
	}
}
