package store

import (
	"database/sql"
	"errors"
	"slices"
	"strconv"
)

// A row of event_users holds a run: the events of one user and event id
// that one chunk of a generation indexes (see sqlite_eventindex.go), up to
// maxRun of them. A generation is sorted by user, event id and time, so a
// user who logged the same event a dozen times in a second has a dozen
// consecutive rows there, and they become one row of event_users instead
// of a dozen. Each row costs the writer a b-tree search, its comparisons
// and the driver's binding, whatever its size: that was most of the
// indexing, and the indexing a tenth of an event's cost.
//
// The row's key (ts, id) is the run's last event in (ts, id) order, so a
// window's "ts >= since" still finds every run with an event in it (the
// reader then drops the run's earlier ones), and "id <= upto" still tells
// a finished generation's rows from the one being indexed: a run's events
// all belong to one generation. The run column is a JSON array of every
// event of the run as [ts, id] in (ts, id) order, so SQL can read it too
// (json_each), and NULL when the row is one event, which its key names:
// the rows that the SQL paths write (indexEverything, indexFromEvents),
// and most rows where users log a handful of different events.
//
// Deleting an event rewrites its run (the events_delete_event_index
// trigger), so retention never leaves a run naming a deleted event.
const maxRun = 32

// appendRun appends the JSON of a run of events: [[ts,id],...].
func appendRun(b []byte, evs []indexRow) []byte {
	b = append(b, '[')
	for i, e := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, e.ts, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, e.id, 10)
		b = append(b, ']')
	}
	return append(b, ']')
}

var errBadRun = errors.New("event_users: malformed run")

// eachRunEvent calls fn with every [ts, id] of a run as appendRun or
// SQLite's JSON functions write it (no spaces).
func eachRunEvent(run []byte, fn func(ts, id int64)) error {
	if len(run) < 2 || run[0] != '[' || run[len(run)-1] != ']' {
		return errBadRun
	}
	b := run[1 : len(run)-1]
	for len(b) > 0 {
		if b[0] != '[' {
			return errBadRun
		}
		ts, rest, ok := leadingInt(b[1:])
		if !ok || len(rest) == 0 || rest[0] != ',' {
			return errBadRun
		}
		id, rest, ok := leadingInt(rest[1:])
		if !ok || len(rest) == 0 || rest[0] != ']' {
			return errBadRun
		}
		fn(ts, id)
		b = rest[1:]
		if len(b) > 0 {
			if b[0] != ',' || len(b) == 1 {
				return errBadRun
			}
			b = b[1:]
		}
	}
	return nil
}

// leadingInt parses the decimal integer at the start of b.
func leadingInt(b []byte) (int64, []byte, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	i := 0
	for ; i < len(b) && i < 19 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if i == 0 || (i < len(b) && b[i] >= '0' && b[i] <= '9') {
		return 0, b, false
	}
	if neg {
		n = -n
	}
	return n, b[i:], true
}

// runEvents calls fn with each event a row of event_users holds: the key's
// own when run is NULL (nil), the run's otherwise.
func runEvents(ts, id int64, run []byte, fn func(ts, id int64)) error {
	if run == nil {
		fn(ts, id)
		return nil
	}
	return eachRunEvent(run, fn)
}

// indexRun is one row of event_users: evs[len(evs)-1] is its key.
type indexRun struct {
	evs []indexRow
	run string // JSON, empty for one event
	end int    // where run ends in the chunk's text
}

// indexRuns writes rows, sorted by key, as runs into event_users.
func (tx *Tx) indexRuns(rows []indexRow) error {
	runs := tx.runs[:0]
	text := tx.runText[:0]
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && j-i < maxRun && rows[j].user == rows[i].user && rows[j].eventID == rows[i].eventID {
			j++
		}
		if j-i > 1 {
			text = appendRun(text, rows[i:j])
		}
		runs = append(runs, indexRun{evs: rows[i:j], end: len(text)})
		i = j
	}
	// The chunk's text becomes one string that every run's value slices:
	// one allocation for the chunk.
	all, start := string(text), 0
	for i := range runs {
		if len(runs[i].evs) > 1 {
			runs[i].run = all[start:runs[i].end]
		}
		start = runs[i].end
	}
	tx.runs, tx.runText = runs, text
	// Rows come sorted by user: the boxes repeat across a user's rows.
	var app lastBox[int64]
	var user, name lastBox[string]
	return indexValues.chunks(len(runs), func(i, k int, q string) error {
		args := tx.argsFor(6 * k)
		for _, r := range runs[i : i+k] {
			last := r.evs[len(r.evs)-1]
			var run any
			if r.run != "" {
				run = r.run
			}
			args = rowArgs(args, app.of(last.user.appID), user.of(last.user.userID), name.of(last.eventID), last.ts, last.id, run)
		}
		_, err := tx.execRows(q, args)
		return err
	})
}

