package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Events by user are indexed in the event_users table, which the writer
// fills shortly after the events commit rather than with them. So are the
// events a visitor logs by sessionId alone, by session (sessionRef): the
// "user" of this file is either.
//
// An index on events by (app, user, …) put nearly every event of a batch
// on a b-tree page of its own: each user's latest events sit on their own
// leaf, so a commit of sixty events from sixty users wrote sixty index
// pages to the WAL, and the checkpointer copied them all again. That was
// most of an event's cost. The indexer instead keeps the committed,
// not-yet-indexed events in memory and, about once a second, sorts what
// arrived by user into a generation; each following commit then indexes
// the next few dozen rows of that generation in key order, so a user's
// page is written about once per generation however many events the user
// logged in it, and its repeated events share a row (a run, see
// sqlite_eventruns.go). No commit waits for more than a chunk about twice its own
// events' size, so no request waits behind a long indexing transaction.
//
// Every event therefore is in exactly one of three places: event_users
// (and then, for readers, its id is at most event_users_upto.upto, or it
// belongs to the generation being drained), the generation's remainder,
// or pending. Readers on their own snapshot take event_users up to upto
// and scan the events table above upto (a second or two of events, read
// by rowid); the writer, which must not scan, takes all of event_users
// plus the memory (tail). After a crash the memory is gone, and opening
// the database indexes every event above upto before anything else runs
// (indexAll), so no event is ever missing from a lookup by user.
type eventIndexer struct {
	// on is false until the schema has event_users (OpenNoMigrate).
	on bool

	// mu is held from just before a write transaction's commit until the
	// indexer has applied what that commit did (commitIndex), so the
	// memory follows commits in their order: a generation can never form
	// between an earlier commit and the staging of its events.
	mu sync.Mutex
	// pending holds committed events of users that no generation holds
	// yet, by user, in commit (id) order.
	pending  map[userRef][]tailEvent
	pendingN int
	// names interns event ids: an app logs a handful of distinct ones,
	// and a pending event holding its request's own copy was one more
	// heap object for every garbage collection to mark (tens of
	// thousands under load). Bounded by maxNames.
	names map[string]string
	// gen is the generation being indexed, sorted by key; gen[:pos] are
	// in event_users. genMax is its largest event id: once it is indexed,
	// every event up to genMax is, and upto moves there.
	gen    []indexRow
	pos    int
	genMax int64
	formed time.Time
	// lastIndexed is when a commit last indexed rows; the idle drain
	// leaves the work to commits while they do it.
	lastIndexed time.Time
	// lastSession is the largest id of a session's event staged, and
	// doneMax the largest of a completed generation: every event up to it
	// is in event_users (see holdsSessions).
	lastSession, doneMax int64
	// foreignChecked is foreign.seen when every event then committed was
	// last made sure of (see foreignSinceCheck).
	foreignChecked int64
	stop, done     chan struct{}
}

// tailEvent is what a lookup by user needs of an event.
type tailEvent struct {
	eventID string
	ts, id  int64
}

type indexRow struct {
	user userRef
	tailEvent
}

func (a indexRow) compare(b indexRow) int {
	if c := cmp.Compare(a.user.appID, b.user.appID); c != 0 {
		return c
	}
	if c := strings.Compare(a.user.userID, b.user.userID); c != 0 {
		return c
	}
	return a.tailEvent.compare(b.tailEvent)
}

func (a tailEvent) compare(b tailEvent) int {
	if c := strings.Compare(a.eventID, b.eventID); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ts, b.ts); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

const (
	// generationEvery is how long events gather before they are sorted
	// into a generation: the longer, the more events of one user share a
	// page write, and the longer readers scan the unindexed tail.
	generationEvery = time.Second
	// maxPending forms a generation early when this many events wait,
	// which bounds the memory (about 100 bytes an event).
	maxPending = 100_000
	// minChunk is the fewest rows a commit indexes when a generation has
	// them; a commit with events indexes twice as many rows as it wrote,
	// so a generation is indexed faster than events arrive.
	minChunk = 64
	// idleChunk is the rows of one indexing transaction when no commit
	// does the work (idleDrain).
	idleChunk = 1024
	// maxNames bounds the interned event ids; past it they start over.
	maxNames = 1024
)

