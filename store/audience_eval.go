package store

// The audience evaluation engine: definitions compiled once and cached per
// updated_at, the one-user match of the variant hot path (loadAudienceUser,
// matchUser), and the bulk pass over an app's users (scanAudienceUsers)
// behind member lists and counts. The audience resource itself is in
// audiences.go.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"service/rules"
)

// compiledAudience is an audience definition ready for matching, with what
// a caller needs to fetch exactly the facts it reads.
type compiledAudience struct {
	updatedMS  int64
	def        *rules.Definition
	eventIDs   []string
	window     time.Duration
	bounded    bool
	needsAttrs bool
	// userEvents and userEventsRead are the one-user event queries of
	// userFacts, on the writer (event_users alone, the memory adds the
	// rest) and on a reader's snapshot (event_users up to upto, and the
	// events above it).
	userEvents, userEventsRead string
	// readTail: userEventsRead reads the tail above upto as well, with
	// the same arguments again.
	readTail bool
}

// audienceCache keeps compiled definitions, so the variant hot path never
// parses JSON rules. An entry is valid for one updated_at of its audience;
// UpdateAudience makes updated_at strictly increase, so a changed
// definition can never be served from an older entry.
type audienceCache struct {
	mu sync.Mutex
	m  map[int64]*compiledAudience
}

// maxCachedAudiences bounds the cache; past it the cache starts over, which
// costs one compile per audience in use.
const maxCachedAudiences = 10_000

func newAudienceCache() *audienceCache { return &audienceCache{m: map[int64]*compiledAudience{}} }

func (c *audienceCache) get(id, updatedMS int64) *compiledAudience {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[id]; e != nil && e.updatedMS == updatedMS {
		return e
	}
	return nil
}

func (c *audienceCache) put(id int64, e *compiledAudience) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[id]; old != nil && old.updatedMS > e.updatedMS {
		return // a reader of an older snapshot must not replace a newer entry
	}
	if len(c.m) >= maxCachedAudiences {
		clear(c.m)
	}
	c.m[id] = e
}

func (c *audienceCache) forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// compileAudience returns the compiled definition of an audience row,
// compiling it only when the cache has no entry for this updated_at.
func (db *DB) compileAudience(id, updatedMS int64, raw []byte) (*compiledAudience, error) {
	if e := db.audiences.get(id, updatedMS); e != nil {
		return e, nil
	}
	def, errs := rules.Compile(raw, "definition")
	if errs != nil {
		// Stored definitions were validated on write; this is corruption.
		return nil, fmt.Errorf("audience %d: stored definition does not compile: %v", id, errs)
	}
	e := &compiledAudience{updatedMS: updatedMS, def: def, eventIDs: def.EventIDs(), needsAttrs: hasAttributeRule(raw)}
	e.window, e.bounded = def.MaxWindow()
	where := ` WHERE app_id = ? AND user_id = ? AND event_id IN (` + placeholders(len(e.eventIDs)) + `)`
	if e.bounded {
		where += ` AND ts >= ?`
	}
	db.eng.compileUserEvents(e, where)
	db.audiences.put(id, e)
	return e, nil
}

