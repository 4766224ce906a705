package store

import (
	"database/sql"
	"slices"

	"service/jsonjs"
)

// CUPED's covariate: for a user assigned at t, the number of the
// campaign's goal events the user logged in [t - lookback, t), counted
// once, as the user is first assigned, and kept with the assignment
// (assignments.covariate). Each variant keeps the sums analytics needs
// (campaign_variants.cuped_sum_*), so the report stays a handful of rows
// however many users a campaign has.
//
// An event's key is its userId, else its sessionId, as a variant
// request's is: a user assigned by userId counts the events with that
// userId, found through the event index by user; a visitor assigned by
// sessionId counts the events with that sessionId and no userId, found
// through the index by session (on SQLite the same event_users, see
// sessionRef), which holds only such events, so that events with a
// userId cost nothing more to log. A user's covariate also counts the
// events their linked sessions logged without a userId (session_links),
// once each: a visitor who signed in is one person before and after.

// msPerDay is one lookback day in milliseconds.
const msPerDay = 24 * msPerHour

// recordCovariates counts the covariate of each assignment of list that
// went in with CUPED on, and keeps those that are not 0 with their row and
// in their variant's sums. Only a first assignment has one: a user stored
// already (a returning user the memory forgot) costs no query, however
// many goal events they logged since.
func (tx *Tx) recordCovariates(list []pendingAssign) error {
	if err := tx.covariates(list); err != nil {
		return err
	}
	for i := range list {
		a := &list[i]
		if !a.inserted || a.x == 0 {
			continue
		}
		// Rare: most new users have no goal events before their first
		// assignment, and their rows keep the default 0.
		if _, err := tx.exec(`UPDATE assignments SET covariate = ? WHERE campaign_id = ? AND user_key = ?`, a.x, a.ref.campaign, a.ref.key); err != nil {
			return err
		}
		tx.countCovariate(a.vid, a.x)
	}
	return nil
}

// covariates counts the covariate of each assignment of list that went in
// with CUPED on (lc set), in one query per campaign and kind of key: most
// new users have no earlier events, and for them the query's index probe
// finds nothing.
func (tx *Tx) covariates(list []pendingAssign) error {
	type group struct {
		lc   *liveCampaign
		kind byte
	}
	var done []group
	for i := range list {
		g := group{list[i].lc, list[i].kind}
		if g.lc == nil || !list[i].inserted || slices.Contains(done, g) {
			continue
		}
		done = append(done, g)
		// Every assignment of this group from i on, in one query.
		var pos []int
		users := append(tx.runText[:0], '[')
		for j := i; j < len(list); j++ {
			if list[j].lc != g.lc || list[j].kind != g.kind || !list[j].inserted {
				continue
			}
			list[j].x = 0
			if g.kind == 'u' && tx.isFresh(g.lc.appID, list[j].user) {
				continue // first seen by this transaction: nothing before it
			}
			if len(pos) > 0 {
				users = append(users, ',')
			}
			users = jsonjs.AppendQuote(users, list[j].user)
			pos = append(pos, j)
		}
		users = append(users, ']')
		tx.runText = users[:0]
		if len(pos) == 0 {
			continue
		}
		if err := tx.countCovariates(g.lc, g.kind, list, pos, string(users)); err != nil {
			return err
		}
	}
	return nil
}

// isFresh reports whether this transaction recorded the user for the
// first time (see txBufs.fresh).
func (tx *Tx) isFresh(appID int64, userID string) bool {
	k := userRef{appID, userID}
	_, ok := tx.fresh[k]
	_, linked := tx.linked[k]
	return ok && !linked
}

// countCovariates counts the goal events in the lookback window of the
// users list[pos[k]], whose keys of kind ('u' or 's') the JSON array users
// holds in that order.
func (tx *Tx) countCovariates(lc *liveCampaign, kind byte, list []pendingAssign, pos []int, users string) error {
	now := ms(tx.now)
	since := now - lc.cupedMS
	// Events that the index does not hold yet are in the indexer's
	// memory, a user's linked sessions' included. Another process may
	// have indexed one of them meanwhile: those are counted once, from
	// memory.
	recent, err := tx.recentCovariates(lc, kind, list, pos, users, since, now)
	if err != nil {
		return err
	}
	tx.db.covariateReads.Add(1)
	args := []any{users, lc.appID, lc.goal, since}
	if kind == 'u' {
		args = append(args, args...)
	}
	rows, err := tx.query(tx.db.eng.covariateEvents(kind), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var run sql.RawBytes
	for rows.Next() {
		var k int
		var ts, id int64
		if err := rows.Scan(&k, &ts, &id, &run); err != nil {
			return err
		}
		a := &list[pos[k]]
		err := runEvents(ts, id, run, func(ts, id int64) {
			if _, dup := recent[id]; !dup && ts >= since && ts < now {
				a.x++
			}
		})
		if err != nil {
			return err
		}
	}
	return rows.Err()
}

// recentCovariates counts into list[pos[k]].x the goal events of the
// window the indexer holds in memory, the users' linked sessions' with
// theirs, and returns them by id, with the user's position k. users is
// the JSON array of the keys, in pos's order.
func (tx *Tx) recentCovariates(lc *liveCampaign, kind byte, list []pendingAssign, pos []int, users string, since, now int64) (map[int64]int, error) {
	var recent map[int64]int
	count := func(k int, e tailEvent) {
		if e.eventID == lc.goal && e.ts >= since && e.ts < now {
			if recent == nil {
				recent = map[int64]int{}
			}
			recent[e.id] = k
			list[pos[k]].x++
		}
	}
	var evs []tailEvent
	for k, j := range pos {
		ref := userRef{lc.appID, list[j].user}
		if kind == 's' {
			ref = sessionRef(lc.appID, list[j].user)
		}
		evs = tx.db.eng.unindexedEvents(evs[:0], ref)
		for _, e := range evs {
			count(k, e)
		}
	}
	if kind == 'u' {
		if err := tx.db.eng.unindexedLinked(tx, lc.appID, users, count); err != nil {
			return nil, err
		}
	}
	return recent, nil
}