// A generation's rows are written from memory: reading each event back
// from the events table by id cost a b-tree search per row, a fifth of
// the indexing. An event deleted meanwhile must not be indexed, though:
// deletions of this process (an app, retention, an erasure) leave the memory with the
// commit that makes them (purged, expired), and the deleting transaction
// skips the rows it indexes itself (gone). A deletion by another process
// leaves the memory as it was, so once another process has committed, the
// rows are taken from the events table by id instead (indexFromEvents),
// where a deleted event simply is not found, until the next indexAll.
var (
	indexValues = newMultiRow(`INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id, run) VALUES `,
		`(?, ?, ?, ?, ?, ?)`, ``)
	indexFromEvents = newMultiRow(`INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
	SELECT `+indexKey+`, event_id, ts, id FROM events WHERE `+indexed+` AND id IN (`, `?`, `)`)
)

// indexKey is an event's key in event_users, its user's or, without one,
// its session's (sessionRef); indexed tells the events that have one.
const (
	indexKey = `CASE WHEN user_id IS NULL THEN -app_id ELSE app_id END, coalesce(user_id, session_id)`
	indexed  = `coalesce(user_id, session_id) IS NOT NULL`
)

// expiry is a retention pass over one app: its events before ms went.
type expiry struct{ appID, before int64 }

// deleted reports whether this transaction deleted events.
func (tx *Tx) deleted() bool { return len(tx.purged)+len(tx.expired)+len(tx.erased) > 0 }

// gone reports whether this transaction deleted the event of r.
func (tx *Tx) gone(r indexRow) bool {
	for _, e := range tx.expired {
		if r.user.app() == e.appID && r.ts < e.before {
			return true
		}
	}
	return slices.Contains(tx.purged, r.user.app()) || slices.Contains(tx.erased, r.user)
}

// stageEvent records an event row written by this transaction, for the
// indexer to take once it has committed; k is its user, or its session
// (sessionRef).
func (tx *Tx) stageEvent(k userRef, eventID string, ts, id int64) {
	if !tx.db.ix.on {
		return
	}
	tx.staged = append(tx.staged, indexRow{k, tailEvent{eventID, ts, id}})
}

// chunkSize is how many rows of the generation this transaction indexes,
// forming a new generation first when one is due; written is how many
// events the transaction itself added. The caller holds ix.mu.
func (tx *Tx) chunkSize(written int) int {
	ix := &tx.db.ix
	if ix.pos == len(ix.gen) {
		if ix.pendingN == 0 || (!tx.drain && ix.pendingN < maxPending && time.Since(ix.formed) < generationEvery) {
			return 0
		}
		ix.form(time.Now())
	}
	if tx.drain {
		return min(len(ix.gen)-ix.pos, idleChunk)
	}
	return min(len(ix.gen)-ix.pos, max(2*written, minChunk))
}

// indexChunk writes the generation's next n rows into event_users, and
// moves upto to the generation's end when they complete it. fromEvents
// reads the rows from the events table (see indexValues).
func (tx *Tx) indexChunk(n int, fromEvents bool) error {
	ix := &tx.db.ix
	rows := ix.gen[ix.pos : ix.pos+n]
	var err error
	if fromEvents {
		err = indexFromEvents.chunks(n, func(i, k int, q string) error {
			args := tx.argsFor(k)
			for _, r := range rows[i : i+k] {
				args = rowArgs(args, r.id)
			}
			_, err := tx.execRows(q, args)
			return err
		})
	} else {
		if tx.deleted() {
			rows = slices.DeleteFunc(slices.Clone(rows), tx.gone)
		}
		err = tx.indexRuns(rows)
	}
	if err != nil {
		return err
	}
	if ix.pos+n == len(ix.gen) {
		_, err = tx.exec(`UPDATE event_users_upto SET upto = ? WHERE upto < ?`, ix.genMax, ix.genMax)
	}
	return err
}

// foreignSinceCheck reports whether another process (a second server, the
// CLI) has committed since the indexer last made sure of its events. Such
// a process indexes its own events, but a generation of this one must not
// move upto past events that process has not indexed yet (it may have
// crashed since); so instead of moving upto, the transaction then indexes
// every event above it (indexEverything).
func (tx *Tx) foreignSinceCheck() (bool, error) {
	var v int64
	if err := tx.queryRow(`PRAGMA data_version`).Scan(&v); err != nil {
		return false, err
	}
	tx.db.sawDataVersion(v)
	tx.foreignSeen = tx.db.foreign.seen.Load()
	return tx.foreignSeen != tx.db.ix.foreignChecked, nil
}

