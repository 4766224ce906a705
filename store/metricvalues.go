package store

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"service/jsonjs"
	"service/stats"
)

// countMetric queues, for the commit, the event's move of the value of
// one metric of one campaign, for the user who logged it, and of the sums
// of the user's variant (flushMetrics). The rules are those of a
// conversion, applied at this moment: the campaign is running, the user
// was assigned before the event (an impression queued earlier in the
// batch counts as earlier), and, with a window, the event falls within
// windowHours of the assignment. A user's stored value is before the cap,
// so that S moves by the change of the capped value and Q by its
// square's: S and Q stay exactly what the users' capped values add up
// to, however the events arrive.
func (tx *Tx) countMetric(t metricTarget, in *EventInput, now int64) error {
	if ok, err := tx.stillRunning(t.lc, now); err != nil || !ok {
		return err
	}
	delta := 1.0
	if t.m.typ == MetricSum {
		if delta = metadataNumber(in.Metadata, t.m.property); delta == 0 {
			return nil
		}
	}
	tx.metrics = append(tx.metrics, pendingMetric{t: t, user: in.UserID, session: in.SessionID, delta: delta, queued: tx.queued, now: now})
	return nil
}

// pendingMetric is an event's move of a metric, waiting for the commit:
// the user's ids, the value's change (1 for a count or a conversion), and
// how many assignments the transaction had queued when it came
// (Tx.queued), which tells the assignments it may count on.
type pendingMetric struct {
	t             metricTarget
	user, session string
	delta         float64
	queued        int
	now           int64
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

// metricValueRef names a user's value of a metric in a campaign.
type metricValueRef struct {
	campaign, metric int64
	key              string
}

// metricSumRef names a variant's sums of a metric in a campaign.
type metricSumRef struct{ campaign, metric, variant int64 }

// metricMove is the change a commit makes to one user's value: the sum of
// its events' deltas, the metric, and the variant whose sums move.
type metricMove struct {
	ref     metricValueRef
	m       *liveMetric
	variant int64
	delta   float64
}

// metricFound is an assignment a queued metric event counts on.
type metricFound struct {
	key     string
	variant int64
	at      int64
}

// flushMetrics judges the queued metric events, after the assignments
// they count on (the assignments of their userIds come from memory or one
// query per campaign, metricUsers), and journals what they move for the
// applier (metricmoves.go). A user's several events in one commit move
// the value once by their total, which moves the capped sums exactly as
// they would have moved one event at a time: the change of the capped
// value from before the first to after the last.
func (tx *Tx) flushMetrics() error {
	if len(tx.metrics) == 0 {
		return nil
	}
	byUser, err := tx.metricUsers()
	if err != nil {
		return err
	}
	// Values by key, not pointers: a commit of sixty events moves about
	// as many values, each one more object for the collector.
	moves := make(map[metricValueRef]metricMove, len(tx.metrics))
	type sessionAsk struct {
		campaign      int64
		user, session string
	}
	var bySession map[sessionAsk]*metricFound
	for i := range tx.metrics {
		p := &tx.metrics[i]
		var f *metricFound
		if p.user != "" {
			if a, ok := byUser[userKey{p.t.lc.id, 'u', p.user}]; ok && a.at <= p.now && !tx.wroteAfterKey(p.t.lc.id, 'u', p.user, p.queued) {
				f = &a
			}
		}
		if f == nil && p.session != "" {
			if bySession == nil {
				bySession = map[sessionAsk]*metricFound{}
			}
			sr := sessionAsk{p.t.lc.id, p.user, p.session}
			a, ok := bySession[sr]
			if !ok {
				// By sessionId, the person the session belongs to, as a
				// conversion finds it (sessionConvert).
				a = &metricFound{}
				err := tx.queryRow(sessionAssignment[p.user == ""], p.t.lc.id, p.t.lc.id, p.t.lc.appID, p.session, storedKey('s', p.session), p.now).
					Scan(&a.key, &a.variant, &a.at)
				if errors.Is(err, sql.ErrNoRows) {
					a = nil
				} else if err != nil {
					return err
				}
				bySession[sr] = a
			}
			if a != nil && !tx.wroteAfter(assignRef{p.t.lc.id, a.key}, p.queued) {
				f = a
			}
		}
		if f == nil || (p.t.m.windowMS > 0 && p.now-f.at >= p.t.m.windowMS) {
			continue
		}
		ref := metricValueRef{p.t.lc.id, p.t.m.id, f.key}
		if mv, ok := moves[ref]; ok {
			mv.delta += p.delta
			moves[ref] = mv
		} else {
			moves[ref] = metricMove{ref: ref, m: p.t.m, variant: f.variant, delta: p.delta}
		}
	}
	tx.metrics = emptied(tx.metrics)
	for _, mv := range moves {
		tx.journal = appendMoveEntry(tx.journal, &mv)
	}
	return nil
}

// compareMoves orders moves by (campaign, metric, key), the order of the
// values' row locks.
func compareMoves(a, b *metricMove) int {
	return cmp.Or(cmp.Compare(a.ref.campaign, b.ref.campaign), cmp.Compare(a.ref.metric, b.ref.metric), strings.Compare(a.ref.key, b.ref.key))
}

// writeMetricMoves moves the users' values by moves, and the variants'
// sums with them (applyMetricMoves): the values in one statement per kind
// of metric (conversions insert a 1 once, counts and sums add), and the
// sums in one, each in (campaign, metric, key) order, the order two
// processes' passes would lock the rows in.
func (tx *Tx) writeMetricMoves(moves map[metricValueRef]*metricMove) error {
	if err := tx.liveMoves(moves); err != nil || len(moves) == 0 {
		return err
	}
	list := make([]*metricMove, 0, len(moves))
	for _, mv := range moves {
		list = append(list, mv)
	}
	slices.SortFunc(list, compareMoves)
	sums := map[metricSumRef]*[2]float64{}
	move := func(mv *metricMove, before, after float64) {
		b, a := mv.m.capOf(before), mv.m.capOf(after)
		if a == b {
			return
		}
		k := metricSumRef{mv.ref.campaign, mv.ref.metric, mv.variant}
		s := sums[k]
		if s == nil {
			s = &[2]float64{}
			sums[k] = s
		}
		s[0] += a - b
		s[1] += a*a - b*b
	}
	var conversions, adds []*metricMove
	for _, mv := range list {
		if mv.m.typ == MetricConversion {
			conversions = append(conversions, mv)
		} else {
			adds = append(adds, mv)
		}
	}
	for _, conversion := range []bool{true, false} {
		part := adds
		if conversion {
			part = conversions
		}
		if len(part) == 0 {
			continue
		}
		err := tx.db.eng.moveMetricValues(tx, conversion, part, func(ref metricValueRef, after float64) {
			mv := moves[ref]
			if mv == nil {
				return
			}
			if conversion {
				// Inserted: converted now. A user converted before is
				// not returned, and their value stays 1.
				move(mv, 0, 1)
			} else {
				move(mv, after-mv.delta, after)
			}
		})
		if err != nil {
			return err
		}
	}
	if len(sums) == 0 {
		return nil
	}
	keys := make([]metricSumRef, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b metricSumRef) int {
		return cmp.Or(cmp.Compare(a.campaign, b.campaign), cmp.Compare(a.metric, b.metric), cmp.Compare(a.variant, b.variant))
	})
	buf := append(tx.runText[:0], '[')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		s := sums[k]
		buf = strconv.AppendInt(append(buf, '['), k.campaign, 10)
		buf = strconv.AppendInt(append(buf, ','), k.metric, 10)
		buf = strconv.AppendInt(append(buf, ','), k.variant, 10)
		buf = strconv.AppendFloat(append(buf, ','), s[0], 'g', -1, 64)
		buf = append(strconv.AppendFloat(append(buf, ','), s[1], 'g', -1, 64), ']')
	}
	buf = append(buf, ']')
	tx.runText = buf[:0]
	_, err := tx.exec(`INSERT INTO metric_sums (campaign_id, metric_id, variant_id, sum, sum_sq)
		SELECT CAST(j.value ->> 0 AS BIGINT), CAST(j.value ->> 1 AS BIGINT), CAST(j.value ->> 2 AS BIGINT),
			CAST(j.value ->> 3 AS DOUBLE PRECISION), CAST(j.value ->> 4 AS DOUBLE PRECISION)
		FROM `+tx.db.eng.jsonEach()+` WHERE true ORDER BY j.key
		ON CONFLICT (campaign_id, metric_id, variant_id) DO UPDATE SET sum = metric_sums.sum + excluded.sum, sum_sq = metric_sums.sum_sq + excluded.sum_sq`,
		string(buf))
	return err
}

