package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Metric values move in two steps. A group commit judges its metric
// events as they come (countMetric, flushMetrics: the campaign running,
// the assignment, the window) and writes what they move as one row of
// metric_moves, in the transaction that stores the events, so an
// acknowledged event's moves are as durable as the event. The users'
// values and the variants' sums follow when the moves are applied
// (applyMoves): by the leader about once every MetricMovesEvery,
// and before anything reads values or sums (results, guardrails, an
// export, an erasure), so every reader sees every acknowledged event.
//
// Written with each commit, the values cost the commit one upsert per
// user and metric it moved, each on a b-tree page of its own, and the
// variants' sums rows that every commit of the campaign locked: a third of
// a metric event's cost on SQLite, and more round trips and a hot row on
// PostgreSQL. Applied together, a page is written once per pass, a user's
// events of the pass move their value once, and the sums rows are locked
// by the applier alone.
//
// A new link's move of the session's values to the user goes the same
// way, as an entry of the journal (takeSession): applied in order with
// the moves, it reaches the session's values whether they were applied
// before the link or wait in the same pass.

// MetricMovesEvery is how often the leader applies the moves waiting: the
// longer, the more of a user's events share a write. However long, a pass
// holds the writer for one step at a time (applyMoves).
const MetricMovesEvery = time.Second

// The journal's entries, one a line: a count or sum's move, a
// conversion's, and a link's move of a session's values to its user.
// Keys are written with their length, as user ids may hold any character.
//
//	a <campaign> <metric> <variant> <delta> <len>:<key>
//	c <campaign> <metric> <variant> <len>:<key>
//	r <campaign> <app> <len>:<session key> <len>:<user key>
const (
	entryAdd        = 'a'
	entryConversion = 'c'
	entryRekey      = 'r'
)

// appendMoveEntry appends a move to a journal text.
func appendMoveEntry(b []byte, mv *metricMove) []byte {
	if mv.m.typ == MetricConversion {
		b = append(b, entryConversion, ' ')
	} else {
		b = append(b, entryAdd, ' ')
	}
	b = strconv.AppendInt(b, mv.ref.campaign, 10)
	b = strconv.AppendInt(append(b, ' '), mv.ref.metric, 10)
	b = strconv.AppendInt(append(b, ' '), mv.variant, 10)
	if mv.m.typ != MetricConversion {
		b = strconv.AppendFloat(append(b, ' '), mv.delta, 'g', -1, 64)
	}
	return append(appendJournalKey(append(b, ' '), mv.ref.key), '\n')
}

// appendRekeyEntry appends a link's move of the session key's values in
// the campaign to the user key.
func appendRekeyEntry(b []byte, campaign, appID int64, from, to string) []byte {
	b = append(b, entryRekey, ' ')
	b = strconv.AppendInt(b, campaign, 10)
	b = strconv.AppendInt(append(b, ' '), appID, 10)
	b = appendJournalKey(append(b, ' '), from)
	return append(appendJournalKey(append(b, ' '), to), '\n')
}

func appendJournalKey(b []byte, key string) []byte {
	b = strconv.AppendInt(b, int64(len(key)), 10)
	return append(append(b, ':'), key...)
}

// journalEntry is one decoded entry.
type journalEntry struct {
	kind                  byte
	campaign, metric, app int64
	variant               int64
	delta                 float64
	key, to               string
}

var errBadJournal = errors.New("metric_moves: malformed entry")

// eachJournalEntry calls fn with every entry of a journal text.
func eachJournalEntry(s string, fn func(*journalEntry)) error {
	var e journalEntry
	for len(s) > 0 {
		if len(s) < 2 || s[1] != ' ' {
			return errBadJournal
		}
		e = journalEntry{kind: s[0]}
		s = s[2:]
		var ok bool
		switch e.kind {
		case entryAdd, entryConversion:
			var d string
			e.campaign, s, ok = journalInt(s)
			if ok {
				e.metric, s, ok = journalInt(s)
			}
			if ok {
				e.variant, s, ok = journalInt(s)
			}
			if ok && e.kind == entryAdd {
				d, s, ok = journalField(s)
				if ok {
					var err error
					e.delta, err = strconv.ParseFloat(d, 64)
					ok = err == nil
				}
			}
			if ok {
				e.key, s, ok = journalKey(s)
			}
		case entryRekey:
			e.campaign, s, ok = journalInt(s)
			if ok {
				e.app, s, ok = journalInt(s)
			}
			if ok {
				e.key, s, ok = journalKey(s)
			}
			if ok && len(s) > 0 && s[0] == ' ' {
				e.to, s, ok = journalKey(s[1:])
			} else {
				ok = false
			}
		}
		if !ok || len(s) == 0 || s[0] != '\n' {
			return errBadJournal
		}
		s = s[1:]
		fn(&e)
	}
	return nil
}

