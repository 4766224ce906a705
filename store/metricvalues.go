package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"math"

	"service/stats"
)

// countMetric moves the value, for one metric of one campaign, of the
// user who logged an event the metric counts, and the sums of the user's
// variant. The rules are those of a conversion, applied at this moment:
// the campaign is running, the user was assigned before the event (an
// impression queued earlier in the batch counts as earlier), and, with a
// window, the event falls within windowHours of the assignment. A user's
// stored value is before the cap, so that S moves by the change of the
// capped value and Q by its square's: S and Q stay exactly what the users'
// capped values add up to, however the events arrive.
func (tx *Tx) countMetric(t metricTarget, in *EventInput, now int64) error {
	if ok, err := tx.stillRunning(t.lc, now); err != nil || !ok {
		return err
	}
	if err := tx.flushAssignments(); err != nil {
		return err
	}
	for i, user := range [2]string{in.UserID, in.SessionID} {
		if user == "" {
			continue
		}
		var key string
		var vid, at int64
		var err error
		if i == 0 {
			key = storedKey('u', user)
			err = tx.queryRow(`SELECT variant_id, assigned_at FROM assignments WHERE campaign_id = ? AND user_key = ? AND assigned_at <= ?`,
				t.lc.id, key, now).Scan(&vid, &at)
		} else {
			// By sessionId, the person the session belongs to, as a
			// conversion finds it (sessionConvert).
			err = tx.queryRow(sessionAssignment[in.UserID == ""], t.lc.id, t.lc.id, t.lc.appID, user, storedKey('s', user), now).Scan(&key, &vid, &at)
		}
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return err
		}
		if t.m.windowMS > 0 && now-at >= t.m.windowMS {
			return nil
		}
		return tx.moveMetric(t, key, vid, in)
	}
	return nil
}

// sessionAssignment reads the assignment an event's sessionId counts on,
// by sessionConvert's rules, and its key. Its parameters: the campaign,
// then the campaign, app and session of linkedUserKey, the session's key
// and the time.
var sessionAssignment = map[bool]string{
	false: `SELECT user_key, variant_id, assigned_at FROM assignments WHERE campaign_id = ? AND NOT EXISTS ` + linkedUserKey + `
		AND user_key = ? AND assigned_at <= ?`,
	true: `SELECT user_key, variant_id, assigned_at FROM assignments WHERE campaign_id = ? AND user_key = coalesce(` + linkedUserKey + `, ?)
		AND assigned_at <= ?`,
}

// moveMetric adds the event to the user's value and the change to the
// variant's sums. The value moves in one upsert that returns it, so that
// two replicas moving one user's value at once cannot lose either event.
func (tx *Tx) moveMetric(t metricTarget, key string, variantID int64, in *EventInput) error {
	m := t.m
	var before, after float64
	switch m.typ {
	case MetricConversion:
		r, err := tx.exec(`INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, 1)
			ON CONFLICT (campaign_id, metric_id, user_key) DO NOTHING`, t.lc.id, m.id, key, variantID)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return err // converted before: the value stays 1
		}
		after = 1
	default:
		delta := 1.0
		if m.typ == MetricSum {
			delta = metadataNumber(in.Metadata, m.property)
		}
		if delta == 0 {
			return nil
		}
		err := tx.queryRow(`INSERT INTO metric_values (campaign_id, metric_id, user_key, variant_id, value) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (campaign_id, metric_id, user_key) DO UPDATE SET value = metric_values.value + excluded.value RETURNING value`,
			t.lc.id, m.id, key, variantID, delta).Scan(&after)
		if err != nil {
			return err
		}
		before = after - delta
	}
	b, a := m.capOf(before), m.capOf(after)
	if a == b {
		return nil
	}
	_, err := tx.exec(`INSERT INTO metric_sums (campaign_id, metric_id, variant_id, sum, sum_sq) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (campaign_id, metric_id, variant_id) DO UPDATE SET sum = metric_sums.sum + excluded.sum, sum_sq = metric_sums.sum_sq + excluded.sum_sq`,
		t.lc.id, m.id, variantID, a-b, a*a-b*b)
	return err
}