// expireFromRuns takes the events before cutoff out of the runs that hold
// the events of one retention batch, before the batch is deleted. Batches
// are cut by count and runs by time, so a run's events are spread over
// several batches: the first batch that reaches a run takes all of its
// expired events out at once, the following ones find it done, and the
// delete trigger finds no run to rewrite (it would rewrite a run once for
// each of its events). Between the pass's transactions, events it has yet
// to delete are no longer found by user: they are past retention.
//
// done remembers, across one pass's batches, the key of the last run each
// user and event id had taken out: events up to it need no search.
func (tx *Tx) expireFromRuns(appID, cutoff int64, batch []expiring, done map[runGroup]tailEvent) error {
	slices.SortFunc(batch, func(a, b expiring) int {
		return indexRow{userRef{appID, a.user}, a.tailEvent}.compare(indexRow{userRef{appID, b.user}, b.tailEvent})
	})
	type change struct {
		ts, id int64 // the row's key
		keep   []indexRow
	}
	var changes []change
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].user == batch[i].user && batch[j].eventID == batch[i].eventID {
			j++
		}
		first, last := batch[i], batch[j-1]
		g := runGroup{appID, first.user, first.eventID}
		if d, ok := done[g]; ok && last.tailEvent.compare(d) <= 0 {
			i = j
			continue
		}
		// The runs holding the group's events are the rows from its first
		// event on, up to the first run that starts after its last.
		rows, err := tx.query(`SELECT ts, id, run FROM event_users
			WHERE app_id = ? AND user_id = ? AND event_id = ? AND (ts, id) >= (?, ?) ORDER BY ts, id`,
			appID, first.user, first.eventID, first.ts, first.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var ts, id int64
			var run sql.RawBytes
			if err := rows.Scan(&ts, &id, &run); err != nil {
				rows.Close()
				return err
			}
			if run == nil {
				if (tailEvent{ts: ts, id: id}).compare(last.tailEvent) > 0 {
					break
				}
				continue
			}
			var evs []indexRow
			if err := eachRunEvent(run, func(ts, id int64) {
				evs = append(evs, indexRow{tailEvent: tailEvent{ts: ts, id: id}})
			}); err != nil {
				rows.Close()
				return err
			}
			if len(evs) == 0 || evs[0].tailEvent.compare(last.tailEvent) > 0 {
				break
			}
			keep := slices.DeleteFunc(evs, func(r indexRow) bool { return r.ts < cutoff })
			if len(keep) < len(evs) {
				changes = append(changes, change{ts, id, keep})
			}
			if len(done) >= maxDoneGroups {
				clear(done)
			}
			done[g] = tailEvent{ts: ts, id: id}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range changes {
			if _, err := tx.exec(`DELETE FROM event_users WHERE app_id = ? AND user_id = ? AND event_id = ? AND ts = ? AND id = ?`,
				appID, first.user, first.eventID, c.ts, c.id); err != nil {
				return err
			}
			if len(c.keep) == 0 {
				continue
			}
			var run any
			if len(c.keep) > 1 {
				run = string(appendRun(nil, c.keep))
			}
			k := c.keep[len(c.keep)-1]
			if _, err := tx.exec(`INSERT INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES (?, ?, ?, ?, ?, ?)`,
				appID, first.user, first.eventID, k.ts, k.id, run); err != nil {
				return err
			}
		}
		changes = changes[:0]
		i = j
	}
	return nil
}

// runGroup names the runs of one user (or session: a negative appID, see
// sessionRef) and event id of an app.
type runGroup struct {
	appID         int64
	user, eventID string
}

// maxDoneGroups bounds the memory of one retention pass.
const maxDoneGroups = 100_000

// expiring is an event a retention batch deletes.
type expiring struct {
	user string
	tailEvent
}