// journalField returns the text up to the next space, and what follows it.
func journalField(s string) (string, string, bool) {
	i := strings.IndexByte(s, ' ')
	if i <= 0 {
		return "", s, false
	}
	return s[:i], s[i+1:], true
}

func journalInt(s string) (int64, string, bool) {
	f, rest, ok := journalField(s)
	if !ok {
		return 0, s, false
	}
	n, err := strconv.ParseInt(f, 10, 64)
	return n, rest, err == nil
}

// journalKey reads <len>:<key>.
func journalKey(s string) (string, string, bool) {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", s, false
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil || n < 0 || n > len(s)-i-1 {
		return "", s, false
	}
	return s[i+1 : i+1+n], s[i+1+n:], true
}

// flushJournal writes the commit's journal entries as one row, unless
// the events' insert took them (PostgreSQL's, in the same round trip).
func (tx *Tx) flushJournal() error {
	if len(tx.journal) == 0 {
		return nil
	}
	tx.db.journalInserts.Add(1)
	_, err := tx.exec(`INSERT INTO metric_moves (moves) VALUES (?)`, string(tx.journal))
	tx.journal = tx.journal[:0]
	return err
}

// ApplyMetricMoves applies the metric moves that commits journaled before
// it began (see above) to the users' values and the variants' sums. With
// nothing waiting, it costs one read.
func (db *DB) ApplyMetricMoves(ctx context.Context) error { return db.applyMoves(ctx, 0) }

// applyMoves applies the journal in steps, each its own transaction,
// pausing between them; the leader's passes pause, so that the requests'
// group commits go between the steps.
//
// While merged rows wait, a step applies the oldest (applyMerged).
// Otherwise the commits' rows up to the pass's start are read, merged by
// value (a user's events of the second move the value once), and taken
// in one step (mergeStep): applied when they are few, else written back
// as merged rows of metricSlice moves in key order, for the next steps to
// apply one at a time. They are read and merged before that step begins,
// so that it holds SQLite's writer only for the rows' deletion and the
// merged rows' insertion. A link's entries are applied when its rows are
// taken, and the merged rows hold the keys they lead to; as no commits'
// rows are taken while merged rows wait, a link never comes between a
// session's moves and their merged row.
func (db *DB) applyMoves(ctx context.Context, pause time.Duration) error {
	var upto sql.NullInt64
	if err := db.read.QueryRowContext(ctx, `SELECT max(id) FROM metric_moves`).Scan(&upto); err != nil || !upto.Valid {
		return err
	}
	for {
		more, err := db.stepJournal(ctx, upto.Int64)
		if err != nil || !more {
			return err
		}
		if pause > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(pause):
			}
		}
	}
}

// stepJournal does one step of a pass over the rows up to id upto, and
// says whether another may follow.
func (db *DB) stepJournal(ctx context.Context, upto int64) (bool, error) {
	var more bool
	err := db.retryConcurrent(ctx, func(tx *Tx) (err error) {
		more, err = tx.applyMerged()
		return err
	})
	if err != nil || more {
		return more, err
	}
	return db.mergeStep(ctx, upto)
}

// retryConcurrent runs fn in a write transaction, again while it loses to
// another process's (on PostgreSQL, a campaign's deletion, whose cascade
// locks values in another order, or another pass that took the rows
// first).
func (db *DB) retryConcurrent(ctx context.Context, fn func(tx *Tx) error) error {
	for i := 0; ; i++ {
		err := db.withTx(ctx, fn)
		if err == nil || i == maxConflictRetries || !(db.lostToConcurrent(err) || errors.Is(err, errJournalMoved)) {
			return err
		}
	}
}

// errJournalMoved is a merging step's finding that another pass took or
// merged rows between its read and its transaction: it reads again.
var errJournalMoved = errors.New("metric_moves: taken by another pass")

// ApplyMetricMovesPaced is the leader's pass (scheduler.MetricMoves):
// ApplyMetricMoves with a pause between its steps.
func (db *DB) ApplyMetricMovesPaced(ctx context.Context) error {
	return db.applyMoves(ctx, metricMovesPause)
}

// metricSlice is the most moves a merged row holds: under a millisecond
// of SQLite's writer (a variable for the tests' small slices).
var metricSlice = 256

// metricMovesPause is the leader's pause between two steps.
const metricMovesPause = 2 * time.Millisecond