// indexEverything indexes every event above upto, for indexAll. Runs of
// a generation that was being indexed (their key's id is above upto) go
// first, and their events are indexed again one row each: a crash or
// another process left the memory that knew them behind. Such a run's
// key is at or after its events, and its events are above upto, so the
// search goes by each such event's user and event id from the first of
// their times on.
func (tx *Tx) indexEverything() error {
	if _, err := tx.exec(`DELETE FROM event_users
		WHERE (app_id, user_id, event_id) IN (SELECT ` + indexKey + `, event_id FROM events
			WHERE id > (SELECT upto FROM event_users_upto) AND ` + indexed + `)
		AND ts >= (SELECT min(ts) FROM events WHERE id > (SELECT upto FROM event_users_upto))
		AND id > (SELECT upto FROM event_users_upto) AND run IS NOT NULL`); err != nil {
		return err
	}
	if _, err := tx.exec(`INSERT OR IGNORE INTO event_users (app_id, user_id, event_id, ts, id)
		SELECT ` + indexKey + `, event_id, ts, id FROM events
		WHERE id > (SELECT upto FROM event_users_upto) AND ` + indexed + `
		ORDER BY 1, 2, event_id, ts, id`); err != nil {
		return err
	}
	_, err := tx.exec(`UPDATE event_users_upto SET upto = max(upto, (SELECT COALESCE(MAX(id), 0) FROM events))`)
	return err
}

// commitIndexed commits the transaction with the indexer's share of work
// (see eventIndexer) and then applies it to the memory, holding ix.mu
// throughout so that the memory follows commits in their order.
func (tx *Tx) commitIndexed(written int) error {
	ix := &tx.db.ix
	if !ix.on {
		return tx.commitConn()
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	n, foreign := 0, false
	if !tx.indexAll {
		n = tx.chunkSize(written)
		if n > 0 || tx.drain {
			// Asked inside the write transaction, no other process can
			// commit between the answer and this commit.
			var err error
			if foreign, err = tx.foreignSinceCheck(); err != nil {
				return err
			}
			tx.indexAll = foreign && (ix.pos+n == len(ix.gen) || tx.drain)
		}
	} else if _, err := tx.foreignSinceCheck(); err != nil {
		return err
	}
	var err error
	if tx.indexAll {
		err = tx.indexEverything()
	} else if n > 0 {
		err = tx.indexChunk(n, foreign)
	}
	if err != nil {
		return err
	}
	if err := tx.commitConn(); err != nil {
		return err
	}
	if tx.indexAll {
		// Everything committed is indexed now, this transaction's events
		// included.
		clear(ix.pending)
		ix.pendingN, ix.gen, ix.pos, ix.lastSession = 0, nil, 0, 0
		ix.foreignChecked = tx.foreignSeen
		return nil
	}
	var gone func(indexRow) bool
	if tx.deleted() {
		gone = tx.gone
	}
	ix.applyIndex(tx.staged, n, !tx.drain, gone)
	return nil
}

// form sorts every pending event into a new generation. Pending holds
// events in commit order, all above the last generation's ids.
func (ix *eventIndexer) form(now time.Time) {
	users := make([]userRef, 0, len(ix.pending))
	for u := range ix.pending {
		users = append(users, u)
	}
	slices.SortFunc(users, func(a, b userRef) int {
		return indexRow{user: a}.compare(indexRow{user: b})
	})
	gen := ix.gen[:0]
	if cap(gen) > 4*ix.pendingN {
		gen = nil // a burst's buffer is not kept for ever
	}
	for _, u := range users {
		evs := ix.pending[u]
		slices.SortFunc(evs, tailEvent.compare)
		for _, e := range evs {
			gen = append(gen, indexRow{u, e})
			ix.genMax = max(ix.genMax, e.id)
		}
	}
	ix.gen, ix.pos, ix.formed = gen, 0, now
	clear(ix.pending)
	ix.pendingN = 0
}

// applyIndex updates the memory after a commit that indexed n rows of the
// generation and staged events; byCommit is false for the idle drain's
// transactions. The caller holds ix.mu.
func (ix *eventIndexer) applyIndex(staged []indexRow, n int, byCommit bool, gone func(indexRow) bool) {
	ix.pos += n
	if n > 0 && byCommit {
		ix.lastIndexed = time.Now()
	}
	if ix.pos == len(ix.gen) {
		if len(ix.gen) > 0 {
			ix.doneMax = ix.genMax
		}
		ix.gen, ix.pos = ix.gen[:0], 0
	}
	if len(staged) > 0 && ix.pending == nil {
		ix.pending = map[userRef][]tailEvent{}
	}
	for _, r := range staged {
		r.eventID = ix.intern(r.eventID)
		ix.pending[r.user] = append(ix.pending[r.user], r.tailEvent)
		if r.user.session() {
			ix.lastSession = max(ix.lastSession, r.id)
		}
	}
	ix.pendingN += len(staged)
	if gone != nil {
		ix.forget(gone)
	}
}

func (ix *eventIndexer) intern(s string) string {
	if v, ok := ix.names[s]; ok {
		return v
	}
	if ix.names == nil || len(ix.names) >= maxNames {
		ix.names = make(map[string]string)
	}
	ix.names[s] = s
	return s
}

// forget drops from the memory the events a committed transaction
// deleted (gone). Indexed from memory, they would leave index rows of
// events that no longer exist, and a new app given a deleted app's id
// must not see them in lookups.
func (ix *eventIndexer) forget(gone func(indexRow) bool) {
	for u, evs := range ix.pending {
		kept := slices.DeleteFunc(evs, func(e tailEvent) bool { return gone(indexRow{u, e}) })
		ix.pendingN -= len(evs) - len(kept)
		if len(kept) == 0 {
			delete(ix.pending, u)
		} else {
			ix.pending[u] = kept
		}
	}
	ix.gen = slices.DeleteFunc(ix.gen[ix.pos:], gone)
	ix.pos = 0
}

// holdsSessions reports whether the memory may hold events of sessions:
// events are staged in id order, and a completed generation took every
// event up to its largest id.
func (ix *eventIndexer) holdsSessions() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.lastSession > ix.doneMax
}

