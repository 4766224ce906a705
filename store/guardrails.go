package store

import (
	"context"
	"errors"
)

// EventGuardrailRegressed's payload, fields in the documented order.
type guardrailRegressed struct {
	CampaignID         int64      `json:"campaignId"`
	CampaignName       string     `json:"campaignName"`
	MetricID           int64      `json:"metricId"`
	MetricKey          string     `json:"metricKey"`
	VariantID          int64      `json:"variantId"`
	VariantName        string     `json:"variantName"`
	Difference         float64    `json:"difference"`
	DifferenceInterval *[]float64 `json:"differenceInterval"`
	Action             string     `json:"action"`
}

// GuardrailRegression is one regression a guardrail check reported.
type GuardrailRegression struct {
	CampaignID, MetricID, VariantID int64
	// Paused is whether the report paused the campaign.
	Paused bool
}

// CheckGuardrails looks at every active campaign with guardrails, and
// reports each guardrail treatment that its analytics call regressed and
// that was not reported before: campaign.guardrail_regressed, and, when the
// campaign's guardrailAction is pause, the pause (with campaign.paused and
// an audit entry by the scheduler). What was reported is recorded in the
// transaction that queues the webhook, under a key of campaign, metric and
// variant, so each regression is reported once, whichever process looks
// and however often. A regression already reported stays reported: a
// campaign resumed after a guardrail paused it is not paused again for it.
func (db *DB) CheckGuardrails(ctx context.Context) ([]GuardrailRegression, error) {
	ctx = WithCaller(ctx, Caller{Actor: Actor{Type: ActorScheduler}})
	if err := db.ApplyMetricMoves(ctx); err != nil {
		return nil, err
	}
	type due struct{ app, id int64 }
	var list []due
	rows, err := db.read.QueryContext(ctx, `SELECT c.app_id, c.id FROM campaigns c WHERE c.status = 'active'
		AND EXISTS (SELECT 1 FROM campaign_metrics cm WHERE cm.campaign_id = c.id AND cm.role = 'guardrail') ORDER BY c.id`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.app, &d.id); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []GuardrailRegression
	var errs []error
	for _, d := range list {
		// Most checks find nothing new: they read, and only a new
		// regression takes the writer.
		fresh, err := db.newRegressions(ctx, db.reader(ctx), d.id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fresh {
			continue
		}
		var found []GuardrailRegression
		err = db.withTx(ctx, func(tx *Tx) error {
			found = nil
			var err error
			found, err = tx.reportRegressions(d.app, d.id)
			return err
		})
		switch {
		case err == nil:
			out = append(out, found...)
		case ErrorCode(err) == EINVALID, ErrorCode(err) == ENOTFOUND:
			// Moved or deleted by someone else first; the next tick looks again.
		default:
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// regressedGuardrail is a guardrail treatment that its analytics call
// regressed.
type regressedGuardrail struct {
	metric MetricResult
	v      MetricVariantResult
}

// regressedGuardrails computes the campaign's metrics as its analytics do
// and returns the regressed guardrail treatments, and the variants.
func regressedGuardrails(q conn, campaignID int64) ([]regressedGuardrail, []*Variant, error) {
	vs, err := findVariants(q, campaignID)
	if err != nil {
		return nil, nil, err
	}
	results, err := campaignMetricResults(q, campaignID, vs)
	if err != nil {
		return nil, nil, err
	}
	var out []regressedGuardrail
	for _, r := range results {
		if r.Role != RoleGuardrail {
			continue
		}
		for _, v := range r.Variants {
			if v.Regressed {
				out = append(out, regressedGuardrail{r, v})
			}
		}
	}
	return out, vs, nil
}

// newRegressions reports whether the campaign has a regressed guardrail
// treatment that was not reported yet.
func (db *DB) newRegressions(ctx context.Context, q conn, campaignID int64) (bool, error) {
	list, _, err := regressedGuardrails(q, campaignID)
	if err != nil {
		return false, err
	}
	for _, g := range list {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM guardrail_regressions WHERE campaign_id = ? AND metric_id = ? AND variant_id = ?`,
			campaignID, g.metric.MetricID, g.v.VariantID).Scan(&n); err != nil {
			return false, err
		}
		if n == 0 {
			return true, nil
		}
	}
	return false, nil
}

// reportRegressions records and reports, in tx, the campaign's regressed
// guardrail treatments not reported before, and pauses the campaign when
// its action says so. The campaign is read again here: an edit or a move
// may have come between the check and this transaction.
func (tx *Tx) reportRegressions(appID, id int64) ([]GuardrailRegression, error) {
	// The campaign's row is locked first: on PostgreSQL two processes that
	// both saw a new regression then take turns, and the second reads what
	// the first committed (a pause included) rather than a stale status.
	if _, err := tx.exec(`UPDATE campaigns SET status = status WHERE id = ?`, id); err != nil {
		return nil, err
	}
	before, err := findCampaign(tx.conn, appID, id)
	if err != nil {
		return nil, err
	}
	if before.Status != CampaignActive {
		return nil, nil
	}
	list, vs, err := regressedGuardrails(tx.conn, id)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(vs))
	for _, v := range vs {
		names[v.ID] = v.Name
	}
	var out []GuardrailRegression
	for _, g := range list {
		res, err := tx.exec(`INSERT INTO guardrail_regressions (campaign_id, metric_id, variant_id, action, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (campaign_id, metric_id, variant_id) DO NOTHING`, id, g.metric.MetricID, g.v.VariantID, before.GuardrailAction, ms(tx.now))
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			continue // reported before, by this process or another
		}
		p := guardrailRegressed{CampaignID: id, CampaignName: before.Name, MetricID: g.metric.MetricID, MetricKey: g.metric.Key,
			VariantID: g.v.VariantID, VariantName: names[g.v.VariantID], DifferenceInterval: g.v.DifferenceInterval, Action: before.GuardrailAction}
		if g.v.Difference != nil {
			p.Difference = *g.v.Difference
		}
		if err := tx.emit(appID, EventGuardrailRegressed, p); err != nil {
			return nil, err
		}
		out = append(out, GuardrailRegression{CampaignID: id, MetricID: g.metric.MetricID, VariantID: g.v.VariantID})
	}
	if len(out) == 0 || before.GuardrailAction != GuardrailPause {
		return out, nil
	}
	if err := tx.move(appID, id, CampaignPaused); err != nil {
		return nil, err
	}
	if err := tx.auditCampaign(appID, id, before); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Paused = true
	}
	return out, nil
}
