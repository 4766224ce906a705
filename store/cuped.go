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
// Events are matched to a user by userId, through the event index. A
// visitor known only by a sessionId has a covariate of 0: no index finds
// events by session, and one would cost every logged event a write.

// msPerDay is one lookback day in milliseconds.
const msPerDay = 24 * msPerHour

// covariates counts the covariate of each assignment of list that has
// CUPED on (lc set), in one query per campaign: most new users have no
// earlier events, and for them the query's index probe finds nothing.
func (tx *Tx) covariates(list []pendingAssign) error {
	var done []*liveCampaign
	for i := range list {
		lc := list[i].lc
		if lc == nil || slices.Contains(done, lc) {
			continue
		}
		done = append(done, lc)
		// Every assignment of this campaign from i on, in one query.
		var pos []int
		users := append(tx.runText[:0], '[')
		for j := i; j < len(list); j++ {
			if list[j].lc != lc {
				continue
			}
			list[j].x = 0
			if len(pos) > 0 {
				users = append(users, ',')
			}
			users = jsonjs.AppendQuote(users, list[j].user)
			pos = append(pos, j)
		}
		users = append(users, ']')
		tx.runText = users[:0]
		if err := tx.countCovariates(lc, list, pos, string(users)); err != nil {
			return err
		}
	}
	return nil
}

// countCovariates counts the goal events in the lookback window of the
// users list[pos[k]], whose ids the JSON array users holds in that order.
func (tx *Tx) countCovariates(lc *liveCampaign, list []pendingAssign, pos []int, users string) error {
	now := ms(tx.now)
	since := now - lc.cupedMS
	// Events the index does not hold yet are in the indexer's memory.
	// Another process may have indexed one of them meanwhile: those are
	// counted once, from memory.
	var recent map[int64]int
	for k, j := range pos {
		tx.db.ix.tail(lc.appID, list[j].user, func(e tailEvent) {
			if e.eventID == lc.goal && e.ts >= since && e.ts < now {
				if recent == nil {
					recent = map[int64]int{}
				}
				recent[e.id] = k
				list[j].x++
			}
		})
	}
	rows, err := tx.query(tx.db.dia.covariateEvents, users, lc.appID, lc.goal, since)
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
