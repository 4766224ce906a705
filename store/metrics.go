package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Metric types: what a user's value for a metric is.
const (
	// MetricConversion is 1 when the user logged the event at least once.
	MetricConversion = "conversion"
	// MetricCount is the number of the user's events.
	MetricCount = "count"
	// MetricSum adds up a number from the events' metadata.
	MetricSum = "sum"
)

// Metric directions: which way a metric moving is good.
const (
	DirectionIncrease = "increase"
	DirectionDecrease = "decrease"
)

// Metric limits.
const (
	// MaxMetricKeyLen bounds a metric's key.
	MaxMetricKeyLen = 64
	// MaxMetricPropertyLen bounds the metadata key a sum metric reads.
	MaxMetricPropertyLen = 200
	// MinMetricWindowHours and MaxMetricWindowHours bound a metric's
	// window: from 3.6 seconds to a year.
	MinMetricWindowHours = 0.001
	MaxMetricWindowHours = 8760
	// MaxCampaignMetrics bounds a campaign's secondary metrics, and
	// separately its guardrails.
	MaxCampaignMetrics = 10
)

// MetricTypes and MetricDirections are the values the fields take.
var (
	MetricTypes      = []string{MetricConversion, MetricCount, MetricSum}
	MetricDirections = []string{DirectionIncrease, DirectionDecrease}
)

// Metric is something an app measures per user: whether, how often, or
// how much a user did something, by the events they log.
type Metric struct {
	ID          int64   `json:"id"`
	AppID       int64   `json:"appId"`
	Key         string  `json:"key"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Type        string  `json:"type"`
	EventID     string  `json:"eventId"`
	Property    *string `json:"property"`
	// WindowHours counts a user's events for this long after their first
	// assignment; nil counts them until the campaign ends.
	WindowHours *float64 `json:"windowHours"`
	Direction   string   `json:"direction"`
	// Cap winsorises each user's value before anything is summed; nil:
	// no cap.
	Cap       *float64 `json:"cap"`
	CreatedAt Time     `json:"createdAt"`
	UpdatedAt Time     `json:"updatedAt"`
}

// MetricInput is a create or a partial update; absent fields are left
// alone. The nullable fields are raw so that an explicit null differs
// from leaving them out.
type MetricInput struct {
	Key         *string         `json:"key"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Type        *string         `json:"type"`
	EventID     *string         `json:"eventId"`
	Property    json.RawMessage `json:"property"`
	WindowHours json.RawMessage `json:"windowHours"`
	Direction   *string         `json:"direction"`
	Cap         json.RawMessage `json:"cap"`
}

