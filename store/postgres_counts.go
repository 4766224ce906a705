package store

import (
	"github.com/jackc/pgx/v5"

	"service/store/postgres"
)

// On PostgreSQL each statement is a round trip, which costs both processes
// CPU: the per-variant UPDATE and hours upsert of flushCounts were four of
// a two-variant group commit's ten. pgFlushCounts writes them all in one
// statement whatever the number of variants, the deltas passed as arrays.
//
// The variants' rows are locked first, in ascending id (LockRows above
// the sort), as every writer locks them: the UPDATE's join would otherwise
// take them in whatever order its plan reads them, and two replicas'
// group commits could each wait for the other's next row.
const pgFlushCounts = `WITH d (id, i, c, x, xx, xy) AS (
		SELECT * FROM unnest(CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]))
	), l AS (
		SELECT id FROM campaign_variants WHERE id IN (SELECT id FROM d) ORDER BY id FOR UPDATE
	), v AS (
		UPDATE campaign_variants AS v SET impressions = v.impressions + d.i, conversions = v.conversions + d.c,
			cuped_sum_x = v.cuped_sum_x + d.x, cuped_sum_xx = v.cuped_sum_xx + d.xx, cuped_sum_xy = v.cuped_sum_xy + d.xy
		FROM l JOIN d ON d.id = l.id WHERE v.id = l.id
	)
	INSERT INTO campaign_variant_hours (variant_id, hour, impressions, conversions)
	SELECT id, ?, i, c FROM d ORDER BY id
	ON CONFLICT (variant_id, hour) DO UPDATE SET impressions = campaign_variant_hours.impressions + excluded.impressions,
		conversions = campaign_variant_hours.conversions + excluded.conversions`

// owePGCounts gathers the deltas of the variants ids, sorted, and their
// hour's, for commitCountsPG: the counters' statement is the commit's last,
// and goes with the COMMIT.
func (tx *Tx) owePGCounts(ids []int64) {
	cols := &tx.cols.ints
	for _, id := range ids {
		d := tx.counts[id]
		cols[0], cols[1], cols[2] = append(cols[0], id), append(cols[1], d.impressions), append(cols[2], d.conversions)
		cols[3], cols[4], cols[5] = append(cols[3], d.sumX), append(cols[4], d.sumXX), append(cols[5], d.sumXY)
	}
	tx.countsOwed = true
}

// commitCountsPG writes the counters owePGCounts gathered and commits, in
// one round trip.
func (tx *Tx) commitCountsPG() error {
	c := &tx.cols
	defer c.reset()
	tx.countsOwed = false
	cols := &c.ints
	return tx.sc.Raw(func(dc any) error {
		return postgres.ExecCommit(tx.ctx, dc, pgFlushCounts, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], ms(tx.now)/msPerHour)
	})
}

// pgConvertUsers converts the assignments of the arrays' (campaign, key)
// pairs at their times, those not converted yet and assigned by then. The
// rows are locked first in the arrays' order, which is the conversions'
// sorted one (sortConversions), as the statement a conversion each
// locked them; RETURNING names those that converted.
const pgConvertUsers = `WITH d AS (
		SELECT * FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[])) WITH ORDINALITY AS d(campaign_id, user_key, ts, n)
	), l AS (
		SELECT a.campaign_id, a.user_key, d.ts FROM d JOIN assignments AS a ON a.campaign_id = d.campaign_id AND a.user_key = d.user_key
		WHERE a.converted_at IS NULL AND a.assigned_at <= d.ts ORDER BY d.n FOR UPDATE OF a
	)
	UPDATE assignments AS a SET converted_at = l.ts FROM l WHERE a.campaign_id = l.campaign_id AND a.user_key = l.user_key
	RETURNING a.campaign_id, a.user_key, a.variant_id, a.covariate`

// convertUsersPG makes the queued conversions' attempts by their userId
// keys in one statement. A key that two conversions of the batch name is
// sent once, for the first: the second would find it converted.
func (tx *Tx) convertUsersPG() error {
	c := &tx.cols
	defer c.reset()
	campaigns, keys, ats := c.ints[0], c.strs[0], c.ints[1]
	var first map[assignRef]int
	for j := range tx.convs {
		ref, ok := tx.convertible(&tx.convs[j], 0)
		if !ok {
			continue
		}
		if first == nil {
			first = map[assignRef]int{}
		}
		if _, dup := first[ref]; dup {
			continue
		}
		first[ref] = j
		campaigns, keys, ats = append(campaigns, ref.campaign), append(keys, ref.key), append(ats, tx.convs[j].now)
	}
	c.ints[0], c.strs[0], c.ints[1] = campaigns, keys, ats
	if len(first) == 0 {
		return nil
	}
	return tx.queryPG(pgConvertUsers, []any{campaigns, keys, ats}, func(r pgx.CollectableRow) error {
		var ref assignRef
		var vid, x int64
		if err := r.Scan(&ref.campaign, &ref.key, &vid, &x); err != nil {
			return err
		}
		if j, ok := first[ref]; ok {
			tx.converted(&tx.convs[j], 0, vid, x)
		}
		return nil
	})
}