// metadataNumber is the number at key of an event's metadata object, or
// 0 when it is missing or not a finite number (a string "12.5" included:
// a sum adds numbers, and guessing at text would count typos).
func metadataNumber(meta json.RawMessage, key string) float64 {
	if len(meta) == 0 {
		return 0
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(meta, &fields) != nil {
		return 0
	}
	var v float64
	if raw, ok := fields[key]; !ok || json.Unmarshal(raw, &v) != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// MetricResult is one metric of a campaign in its analytics, in the
// metric's own units.
type MetricResult struct {
	MetricID  int64                 `json:"metricId"`
	Key       string                `json:"key"`
	Name      string                `json:"name"`
	Type      string                `json:"type"`
	Role      string                `json:"role"`
	Direction string                `json:"direction"`
	Variants  []MetricVariantResult `json:"variants"`
}

// Metric roles in a campaign's analytics.
const (
	RoleSecondary = "secondary"
	RoleGuardrail = "guardrail"
)

// MetricVariantResult is a variant's figures for one metric: its users
// (impressions), the total and mean of their capped values and their
// standard deviation, and for a treatment Welch's comparison with the
// control (and, for a guardrail, whether it regressed).
type MetricVariantResult struct {
	VariantID          int64
	Users              int64
	Total              float64
	Mean, StdDev       *float64
	Difference         *float64
	DifferenceInterval *[]float64
	Uplift, PValue     *float64
	Regressed          bool
	treatment, guard   bool
}

// MarshalJSON leaves the comparison out for the control and regressed out
// for secondary metrics.
func (v MetricVariantResult) MarshalJSON() ([]byte, error) {
	type base struct {
		VariantID int64    `json:"variantId"`
		Users     int64    `json:"users"`
		Total     float64  `json:"total"`
		Mean      *float64 `json:"mean"`
		StdDev    *float64 `json:"stdDev"`
	}
	b := base{v.VariantID, v.Users, v.Total, v.Mean, v.StdDev}
	if !v.treatment {
		return json.Marshal(b)
	}
	type treatment struct {
		base
		Difference         *float64   `json:"difference"`
		DifferenceInterval *[]float64 `json:"differenceInterval"`
		Uplift             *float64   `json:"uplift"`
		PValue             *float64   `json:"pValue"`
	}
	t := treatment{b, v.Difference, v.DifferenceInterval, v.Uplift, v.PValue}
	if !v.guard {
		return json.Marshal(t)
	}
	return json.Marshal(struct {
		treatment
		Regressed bool `json:"regressed"`
	}{t, v.Regressed})
}

// campaignMetricResults computes the campaign's metrics from the
// variants' sums: a handful of rows, whatever the number of users.
func campaignMetricResults(q conn, campaignID int64, vs []*Variant) ([]MetricResult, error) {
	out := []MetricResult{}
	rows, err := q.query(`SELECT m.id, m.key, m.name, m.type, m.direction, cm.role FROM campaign_metrics cm JOIN metrics m ON m.id = cm.metric_id
		WHERE cm.campaign_id = ? ORDER BY CASE cm.role WHEN 'secondary' THEN 0 ELSE 1 END, cm.position`, campaignID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r MetricResult
		if err := rows.Scan(&r.MetricID, &r.Key, &r.Name, &r.Type, &r.Direction, &r.Role); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	type sumKey struct{ metric, variant int64 }
	sums := map[sumKey][2]float64{}
	rows, err = q.query(`SELECT metric_id, variant_id, sum, sum_sq FROM metric_sums WHERE campaign_id = ?`, campaignID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var k sumKey
		var s, sq float64
		if err := rows.Scan(&k.metric, &k.variant, &s, &sq); err != nil {
			rows.Close()
			return nil, err
		}
		sums[k] = [2]float64{s, sq}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ctrl := 0
	for i, v := range vs {
		if v.IsControl {
			ctrl = i
			break
		}
	}
	for i := range out {
		r := &out[i]
		mom := make([]stats.Moments, len(vs))
		for j, v := range vs {
			s := sums[sumKey{r.MetricID, v.ID}]
			mom[j] = stats.Moments{N: max(v.Impressions, 0), S: s[0], Q: s[1]}
		}
		r.Variants = make([]MetricVariantResult, len(vs))
		for j, v := range vs {
			mv := MetricVariantResult{VariantID: v.ID, Users: mom[j].N, Total: mom[j].S, treatment: j != ctrl, guard: r.Role == RoleGuardrail}
			if m, ok := mom[j].Mean(); ok {
				mv.Mean = ptrTo(m)
			}
			if sv, ok := mom[j].Variance(); ok {
				mv.StdDev = ptrTo(math.Sqrt(sv))
			}
			if j != ctrl {
				if w, ok := stats.Welch(mom[j], mom[ctrl]); ok {
					mv.Difference = ptrTo(w.Difference)
					mv.PValue, mv.Uplift = w.PValue, w.Uplift
					if w.Lower != nil {
						mv.DifferenceInterval = &[]float64{*w.Lower, *w.Upper}
					}
					mv.Regressed = mv.guard && stats.Regressed(w.Difference, w.SE, mom[j].N+mom[ctrl].N, r.Direction != DirectionDecrease)
				}
			}
			r.Variants[j] = mv
		}
	}
	return out, nil
}