// validMetricKey reports whether k is 1 to 64 characters of [a-z0-9_.-].
func validMetricKey(k string) bool {
	if k == "" || len(k) > MaxMetricKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func oneOf(v string, list []string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// nullableNumber reads a field that is null or a finite number.
func nullableNumber(raw json.RawMessage) (v *float64, ok bool) {
	if string(raw) == "null" {
		return nil, true
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	return &f, true
}

// apply merges in into m (a copy of the stored metric, or a new one) and
// records every bad field in fe. The type and property rules are checked
// on the result, so a PATCH that changes one must keep the pair valid.
func (in *MetricInput) apply(m *Metric, create bool, fe FieldErrors) {
	if in.Key != nil || create {
		switch {
		case in.Key == nil:
			fe.Add("key", "is required")
		case !validMetricKey(*in.Key):
			fe.Add("key", fmt.Sprintf("must be 1 to %d characters of a-z, 0-9, _, . and -", MaxMetricKeyLen))
		default:
			m.Key = *in.Key
		}
	}
	if in.Name != nil || create {
		switch {
		case in.Name == nil || strings.TrimSpace(*in.Name) == "":
			fe.Add("name", "is required")
		case tooLong(*in.Name, MaxNameLen):
			fe.Add("name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
		default:
			m.Name = strings.TrimSpace(*in.Name)
		}
	}
	if in.Description != nil {
		if tooLong(*in.Description, MaxAudienceDescriptionLen) {
			fe.Add("description", fmt.Sprintf("must be at most %d characters", MaxAudienceDescriptionLen))
		} else {
			m.Description = *in.Description
		}
	}
	if in.Type != nil || create {
		if in.Type == nil {
			fe.Add("type", "is required")
		} else if !oneOf(*in.Type, MetricTypes) {
			fe.Add("type", "must be one of conversion, count, sum")
		} else {
			m.Type = *in.Type
		}
	}
	if in.EventID != nil || create {
		switch {
		case in.EventID == nil || strings.TrimSpace(*in.EventID) == "":
			fe.Add("eventId", "is required")
		case tooLong(*in.EventID, MaxEventIDLen):
			fe.Add("eventId", fmt.Sprintf("must be at most %d characters", MaxEventIDLen))
		default:
			m.EventID = *in.EventID
		}
	}
	if len(in.Property) > 0 {
		var p string
		switch {
		case string(in.Property) == "null":
			m.Property = nil
		case json.Unmarshal(in.Property, &p) != nil || strings.TrimSpace(p) == "" || tooLong(p, MaxMetricPropertyLen):
			fe.Add("property", fmt.Sprintf("must be a metadata key of 1 to %d characters, or null", MaxMetricPropertyLen))
		default:
			m.Property = &p
		}
	}
	if _, bad := fe["type"]; !bad {
		if _, bad := fe["property"]; !bad {
			switch {
			case m.Type == MetricSum && m.Property == nil:
				fe.Add("property", "is required for a sum metric: the metadata key whose number it adds up")
			case m.Type != MetricSum && m.Type != "" && m.Property != nil:
				fe.Add("property", "must be null unless type is sum")
			}
		}
	}
	if len(in.WindowHours) > 0 {
		v, ok := nullableNumber(in.WindowHours)
		if !ok || v != nil && (*v < MinMetricWindowHours || *v > MaxMetricWindowHours) {
			fe.Add("windowHours", fmt.Sprintf("must be null or a number from %g to %g", MinMetricWindowHours, float64(MaxMetricWindowHours)))
		} else {
			m.WindowHours = v
		}
	}
	if in.Direction != nil {
		if !oneOf(*in.Direction, MetricDirections) {
			fe.Add("direction", "must be increase or decrease")
		} else {
			m.Direction = *in.Direction
		}
	}
	if len(in.Cap) > 0 {
		v, ok := nullableNumber(in.Cap)
		if !ok || v != nil && *v <= 0 {
			fe.Add("cap", "must be null or a number greater than 0")
		} else {
			m.Cap = v
		}
	}
}

// metricFields are what the audit log compares of a metric.
type metricFields struct {
	Key         string   `json:"key"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Type        string   `json:"type"`
	EventID     string   `json:"eventId"`
	Property    *string  `json:"property"`
	WindowHours *float64 `json:"windowHours"`
	Direction   string   `json:"direction"`
	Cap         *float64 `json:"cap"`
}

func (m *Metric) fields() metricFields {
	return metricFields{m.Key, m.Name, m.Description, m.Type, m.EventID, m.Property, m.WindowHours, m.Direction, m.Cap}
}

const metricColumns = `id, app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at`

func scanMetric(row scanner) (*Metric, error) {
	m := &Metric{}
	var prop sql.NullString
	var window, cap sql.NullFloat64
	var created, updated int64
	if err := row.Scan(&m.ID, &m.AppID, &m.Key, &m.Name, &m.Description, &m.Type, &m.EventID, &prop, &window, &m.Direction, &cap, &created, &updated); err != nil {
		return nil, err
	}
	if prop.Valid {
		m.Property = &prop.String
	}
	if window.Valid {
		m.WindowHours = &window.Float64
	}
	if cap.Valid {
		m.Cap = &cap.Float64
	}
	m.CreatedAt, m.UpdatedAt = NewTime(fromMS(created)), NewTime(fromMS(updated))
	return m, nil
}

// checkMetricKeyFree records a key that another metric of the app has.
func (tx *Tx) checkMetricKeyFree(appID, id int64, key string, fe FieldErrors) error {
	var other int64
	err := tx.queryRow(`SELECT id FROM metrics WHERE app_id = ? AND key = ? AND id <> ?`, appID, key, id).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	fe.Add("key", fmt.Sprintf("is already the key of metric %d of this app", other))
	return nil
}

// CreateMetric creates a metric in an app.
func (db *DB) CreateMetric(ctx context.Context, appID int64, in MetricInput) (*Metric, error) {
	m := &Metric{AppID: appID, Direction: DirectionIncrease}
	fe := FieldErrors{}
	in.apply(m, true, fe)
	var id int64
	err := db.withTx(ctx, func(tx *Tx) error {
		if _, bad := fe["key"]; !bad {
			if err := tx.checkMetricKeyFree(appID, 0, m.Key, fe); err != nil {
				return err
			}
		}
		if err := fe.Err(); err != nil {
			return err
		}
		newID, err := tx.insertID(`INSERT INTO metrics (app_id, key, name, description, type, event_id, property, window_hours, direction, cap, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			appID, m.Key, m.Name, m.Description, m.Type, m.EventID, m.Property, m.WindowHours, m.Direction, m.Cap, ms(tx.now), ms(tx.now))
		if err != nil {
			return err
		}
		id = newID
		tx.changed = true
		return tx.audit(auditRecord{app: appID, action: "metric.created", objType: ObjectMetric, objID: id, objName: m.Name, after: m.fields()})
	})
	if err != nil {
		return nil, err
	}
	return db.FindMetricByID(ctx, appID, id)
}

// FindMetricByID returns a metric of the app; one of another app is
// reported missing.
func (db *DB) FindMetricByID(ctx context.Context, appID, id int64) (*Metric, error) {
	return findMetric(db.reader(ctx), appID, id)
}

func findMetric(q conn, appID, id int64) (*Metric, error) {
	m, err := scanMetric(q.queryRow(`SELECT `+metricColumns+` FROM metrics WHERE id = ? AND app_id = ?`, id, appID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("metric")
	}
	return m, err
}

// FindMetrics lists an app's metrics, newest first.
func (db *DB) FindMetrics(ctx context.Context, appID int64, o ListOptions) ([]*Metric, Pagination, error) {
	return findPage(ctx, db, "metrics", metricColumns, `app_id = ?`, []any{appID}, o, scanMetric)
}

// MetricCampaign is a campaign that uses a metric, and how.
type MetricCampaign struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Role   string `json:"role"`
}

// metricCampaigns lists the campaigns that use a metric, by id, those in
// one of statuses when any are given.
func metricCampaigns(q conn, metricID int64, statuses ...string) ([]MetricCampaign, error) {
	where, args := `cm.metric_id = ?`, []any{metricID}
	if len(statuses) > 0 {
		where += ` AND c.status IN (?` + strings.Repeat(`, ?`, len(statuses)-1) + `)`
		for _, s := range statuses {
			args = append(args, s)
		}
	}
	rows, err := q.query(`SELECT c.id, c.name, c.status, cm.role FROM campaign_metrics cm JOIN campaigns c ON c.id = cm.campaign_id
		WHERE `+where+` ORDER BY c.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []MetricCampaign{}
	for rows.Next() {
		var c MetricCampaign
		if err := rows.Scan(&c.ID, &c.Name, &c.Status, &c.Role); err != nil {
			return nil, err
		}
		list = append(list, c)
	}
	return list, rows.Err()
}

// FindMetricCampaigns lists the campaigns of the app that use a metric.
func (db *DB) FindMetricCampaigns(ctx context.Context, appID, id int64) ([]MetricCampaign, error) {
	q := db.reader(ctx)
	if _, err := findMetric(q, appID, id); err != nil {
		return nil, err
	}
	return metricCampaigns(q, id)
}

// usedBy is the error of a change refused because campaigns use a metric.
func usedBy(msg string, fields map[string]any, used []MetricCampaign) error {
	d := map[string]any{"campaigns": used}
	if fields != nil {
		d["fields"] = fields
	}
	return &Error{Code: EINVALID, Message: msg, Details: d}
}

// UpdateMetric applies a partial update. While an active or paused
// campaign uses the metric only its name and description may change: the
// rest defines the values being collected.
func (db *DB) UpdateMetric(ctx context.Context, appID, id int64, in MetricInput) (*Metric, error) {
	err := db.withTx(ctx, func(tx *Tx) error {
		cur, err := findMetric(tx.conn, appID, id)
		if err != nil {
			return err
		}
		m := *cur
		fe := FieldErrors{}
		in.apply(&m, false, fe)
		if err := fe.Err(); err != nil {
			return err
		}
		before, after := cur.fields(), m.fields()
		if frozen := frozenMetricFields(before, after); len(frozen) > 0 {
			running, err := metricCampaigns(tx.conn, id, CampaignActive, CampaignPaused)
			if err != nil {
				return err
			}
			if len(running) > 0 {
				fields := map[string]any{}
				for _, f := range frozen {
					fields[f] = "cannot be changed while an active or paused campaign uses the metric"
				}
				return usedBy(fmt.Sprintf("%s cannot be changed while an active or paused campaign uses the metric (campaign %d)", frozen[0], running[0].ID), fields, running)
			}
		}
		// The moves journaled before the change are applied by the type and
		// cap they were judged under.
		if frozen := frozenMetricFields(before, after); len(frozen) > 0 {
			if err := tx.applyMetricMoves(); err != nil {
				return err
			}
		}
		if m.Key != cur.Key {
			if err := tx.checkMetricKeyFree(appID, id, m.Key, fe); err != nil {
				return err
			}
			if err := fe.Err(); err != nil {
				return err
			}
		}
		if _, err := tx.exec(`UPDATE metrics SET key = ?, name = ?, description = ?, type = ?, event_id = ?, property = ?, window_hours = ?, direction = ?, cap = ?, updated_at = ? WHERE id = ?`,
			m.Key, m.Name, m.Description, m.Type, m.EventID, m.Property, m.WindowHours, m.Direction, m.Cap, ms(tx.now), id); err != nil {
			return err
		}
		tx.changed = true
		return tx.audit(auditRecord{app: appID, action: "metric.updated", objType: ObjectMetric, objID: id, objName: m.Name, before: before, after: after})
	})
	if err != nil {
		return nil, err
	}
	return db.FindMetricByID(ctx, appID, id)
}

// frozenMetricFields names, in body order, the fields that differ between
// a and b other than name and description.
func frozenMetricFields(a, b metricFields) []string {
	var out []string
	eqS := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqF := func(x, y *float64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	for _, f := range []struct {
		name string
		same bool
	}{
		{"key", a.Key == b.Key},
		{"type", a.Type == b.Type},
		{"eventId", a.EventID == b.EventID},
		{"property", eqS(a.Property, b.Property)},
		{"windowHours", eqF(a.WindowHours, b.WindowHours)},
		{"direction", a.Direction == b.Direction},
		{"cap", eqF(a.Cap, b.Cap)},
	} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}

// DeleteMetric deletes a metric unless a draft, active or paused campaign
// uses it. Completed and archived campaigns that used it lose it, and its
// figures, with it.
func (db *DB) DeleteMetric(ctx context.Context, appID, id int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		cur, err := findMetric(tx.conn, appID, id)
		if err != nil {
			return err
		}
		used, err := metricCampaigns(tx.conn, id, CampaignDraft, CampaignActive, CampaignPaused)
		if err != nil {
			return err
		}
		if len(used) > 0 {
			return usedBy(fmt.Sprintf("metric is used by a draft, active or paused campaign (campaign %d)", used[0].ID), nil, used)
		}
		if _, err := tx.exec(`DELETE FROM campaign_metrics WHERE metric_id = ?`, id); err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM metrics WHERE id = ?`, id); err != nil {
			return err
		}
		tx.changed = true
		return tx.audit(auditRecord{app: appID, action: "metric.deleted", objType: ObjectMetric, objID: id, objName: cur.Name, before: cur.fields()})
	})
}