// unindexed reports whether committed events may wait for the index:
// this process's, or another's since the last check.
func (db *DB) unindexed() bool {
	ix := &db.ix
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.pendingN > 0 || ix.pos < len(ix.gen) || db.foreign.seen.Load() != ix.foreignChecked
}

// tail calls fn with every committed event of the user (or session) u
// that event_users does not hold yet. The writer uses it where readers
// scan the events above upto.
func (ix *eventIndexer) tail(u userRef, fn func(tailEvent)) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	rest := ix.gen[ix.pos:]
	i, _ := slices.BinarySearchFunc(rest, u, func(r indexRow, u userRef) int {
		return indexRow{user: r.user}.compare(indexRow{user: u})
	})
	for ; i < len(rest) && rest[i].user == u; i++ {
		fn(rest[i].tailEvent)
	}
	for _, e := range ix.pending[u] {
		fn(e)
	}
}

// indexAll indexes every event above upto in one transaction, and starts
// the memory over: what opening the database does, since a crash loses
// the memory but never the events.
func (db *DB) indexAll(ctx context.Context) error {
	return db.withTx(ctx, func(tx *Tx) error {
		tx.indexAll = true
		return nil
	})
}

// idleDrain indexes what commits leave unindexed when writes stop: without
// it the last second of events before a quiet spell would stay in memory
// and in readers' tail scans until the next write.
func (db *DB) idleDrain() {
	ix := &db.ix
	defer close(ix.done)
	t := time.NewTicker(generationEvery / 2)
	defer t.Stop()
	for {
		select {
		case <-ix.stop:
			return
		case <-t.C:
		}
		for db.unindexed() {
			ix.mu.Lock()
			busy := time.Since(ix.lastIndexed) < generationEvery
			ix.mu.Unlock()
			if busy {
				break
			}
			err := db.withTx(context.Background(), func(tx *Tx) error {
				tx.drain = true
				return nil
			})
			if err != nil {
				break // the next tick tries again
			}
			select {
			case <-ix.stop:
				return
			default:
			}
		}
	}
}
