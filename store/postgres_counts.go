package store

// On PostgreSQL each statement is a round trip, which costs both processes
// CPU: the per-variant UPDATE and hours upsert of flushCounts were four of
// a two-variant group commit's ten. flushCountsPG writes them all in one
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

// flushCountsPG writes the deltas of the variants ids, sorted, and their
// hour's.
func (tx *Tx) flushCountsPG(ids []int64) error {
	c := &tx.cols
	defer c.reset()
	cols := &c.ints
	for _, id := range ids {
		d := tx.counts[id]
		cols[0], cols[1], cols[2] = append(cols[0], id), append(cols[1], d.impressions), append(cols[2], d.conversions)
		cols[3], cols[4], cols[5] = append(cols[3], d.sumX), append(cols[4], d.sumXX), append(cols[5], d.sumXY)
	}
	_, err := tx.raw.ExecContext(tx.ctx, pgFlushCounts, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], ms(tx.now)/msPerHour)
	return err
}