// wroteAfter tells whether this transaction wrote the assignment ref at
// or after the place queued: after the event that asks, which it does not
// count on.
func (tx *Tx) wroteAfter(ref assignRef, queued int) bool {
	seq, ok := tx.wrote[ref]
	return ok && seq >= queued
}

// wroteAfterKey is wroteAfter for a campaign and a user's key, whose
// stored form it builds only when the transaction wrote assignments.
func (tx *Tx) wroteAfterKey(campaign int64, kind byte, user string, queued int) bool {
	return len(tx.wrote) > 0 && tx.wroteAfter(assignRef{campaign, storedKey(kind, user)}, queued)
}

// metricUsers finds the assignments of the queued metric events'
// userIds, by campaign and userId: in memory, where an assignment is
// known with its time (it never changes once stored), else in one query
// per campaign, whose answers memory then keeps. A user's stored key is
// built once per commit, for the moves that name it.
func (tx *Tx) metricUsers() (map[userKey]metricFound, error) {
	found := make(map[userKey]metricFound, len(tx.metrics))
	var campaigns []int64
	for i := range tx.metrics {
		p := &tx.metrics[i]
		if p.user == "" {
			continue
		}
		k := userKey{p.t.lc.id, 'u', p.user}
		if _, ok := found[k]; ok {
			continue
		}
		if vid, at, ok := tx.db.assigned.getAt(k); ok && at != 0 {
			found[k] = metricFound{key: storedKey('u', p.user), variant: vid, at: at}
		} else if !slices.Contains(campaigns, p.t.lc.id) {
			campaigns = append(campaigns, p.t.lc.id)
		}
	}
	slices.Sort(campaigns)
	seen := map[string]bool{}
	for _, c := range campaigns {
		clear(seen)
		list := append(tx.runText[:0], '[')
		for i := range tx.metrics {
			p := &tx.metrics[i]
			if p.user == "" || p.t.lc.id != c || seen[p.user] {
				continue
			}
			seen[p.user] = true
			if _, ok := found[userKey{c, 'u', p.user}]; ok {
				continue
			}
			if len(list) > 1 {
				list = append(list, ',')
			}
			list = jsonjs.AppendQuote(list, storedKey('u', p.user))
		}
		list = append(list, ']')
		tx.runText = list[:0]
		rows, err := tx.query(tx.db.eng.assignmentsOfKeys(), string(list), c)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var f metricFound
			if err := rows.Scan(&f.key, &f.variant, &f.at); err != nil {
				rows.Close()
				return nil, err
			}
			if !strings.HasPrefix(f.key, "u:") {
				continue
			}
			k := userKey{c, 'u', f.key[2:]}
			found[k] = f
			if _, mine := tx.wrote[assignRef{c, f.key}]; !mine {
				tx.after = append(tx.after, func() { tx.db.assigned.putAt(k, f.variant, f.at, tx.epoch) })
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// metadataNumber is the number at key of an event's metadata object, or
// 0 when it is missing or not a finite number (a string "12.5" included:
// a sum adds numbers, and guessing at text would count typos). The
// metadata was checked as JSON when the event came, so a scan of its top
// level finds the value without decoding the rest: decoding the object
// into a map for each sum metric was an eighth of a metric event's
// allocations. Keys written with escapes go the decoder's way.
func metadataNumber(meta json.RawMessage, key string) float64 {
	val, ok := topLevelValue(meta, key)
	if !ok {
		return metadataNumberDecoded(meta, key)
	}
	if len(val) == 0 || (val[0] != '-' && (val[0] < '0' || val[0] > '9')) {
		return 0 // missing, or text, null, a boolean, an object or an array
	}
	v, err := strconv.ParseFloat(string(val), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// metadataNumberDecoded is metadataNumber by the decoder.
func metadataNumberDecoded(meta json.RawMessage, key string) float64 {
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

// topLevelValue returns the text of the value at key in the JSON object
// b (the last one, as decoding keeps it; nil when missing), or false
// when b is not an object it can read without decoding: empty, another
// kind of value, a key with an escape.
func topLevelValue(b []byte, key string) ([]byte, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var found []byte
	for i = skipSpace(b, i+1); i < len(b) && b[i] != '}'; {
		if b[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				return nil, false
			}
			end++
		}
		name := b[i+1 : min(end, len(b))]
		i = skipSpace(b, end+1)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		start := skipSpace(b, i+1)
		if i = skipValue(b, start); i < 0 {
			return nil, false
		}
		if string(name) == key {
			found = b[start:i]
		}
		if i = skipSpace(b, i); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	if i >= len(b) {
		return nil, false
	}
	return found, true
}

// skipValue returns the index just past the JSON value at b[i:], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string at b[i:], or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
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