// applyMerged applies the oldest merged row, and says whether there was
// one. On PostgreSQL the steps of all processes go one at a time
// (lockMetricMoves).
func (tx *Tx) applyMerged() (bool, error) {
	if err := tx.db.eng.lockMetricMoves(tx); err != nil {
		return false, err
	}
	journal, err := tx.takeJournal(`DELETE FROM metric_moves WHERE id = (SELECT min(id) FROM metric_moves WHERE merged) RETURNING id, moves`)
	if err != nil || len(journal) == 0 {
		return false, err
	}
	return true, tx.applyRows(journal)
}

// mergeStep takes the commits' rows up to id upto, read and merged
// beforehand, and says whether merged rows now wait.
func (db *DB) mergeStep(ctx context.Context, upto int64) (bool, error) {
	for try := 0; ; try++ {
		journal, err := readJournal(ctx, db.read, upto)
		if err != nil || len(journal) == 0 {
			return false, err
		}
		moves, links, err := mergeJournal(journal)
		if err != nil {
			return false, err
		}
		var list []*metricMove
		if len(moves) > metricSlice {
			list = make([]*metricMove, 0, len(moves))
			for _, mv := range moves {
				list = append(list, mv)
			}
			slices.SortFunc(list, compareMoves)
		}
		err = db.withTx(ctx, func(tx *Tx) error {
			if err := tx.db.eng.lockMetricMoves(tx); err != nil {
				return err
			}
			var merged bool
			if err := tx.queryRow(mergedWait).Scan(&merged); err != nil {
				return err
			} else if merged {
				return errJournalMoved
			}
			// Exactly the rows read, which ids never reused make sure of
			// (AUTOINCREMENT on SQLite, an identity on PostgreSQL).
			ids := make([]int64, len(journal))
			for i, r := range journal {
				ids[i] = r.id
			}
			res, err := tx.exec(`DELETE FROM metric_moves WHERE id IN (`+tx.db.eng.jsonIDs()+`) AND NOT merged`, jsonIDs(ids))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n != int64(len(journal)) {
				return errJournalMoved // taken by another pass
			}
			if err := tx.moveSessions(links); err != nil {
				return err
			}
			if list == nil {
				return tx.writeMetricMoves(moves)
			}
			for part := range slices.Chunk(list, metricSlice) {
				b := tx.journal[:0]
				for _, mv := range part {
					b = appendMoveEntry(b, mv)
				}
				tx.journal = b[:0]
				if _, err := tx.exec(`INSERT INTO metric_moves (moves, merged) VALUES (?, ?)`, string(b), true); err != nil {
					return err
				}
			}
			return nil
		})
		switch {
		case try == maxConflictRetries:
		case errors.Is(err, errJournalMoved):
			// Read again: another pass took some of the rows, or merged
			// rows wait, which the caller's next step applies.
			var merged bool
			if err := db.read.QueryRowContext(ctx, mergedWait).Scan(&merged); err != nil || merged {
				return merged, err
			}
			continue
		case err != nil && db.lostToConcurrent(err):
			continue
		}
		return list != nil, err
	}
}

// mergedWait tells whether merged rows wait: a merging step then leaves
// the commits' rows to the steps after those rows are applied.
const mergedWait = `SELECT EXISTS (SELECT 1 FROM metric_moves WHERE merged)`

// readJournal reads the commits' rows up to id upto, in id order.
func readJournal(ctx context.Context, q *sql.DB, upto int64) ([]journalRow, error) {
	return scanJournal(q.QueryContext(ctx, `SELECT id, moves FROM metric_moves WHERE id <= ? AND NOT merged ORDER BY id`, upto))
}

// applyMetricMoves applies every journaled move, merged or not, within
// tx: for the writes that must find every value in place (an erasure, a
// metric's new definition).
func (tx *Tx) applyMetricMoves() error {
	if err := tx.db.eng.lockMetricMoves(tx); err != nil {
		return err
	}
	journal, err := tx.takeJournal(`DELETE FROM metric_moves RETURNING id, moves`)
	if err != nil || len(journal) == 0 {
		return err
	}
	return tx.applyRows(journal)
}

// applyRows applies the moves of journal rows taken by tx: the links'
// first, then the values and sums.
func (tx *Tx) applyRows(journal []journalRow) error {
	moves, links, err := mergeJournal(journal)
	if err != nil {
		return err
	}
	if err := tx.moveSessions(links); err != nil {
		return err
	}
	return tx.writeMetricMoves(moves)
}

// journalRow is a row of metric_moves.
type journalRow struct {
	id    int64
	moves string
}

// takeJournal deletes rows of the journal by q and returns them in id
// order.
func (tx *Tx) takeJournal(q string) ([]journalRow, error) { return scanJournal(tx.query(q)) }

