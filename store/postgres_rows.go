package store

import (
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"service/store/postgres"
)

// PostgreSQL takes the rows a group commit queued as one array per column,
// which one statement unnests whatever their number. Spelled out as VALUES
// rows, as SQLite takes them, they made a statement and a plan per row
// count, and four to seven parameters a row, each converted by database/sql
// and pgx on its way. Users and first assignments written in batches of 16
// to 48 rows cost 44–55 µs of server and 20–27 µs of client CPU a row that
// way, and 32–35 and 12–13 µs as arrays.

// The users statement counts the rows it inserted, those first seen now.
// It returns the rows it updated too, but an update leaves first_seen as
// it was, and a row first seen now was seen too recently to be updated.
var pgUsersInsert = `WITH w AS (INSERT INTO users (app_id, user_id, attributes, first_seen, last_seen)
	SELECT r.app_id, r.user_id, '{}', CAST(? AS BIGINT), CAST(? AS BIGINT)
	FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[])) AS r(app_id, user_id)` + usersUpsert + `
	RETURNING first_seen)
	SELECT count(*) FROM w WHERE first_seen = CAST(? AS BIGINT)`

// RETURNING names the rows inserted: the others were stored already.
const pgAssignInsert = `INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at)
	SELECT r.campaign_id, r.user_key, r.variant_id, CAST(? AS BIGINT)
	FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[])) AS r(campaign_id, user_key, variant_id)` +
	assignSuffix + ` RETURNING campaign_id, user_key`

// RETURNING gives the ids in the arrays' order: the rows are inserted, and
// numbered from the sequence, in the order unnest yields them.
const pgEventsInsert = `INSERT INTO events (app_id, event_id, user_id, session_id, metadata, log_id, ts)
	SELECT r.app_id, r.event_id, r.user_id, r.session_id, r.metadata, r.log_id, CAST(? AS BIGINT)
	FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]))
		AS r(app_id, event_id, user_id, session_id, metadata, log_id)
	RETURNING id`

// pgEventsInsertJournaled is pgEventsInsert with the commit's row of
// metric_moves (flushJournal) in the same round trip, one fewer for a
// commit with metric events. That insert takes no lock another transaction
// may hold (no unique key but an identity's), so where PostgreSQL runs it
// among the statement's writes does not matter.
const pgEventsInsertJournaled = `WITH journal AS (INSERT INTO metric_moves (moves) VALUES (?)) ` + pgEventsInsert

// The metric values' moves (Tx.flushMetrics), in the arrays' order, which
// is the order of their row locks: a conversion goes in once, the others
// add. Each returns the rows it changed with their values after.
const (
	pgMetricConversions = `INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value)
	SELECT r.campaign_id, r.metric_id, r.user_key, r.variant_id, 1
	FROM unnest(CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[])) AS r(campaign_id, metric_id, user_key, variant_id)
	ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING RETURNING campaign_id, metric_id, user_key, value`
	pgMetricValuesAdd = `INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value)
	SELECT r.campaign_id, r.metric_id, r.user_key, r.variant_id, r.delta
	FROM unnest(CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS DOUBLE PRECISION[]))
		AS r(campaign_id, metric_id, user_key, variant_id, delta)
	ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value
	RETURNING campaign_id, metric_id, user_key, value`
)

// pgLinkInsert links a session (postgresEngine.insertLink): a 0 when the
// link went in, then the campaigns whose assignment the user takes.
const pgLinkInsert = `WITH l AS (INSERT INTO session_links (app_id, session_id, user_id, linked_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (app_id, session_id) DO NOTHING RETURNING app_id)
	SELECT 0 FROM l
	UNION ALL
	SELECT c.id FROM l CROSS JOIN campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = ?
	WHERE c.app_id = ? AND NOT EXISTS (SELECT 1 FROM assignments AS b WHERE b.campaign_id = c.id AND b.user_key = ?)
	ORDER BY 1`

// moveMetricValuesPG is postgresEngine.moveMetricValues.
func (tx *Tx) moveMetricValuesPG(conversion bool, list []*metricMove, moved func(metricValueRef, float64)) error {
	c := &tx.cols
	campaigns, metrics, variants, keys, deltas := c.ints[0], c.ints[1], c.ints[2], c.strs[0], c.floats
	for _, mv := range list {
		campaigns = append(campaigns, mv.ref.campaign)
		metrics = append(metrics, mv.ref.metric)
		keys = append(keys, mv.ref.key)
		variants = append(variants, mv.variant)
		deltas = append(deltas, mv.delta)
	}
	c.ints[0], c.ints[1], c.ints[2], c.strs[0], c.floats = campaigns, metrics, variants, keys, deltas
	defer c.reset()
	q, args := pgMetricValuesAdd, []any{campaigns, metrics, keys, variants, deltas}
	if conversion {
		q, args = pgMetricConversions, args[:4]
	}
	return tx.queryPG(q, args, func(r pgx.CollectableRow) error {
		var ref metricValueRef
		var after float64
		if err := r.Scan(&ref.campaign, &ref.metric, &ref.key, &after); err != nil {
			return err
		}
		moved(ref, after)
		return nil
	})
}