// hasAttributeRule reports whether a valid definition has an attribute
// rule, so bulk counting can skip decoding profiles when none has.
func hasAttributeRule(raw []byte) bool {
	var d struct {
		Rules []struct {
			RuleType *string `json:"ruleType"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return true
	}
	for _, r := range d.Rules {
		if r.RuleType == nil || *r.RuleType != "event" {
			return true
		}
	}
	return false
}

// audienceUser is an audience and one user's profile, read together.
type audienceUser struct {
	c         *compiledAudience
	status    string
	found     bool   // the audience is in the app
	attrs     []byte // the user's stored attributes; nil for an unknown user
	knownUser bool
}

// loadAudienceUser reads an audience's status and compiled definition and
// a user's profile in one statement (every statement costs a parse, and
// this runs on the variant hot path); the definition text is read only
// when the cache has no entry for the audience's updated_at.
func (db *DB) loadAudienceUser(q conn, appID, id int64, userID string) (audienceUser, error) {
	var r audienceUser
	var updated int64
	var attrs sql.NullString
	err := q.queryRow(`SELECT a.status, a.updated_at, u.attributes FROM audiences AS a
		LEFT JOIN users AS u ON u.app_id = a.app_id AND u.user_id = ? WHERE a.id = ? AND a.app_id = ?`, userID, id, appID).
		Scan(&r.status, &updated, &attrs)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil
	} else if err != nil {
		return r, err
	}
	r.found, r.knownUser = true, attrs.Valid
	if attrs.Valid {
		r.attrs = []byte(attrs.String)
	}
	if r.c = db.audiences.get(id, updated); r.c != nil {
		return r, nil
	}
	var raw string
	if err := q.queryRow(`SELECT definition, updated_at FROM audiences WHERE id = ?`, id).Scan(&raw, &updated); err != nil {
		return r, err
	}
	r.c, err = db.compileAudience(id, updated, []byte(raw))
	return r, err
}

// matchUser evaluates a loaded audience for its user at now, reading that
// user's events of the referenced ids (one indexed query, bounded by the
// widest time window when there is one) only when the definition has event
// rules. An unknown user matches nothing: audiences count known users.
// tail, on the writer, is the engine whose events by user the query may
// not see yet (engine.unindexedEvents); nil on a reader.
func matchUser(q conn, tail engine, r audienceUser, appID int64, userID string, now time.Time) (bool, error) {
	if !r.knownUser {
		return false, nil
	}
	attrs, facts, err := userFacts(q, tail, r, appID, userID, now)
	if err != nil {
		return false, err
	}
	return r.c.def.Match(attrs, facts, now), nil
}

// userFacts reads what a loaded audience's rules look at for its user. On
// the writer, tail is the event indexer, which holds the events that
// event_users lacks; readers pass nil and read those from their snapshot.
func userFacts(q conn, tail engine, r audienceUser, appID int64, userID string, now time.Time) (map[string]any, rules.Facts, error) {
	c := r.c
	var attrs map[string]any
	if c.needsAttrs {
		_ = json.Unmarshal(r.attrs, &attrs)
	}
	var facts rules.Facts
	if c.def.NeedsEvents() {
		args := make([]any, 0, 2*(len(c.eventIDs)+3))
		args = append(args, appID, userID)
		for _, id := range c.eventIDs {
			args = append(args, id)
		}
		since := ms(now.Add(-c.window))
		if c.bounded {
			args = append(args, since)
		}
		query := c.userEvents
		var recent []tailEvent
		if tail == nil {
			query = c.userEventsRead
			if c.readTail {
				args = append(args, args...)
			}
		} else {
			all := tail.unindexedEvents(nil, userRef{appID, userID})
			recent = all[:0]
			for _, e := range all {
				if slices.Contains(c.eventIDs, e.eventID) && (!c.bounded || e.ts >= since) {
					recent = append(recent, e)
				}
			}
		}
		rows, err := q.query(query, args...)
		if err != nil {
			return nil, facts, err
		}
		facts.Events = make(map[string][]time.Time, len(c.eventIDs))
		var event string
		var run sql.RawBytes
		add := func(ts, id int64) {
			facts.Events[event] = append(facts.Events[event], fromMS(ts))
			// Another process may have indexed an event the memory still
			// holds (see foreignSinceCheck): it counts once.
			if i := slices.IndexFunc(recent, func(e tailEvent) bool { return e.id == id }); i >= 0 {
				recent = slices.Delete(recent, i, i+1)
			}
		}
		for rows.Next() {
			var ts, id int64
			err := rows.Scan(&event, &ts, &id, &run)
			if err == nil {
				err = runEvents(ts, id, run, add)
			}
			if err != nil {
				rows.Close()
				return nil, facts, err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, facts, err
		}
		for _, e := range recent {
			facts.Events[e.eventID] = append(facts.Events[e.eventID], fromMS(e.ts))
		}
		for _, ts := range facts.Events {
			sortTimes(ts)
		}
	}
	return attrs, facts, nil
}

// sortTimes sorts ascending, as rules.Facts requires; the index usually
// yields them sorted already, which the check makes cheap.
func sortTimes(ts []time.Time) {
	if !slices.IsSortedFunc(ts, time.Time.Compare) {
		slices.SortFunc(ts, time.Time.Compare)
	}
}

func placeholders(n int) string {
	if n == 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

// userInAudience reports, inside the caller's write transaction, whether a
// user belongs to an audience at tx.now. An unknown or archived audience,
// and an unknown user, match nothing; callers record the user with
// touchUser first.
func (tx *Tx) userInAudience(appID, audienceID int64, userID string) (bool, error) {
	r, err := tx.db.loadAudienceUser(tx.conn, appID, audienceID, userID)
	if err != nil || !r.found || r.status != AudienceActive {
		return false, err
	}
	return matchUser(tx.conn, tx.db.eng, r, appID, userID, tx.now)
}

type recountJob struct {
	id        int64
	updatedMS int64
	c         *compiledAudience
	count     int
}

// recountApp counts the jobs' audiences over the app's users in one pass
// and stores the counts stamped with the moment the facts were read.
func (db *DB) recountApp(ctx context.Context, appID int64, jobs []*recountJob) error {
	defs := make([]*compiledAudience, len(jobs))
	for i, j := range jobs {
		defs[i] = j.c
	}
	now := db.Now().UTC()
	err := db.scanAudienceUsers(ctx, appID, defs, now, func(_ string, match []bool) {
		for i, m := range match {
			if m {
				jobs[i].count++
			}
		}
	})
	if err != nil {
		return err
	}
	return db.withTx(ctx, func(tx *Tx) error {
		for _, j := range jobs {
			if _, err := tx.exec(`UPDATE audiences SET customer_count = ?, last_calculated_at = ? WHERE id = ? AND app_id = ? AND updated_at = ?`,
				j.count, ms(now), j.id, appID, j.updatedMS); err != nil {
				return err
			}
		}
		tx.changed = true
		return nil
	})
}

// audienceBatch is how many users one round of bulk matching reads: large
// enough that per-query costs vanish, small enough that the batch's events
// fit in memory comfortably.
const audienceBatch = 1000

// scanUser is one user of a batch with its events, per referenced event id.
type scanUser struct {
	id     string
	attrs  []byte
	events [][]time.Time
}

// scanAudienceUsers evaluates the audiences defs for every user of an app,
// in user id order, and calls visit with the user and which of defs it
// matches (the slice is reused between calls). Everything is read in one
// read-only transaction, so the pass sees one snapshot and never holds the
// writer: users in keyset-paginated batches, and each batch's events of
// the referenced ids in one query bounded by the widest time window.
func (db *DB) scanAudienceUsers(ctx context.Context, appID int64, defs []*compiledAudience, now time.Time, visit func(userID string, match []bool)) error {
	var eventIDs []string
	needsAttrs, bounded := false, true
	var window time.Duration
	for _, c := range defs {
		needsAttrs = needsAttrs || c.needsAttrs
		if !c.def.NeedsEvents() {
			continue
		}
		for _, id := range c.eventIDs {
			if !slices.Contains(eventIDs, id) {
				eventIDs = append(eventIDs, id)
			}
		}
		if !c.bounded {
			bounded = false
		} else {
			window = max(window, c.window)
		}
	}

	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()

	userQuery := `SELECT user_id FROM users WHERE app_id = ? AND user_id > ? ORDER BY user_id LIMIT ?`
	if needsAttrs {
		userQuery = `SELECT user_id, attributes FROM users WHERE app_id = ? AND user_id > ? ORDER BY user_id LIMIT ?`
	}
	eventQuery := db.eng.audienceEvents(len(eventIDs), bounded)
	since := ms(now.Add(-window))
	tail, bound, err := db.eng.audienceTail(ctx, tx, appID, eventIDs, bounded, since)
	if err != nil {
		return err
	}
	batchIDs := make([]string, 0, audienceBatch)

	users := make([]scanUser, 0, audienceBatch)
	attrs := map[string]any{}
	facts := rules.Facts{Events: make(map[string][]time.Time, len(eventIDs))}
	match := make([]bool, len(defs))
	after := ""
	for {
		rows, err := tx.QueryContext(ctx, userQuery, appID, after, audienceBatch)
		if err != nil {
			return err
		}
		users = users[:0]
		for rows.Next() {
			// Reuse the batch's slices: a pass over many users then
			// allocates little beyond the strings the driver returns.
			n := len(users)
			if n < cap(users) {
				users = users[:n+1]
			} else {
				users = append(users, scanUser{})
			}
			u := &users[n]
			if needsAttrs {
				err = rows.Scan(&u.id, &u.attrs)
			} else {
				err = rows.Scan(&u.id)
			}
			if err != nil {
				rows.Close()
				return err
			}
			if len(u.events) != len(eventIDs) {
				u.events = make([][]time.Time, len(eventIDs))
			}
			for i := range u.events {
				u.events[i] = u.events[i][:0]
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(users) == 0 {
			return nil
		}

		if len(eventIDs) > 0 {
			batchIDs = batchIDs[:0]
			for i := range users {
				batchIDs = append(batchIDs, users[i].id)
			}
			usersJSON, err := json.Marshal(batchIDs)
			if err != nil {
				return err
			}
			args := make([]any, 0, 4+2*len(eventIDs))
			args = append(args, len(eventIDs))
			for _, id := range eventIDs {
				args = append(args, id)
			}
			args = append(args, string(usersJSON), appID)
			for _, id := range eventIDs {
				args = append(args, id)
			}
			if bounded {
				args = append(args, since)
			}
			args = append(args, bound...)
			if err := loadBatchEvents(ctx, tx, eventQuery, args, len(eventIDs), users); err != nil {
				return err
			}
			for i := range users {
				for _, e := range tail[users[i].id] {
					users[i].events[e.event] = append(users[i].events[e.event], fromMS(e.ts))
				}
			}
		}

		for i := range users {
			u := &users[i]
			for j, id := range eventIDs {
				sortTimes(u.events[j])
				facts.Events[id] = u.events[j]
			}
			if needsAttrs {
				clear(attrs)
				if err := json.Unmarshal(u.attrs, &attrs); err != nil {
					clear(attrs)
				}
			}
			for k, c := range defs {
				match[k] = c.def.Match(attrs, facts, now)
			}
			visit(u.id, match)
		}
		if len(users) < audienceBatch {
			return nil
		}
		after = users[len(users)-1].id
	}
}

// scanEvent is an event of the tail, by its position in a pass's event ids.
type scanEvent struct {
	event int
	ts    int64
}

// loadBatchEvents runs one batch's event query and files each timestamp
// under its user and event id.
func loadBatchEvents(ctx context.Context, tx *sql.Tx, q string, args []any, nEvents int, users []scanUser) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var pos, ts, id int64
	var run sql.RawBytes
	var times *[]time.Time
	add := func(ts, _ int64) { *times = append(*times, fromMS(ts)) }
	for rows.Next() {
		if err := rows.Scan(&pos, &ts, &id, &run); err != nil {
			return err
		}
		i, j := int(pos)/nEvents, int(pos)%nEvents
		if i < 0 || i >= len(users) {
			return fmt.Errorf("audience scan: event row names user %d of a batch of %d", i, len(users))
		}
		times = &users[i].events[j]
		if err := runEvents(ts, id, run, add); err != nil {
			return err
		}
	}
	return rows.Err()
}