// scanJournal reads rows of the journal, and puts them in id order
// (RETURNING's rows come in no promised order).
func scanJournal(rows *sql.Rows, err error) ([]journalRow, error) {
	if err != nil {
		return nil, err
	}
	var journal []journalRow
	err = eachRow(rows, func() error {
		var r journalRow
		if err := rows.Scan(&r.id, &r.moves); err != nil {
			return err
		}
		journal = append(journal, r)
		return nil
	})
	slices.SortFunc(journal, func(a, b journalRow) int { return cmp.Compare(a.id, b.id) })
	return journal, err
}

// Placeholders of a merged move's kind, until the pass reads the metric.
var (
	journalCount      = &liveMetric{typ: MetricCount}
	journalConversion = &liveMetric{typ: MetricConversion}
)

// mergeJournal reads the rows' moves, merged by value, and their links'
// entries, whose sessions' moves among the rows go to the user: they were
// judged before the link, as after it a session's events count for its
// user. The links' move of the values the sessions have now (applied in
// an earlier pass) is moveSessions'.
func mergeJournal(journal []journalRow) (map[metricValueRef]*metricMove, []journalEntry, error) {
	moves := map[metricValueRef]*metricMove{}
	type rekeyed struct {
		campaign int64
		key      string
	}
	rekeys := map[rekeyed]string{}
	var links []journalEntry
	n := 0
	for _, r := range journal {
		err := eachJournalEntry(r.moves, func(e *journalEntry) {
			// A second of moves is tens of milliseconds of work: with
			// GOMAXPROCS=1 the requests' goroutines would wait for the
			// scheduler's 10 ms slice to end.
			if n++; n%1024 == 0 {
				runtime.Gosched()
			}
			if e.kind == entryRekey {
				rekeys[rekeyed{e.campaign, e.key}] = e.to
				links = append(links, *e)
				return
			}
			ref := metricValueRef{e.campaign, e.metric, e.key}
			if mv := moves[ref]; mv != nil {
				mv.delta += e.delta
				return
			}
			m := journalCount
			if e.kind == entryConversion {
				m = journalConversion
			}
			moves[ref] = &metricMove{ref: ref, m: m, variant: e.variant, delta: e.delta}
		})
		if err != nil {
			return nil, nil, fmt.Errorf("%w (row %d)", err, r.id)
		}
	}
	if len(rekeys) > 0 {
		for ref, mv := range moves {
			to, ok := rekeys[rekeyed{ref.campaign, ref.key}]
			if !ok {
				continue
			}
			delete(moves, ref)
			ref.key = to
			if other := moves[ref]; other != nil {
				other.delta += mv.delta
			} else {
				mv.ref = ref
				moves[ref] = mv
			}
		}
	}
	return moves, links, nil
}

// moveSessions moves the values that linked sessions have to their
// users.
func (tx *Tx) moveSessions(links []journalEntry) error {
	for _, e := range links {
		if _, err := tx.exec(`UPDATE metric_values SET user_key = ? WHERE campaign_id = ?
			AND metric_id IN (SELECT id FROM metrics WHERE app_id = ?) AND user_key = ?
			AND NOT EXISTS (SELECT 1 FROM metric_values AS o WHERE o.campaign_id = metric_values.campaign_id
				AND o.metric_id = metric_values.metric_id AND o.user_key = ?)`, e.to, e.campaign, e.app, e.key, e.to); err != nil {
			return err
		}
	}
	return nil
}

// liveMoves readies moves for writeMetricMoves: a campaign or metric
// deleted since its moves were journaled took its values with it, and its
// moves go with them; the others take their metric's type and cap, which
// cannot change while a campaign that uses the metric runs, and which a
// change applies the journal before (UpdateMetric).
func (tx *Tx) liveMoves(moves map[metricValueRef]*metricMove) error {
	campaigns := map[int64]bool{}
	live := map[int64]*liveMetric{}
	for ref := range moves {
		if _, ok := campaigns[ref.campaign]; !ok {
			var ok bool
			if err := tx.queryRow(`SELECT EXISTS (SELECT 1 FROM campaigns WHERE id = ?)`, ref.campaign).Scan(&ok); err != nil {
				return err
			}
			campaigns[ref.campaign] = ok
		}
		if _, ok := live[ref.metric]; !ok {
			m := &liveMetric{id: ref.metric}
			var capv sql.NullFloat64
			err := tx.queryRow(`SELECT type, cap FROM metrics WHERE id = ?`, ref.metric).Scan(&m.typ, &capv)
			if errors.Is(err, sql.ErrNoRows) {
				m = nil
			} else if err != nil {
				return err
			} else {
				m.cap, m.capped = capv.Float64, capv.Valid
			}
			live[ref.metric] = m
		}
	}
	for ref, mv := range moves {
		m := live[ref.metric]
		if m == nil || !campaigns[ref.campaign] {
			delete(moves, ref)
			continue
		}
		mv.m = m
	}
	return nil
}