// pgColumns back the arrays of one statement at a time (rows here, the
// counters' deltas in postgres_counts.go), kept with the transaction's
// other buffers.
type pgColumns struct {
	ints   [6][]int64
	strs   [2][]string
	texts  [4][]pgtype.Text
	floats []float64
}

func (c *pgColumns) reset() {
	for i := range c.ints {
		c.ints[i] = emptied(c.ints[i])
	}
	for i := range c.strs {
		c.strs[i] = emptied(c.strs[i])
	}
	for i := range c.texts {
		c.texts[i] = emptied(c.texts[i])
	}
	c.floats = emptied(c.floats)
}

// pgText is v, a string or nil, as a nullable array element.
func pgText(v any) pgtype.Text {
	s, ok := v.(string)
	return pgtype.Text{String: s, Valid: ok}
}

// flushUsersPG writes tx.userOrder, with the transaction's next statement
// (postgres.Defer): the first assignments' insert, in a group commit of
// new users. When every one of them was new, they join tx.fresh then; a
// batch that mixes new and known users leaves it as it was, which only
// costs their covariate query. The arrays are the statement's own, since
// it outlives this call.
func (tx *Tx) flushUsersPG() error {
	users := slices.Clone(tx.userOrder)
	apps, ids := make([]int64, len(users)), make([]string, len(users))
	for i, u := range users {
		apps[i], ids[i] = u.appID, u.userID
	}
	now := ms(tx.now)
	return tx.sc.Raw(func(dc any) error {
		return postgres.Defer(dc, pgUsersInsert, []any{now, now, apps, ids, now}, func(r pgx.CollectableRow) error {
			var inserted int
			if err := r.Scan(&inserted); err != nil || inserted != len(users) {
				return err
			}
			if tx.fresh == nil {
				tx.fresh = make(map[userRef]struct{}, len(users))
			}
			for _, u := range users {
				tx.fresh[u] = struct{}{}
			}
			return nil
		})
	})
}

// insertAssignmentsPG writes tx.assigns and marks those that went in.
func (tx *Tx) insertAssignmentsPG() error {
	c := &tx.cols
	campaigns, variants, keys := c.ints[0], c.ints[1], c.strs[0]
	for _, a := range tx.assigns {
		campaigns = append(campaigns, a.ref.campaign)
		keys = append(keys, a.ref.key)
		variants = append(variants, a.vid)
	}
	c.ints[0], c.ints[1], c.strs[0] = campaigns, variants, keys
	defer c.reset()
	// After the users put off (flushUsersPG), in their round trip.
	return tx.queryPG(pgAssignInsert, []any{ms(tx.now), campaigns, keys, variants}, func(r pgx.CollectableRow) error {
		var campaign int64
		var key pgtype.DriverBytes // valid until the next row: the lookup copies nothing
		if err := r.Scan(&campaign, &key); err != nil {
			return err
		}
		tx.assignInserted(campaign, key)
		return nil
	})
}

// insertEventsPG writes tx.events and sets each one's id.
func (tx *Tx) insertEventsPG() error {
	c := &tx.cols
	apps, names := c.ints[0], c.strs[0]
	users, sessions, metas, logs := c.texts[0], c.texts[1], c.texts[2], c.texts[3]
	for _, e := range tx.events {
		apps = append(apps, e.appID)
		names = append(names, e.eventID)
		users = append(users, pgText(e.user))
		sessions = append(sessions, pgText(e.session))
		metas = append(metas, pgText(e.meta))
		logs = append(logs, pgText(e.l))
	}
	c.ints[0], c.strs[0] = apps, names
	c.texts[0], c.texts[1], c.texts[2], c.texts[3] = users, sessions, metas, logs
	defer c.reset()
	var q string
	var args []any
	if len(tx.journal) > 0 {
		q, args = pgEventsInsertJournaled, []any{string(tx.journal), ms(tx.now), apps, names, users, sessions, metas, logs}
		tx.journal = tx.journal[:0]
	} else {
		q, args = pgEventsInsert, []any{ms(tx.now), apps, names, users, sessions, metas, logs}
	}
	j := 0
	err := tx.queryPG(q, args, func(r pgx.CollectableRow) error {
		if j == len(tx.events) {
			return fmt.Errorf("store: events insert returned more rows than it was given")
		}
		j++
		return r.Scan(&tx.events[j-1].res.ID)
	})
	if err != nil {
		return err
	}
	if j != len(tx.events) {
		return fmt.Errorf("store: events insert returned %d ids for %d rows", j, len(tx.events))
	}
	return nil
}
