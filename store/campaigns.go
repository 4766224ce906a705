package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"service/stats"
)

// Campaign statuses.
const (
	CampaignDraft     = "draft"
	CampaignActive    = "active"
	CampaignPaused    = "paused"
	CampaignCompleted = "completed"
	CampaignArchived  = "archived"
)

// Assignment types.
const (
	AssignWeighted   = "weighted"
	AssignRoundRobin = "round_robin"
)

// Guardrail actions: what a regressed guardrail does besides the
// campaign.guardrail_regressed webhook.
const (
	GuardrailAlert = "alert"
	GuardrailPause = "pause"
)

// CampaignMetrics are the metrics a campaign reports beside its goal:
// secondary metrics that explain a result, and guardrails that must not
// get worse. Each list is in the order given.
type CampaignMetrics struct {
	Secondary  []int64 `json:"secondary"`
	Guardrails []int64 `json:"guardrails"`
}

// Variant limits per campaign.
const (
	MinVariants = 2
	MaxVariants = 20
)

// Campaign is a time-bound A/B test over content blocks.
type Campaign struct {
	ID    int64  `json:"id"`
	AppID int64  `json:"appId"`
	Name  string `json:"name"`
	// Key names the campaign in code and in OpenFeature: unique in the
	// app, changeable while a draft.
	Key            string  `json:"key"`
	Description    string  `json:"description"`
	Status         string  `json:"status"`
	StartDate      *Time   `json:"startDate"`
	EndDate        *Time   `json:"endDate"`
	Timezone       string  `json:"timezone"`
	GoalEventID    *string `json:"goalEventId"`
	AudienceID     *int64  `json:"audienceId"`
	AssignmentType string  `json:"assignmentType"`
	StatsEngine    string  `json:"statsEngine"`
	// Namespace is the share of the app's users the campaign may take;
	// nil: every user.
	Namespace *Namespace `json:"namespace"`
	// CupedLookbackDays is how many days before a user's first assignment
	// count towards the user's CUPED covariate; 0 turns CUPED off.
	CupedLookbackDays int `json:"cupedLookbackDays"`
	// Metrics are the secondary metrics and guardrails; the goal stays
	// the primary metric and decides the winner.
	Metrics CampaignMetrics `json:"metrics"`
	// GuardrailAction is what a guardrail's regression does besides its
	// webhook: GuardrailAlert, or GuardrailPause, which pauses the campaign.
	GuardrailAction string     `json:"guardrailAction"`
	Variants        []*Variant `json:"variants"`
	Analytics       *Totals    `json:"analytics,omitempty"`
	CreatedBy       *int64     `json:"createdBy"`
	CreatedAt       Time       `json:"createdAt"`
	UpdatedAt       Time       `json:"updatedAt"`

	archivedFrom string
}

// Variant is one arm of a campaign, showing one content block.
type Variant struct {
	ID                int64   `json:"id"`
	CampaignID        int64   `json:"campaignId"`
	Name              string  `json:"name"`
	ContentViewID     int64   `json:"contentViewId"`
	TrafficAllocation float64 `json:"trafficAllocation"`
	IsControl         bool    `json:"isControl"`
	Impressions       int64   `json:"impressions"`
	Conversions       int64   `json:"conversions"`
	ConversionRate    float64 `json:"conversionRate"`

	// CUPED's sums of the covariate X, X² and X·Y over the variant's
	// users; impressions and conversions are its n and ΣY.
	sumX, sumXX, sumXY int64
}

// Namespace places a campaign in a range [start, end) of a namespace:
// campaigns of one namespace whose ranges do not overlap never share a
// user (see assign.InNamespace).
type Namespace struct {
	ID    string     `json:"id"`
	Range [2]float64 `json:"range"`
}

// DefaultCupedLookbackDays is a new campaign's CUPED lookback.
const DefaultCupedLookbackDays = 14

// MaxCupedLookbackDays bounds the lookback: events are kept 90 days by
// default, so a longer one would count events that are gone.
const MaxCupedLookbackDays = 90

// Totals are the analytics a campaign carries on GET.
type Totals struct {
	TotalImpressions int64 `json:"totalImpressions"`
	TotalConversions int64 `json:"totalConversions"`
}

// CampaignStatuses are the statuses a list may filter by.
var CampaignStatuses = []string{CampaignDraft, CampaignActive, CampaignPaused, CampaignCompleted, CampaignArchived}

// CreateCampaign creates a campaign with its variants in one transaction.
func (db *DB) CreateCampaign(ctx context.Context, appID int64, createdBy int64, in CampaignInput) (*Campaign, error) {
	fe := FieldErrors{}
	tz := "UTC"
	if in.Timezone != nil {
		tz = *in.Timezone
	}
	ed := in.validate(true, tz, fe)
	if ed.start != nil && ed.end != nil && !ed.end.After(*ed.start) {
		fe.Add("endDate", "must be after startDate")
	}
	// No early return on fe: the references are checked too, so the answer
	// names every bad field at once.
	var id int64
	err := db.withTxRetry(ctx, func(tx *Tx) (err error) {
		if err := tx.checkRefs(appID, ed, fe); err != nil {
			return err
		}
		if err := fe.Err(); err != nil {
			return err
		}
		desc := ""
		if ed.description != nil {
			desc = *ed.description
		}
		assignment := AssignWeighted
		if ed.assignment != nil {
			assignment = *ed.assignment
		}
		engine := string(stats.EngineFrequentist)
		if ed.engine != nil {
			engine = *ed.engine
		}
		cuped := DefaultCupedLookbackDays
		if ed.cuped != nil {
			cuped = *ed.cuped
		}
		guardrailAction := GuardrailAlert
		if ed.guardrailAction != nil {
			guardrailAction = *ed.guardrailAction
		}
		// A draft may plan a range that a running campaign holds: it only
		// cannot start while the range is held (see move).
		nsID, nsStart, nsEnd := namespaceArgs(ed.namespace)
		var key string
		if ed.key != nil {
			if taken, err := tx.campaignKeyTaken(appID, *ed.key, 0); err != nil {
				return err
			} else if taken {
				return keyTakenError(*ed.key)
			}
			key = *ed.key
		} else if key, err = tx.freeCampaignKey(appID, CampaignKeySlug(*ed.name)); err != nil {
			return err
		}
		newID, err := tx.insertID(`INSERT INTO campaigns (app_id, name, key, description, status, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
				namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'draft', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			appID, *ed.name, key, desc, msPtr(ed.start), msPtr(ed.end), tz, ed.goal, ed.audience, assignment, engine,
			nsID, nsStart, nsEnd, cuped, guardrailAction, nullID(createdBy), ms(tx.now), ms(tx.now))
		if err != nil {
			return err
		}
		id = newID
		if err := tx.insertVariants(id, ed.variants); err != nil {
			return err
		}
		if err := tx.insertCampaignMetrics(id, ed.metrics); err != nil {
			return err
		}
		tx.changed = true
		if ed.status != nil && *ed.status == CampaignActive {
			if err := tx.move(appID, id, CampaignActive); err != nil {
				return err
			}
		}
		return tx.auditCampaign(appID, id, nil)
	})
	if err != nil {
		return nil, err
	}
	return db.FindCampaignByID(ctx, appID, id)
}

// insertCampaignMetrics links a campaign to its metrics.
func (tx *Tx) insertCampaignMetrics(campaignID int64, m CampaignMetrics) error {
	for _, role := range []struct {
		name string
		ids  []int64
	}{{"secondary", m.Secondary}, {"guardrail", m.Guardrails}} {
		for i, id := range role.ids {
			if _, err := tx.exec(`INSERT INTO campaign_metrics (campaign_id, metric_id, role, position) VALUES (?, ?, ?, ?)`, campaignID, id, role.name, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// attachMetrics fills campaigns' metrics with one query.
func attachMetrics(q conn, list []*Campaign) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]int64, len(list))
	byID := make(map[int64]*Campaign, len(list))
	for i, c := range list {
		ids[i], byID[c.ID] = c.ID, c
		c.Metrics = CampaignMetrics{Secondary: []int64{}, Guardrails: []int64{}}
	}
	rows, err := q.query(`SELECT campaign_id, metric_id, role FROM campaign_metrics
		WHERE campaign_id IN (`+q.stmts.eng.jsonIDs()+`) ORDER BY campaign_id, position`, jsonIDs(ids))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var cid, mid int64
		var role string
		if err := rows.Scan(&cid, &mid, &role); err != nil {
			return err
		}
		c := byID[cid]
		if c == nil {
			continue
		}
		if role == "guardrail" {
			c.Metrics.Guardrails = append(c.Metrics.Guardrails, mid)
		} else {
			c.Metrics.Secondary = append(c.Metrics.Secondary, mid)
		}
	}
	return rows.Err()
}

func (tx *Tx) insertVariants(campaignID int64, vs []VariantInput) error {
	for _, v := range vs {
		if _, err := tx.exec(`INSERT INTO campaign_variants (campaign_id, name, content_view_id, traffic_allocation, is_control) VALUES (?, ?, ?, ?, ?)`,
			campaignID, strings.TrimSpace(*v.Name), *v.ContentViewID, *v.TrafficAllocation, v.IsControl != nil && *v.IsControl); err != nil {
			return err
		}
	}
	return nil
}

const campaignColumns = `id, app_id, name, key, description, status, archived_from, start_at, end_at, timezone, goal_event_id, audience_id, assignment_type, stats_engine,
	namespace_id, namespace_start, namespace_end, cuped_lookback_days, guardrail_action, created_by, created_at, updated_at`

// namespaceArgs are the column values of a namespace, NULL for none.
func namespaceArgs(ns *Namespace) (id, start, end any) {
	if ns == nil {
		return nil, nil, nil
	}
	return ns.ID, ns.Range[0], ns.Range[1]
}

// scanNamespace makes the namespace of its columns, nil for none.
func scanNamespace(id sql.NullString, start, end sql.NullFloat64) *Namespace {
	if !id.Valid {
		return nil
	}
	return &Namespace{ID: id.String, Range: [2]float64{start.Float64, end.Float64}}
}

func scanCampaign(row scanner) (*Campaign, error) {
	c := &Campaign{}
	var archivedFrom, goal, nsID, key sql.NullString
	var nsStart, nsEnd sql.NullFloat64
	var start, end, audience, createdBy sql.NullInt64
	var created, updated int64
	if err := row.Scan(&c.ID, &c.AppID, &c.Name, &key, &c.Description, &c.Status, &archivedFrom, &start, &end, &c.Timezone,
		&goal, &audience, &c.AssignmentType, &c.StatsEngine, &nsID, &nsStart, &nsEnd, &c.CupedLookbackDays, &c.GuardrailAction, &createdBy, &created, &updated); err != nil {
		return nil, err
	}
	c.Key = key.String
	c.Namespace = scanNamespace(nsID, nsStart, nsEnd)
	c.archivedFrom = archivedFrom.String
	c.StartDate, c.EndDate = TimePtr(nullMS(start)), TimePtr(nullMS(end))
	if goal.Valid {
		c.GoalEventID = &goal.String
	}
	if audience.Valid {
		c.AudienceID = &audience.Int64
	}
	if createdBy.Valid {
		c.CreatedBy = &createdBy.Int64
	}
	c.CreatedAt, c.UpdatedAt = NewTime(fromMS(created)), NewTime(fromMS(updated))
	return c, nil
}

func findCampaign(q conn, appID, id int64) (*Campaign, error) {
	c, err := scanCampaign(q.queryRow(`SELECT `+campaignColumns+` FROM campaigns WHERE id = ? AND app_id = ?`, id, appID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("campaign")
	}
	if err != nil {
		return nil, err
	}
	if c.Variants, err = findVariants(q, id); err != nil {
		return nil, err
	}
	return c, attachMetrics(q, []*Campaign{c})
}

const variantColumns = `campaign_id, id, name, content_view_id, traffic_allocation, is_control, impressions, conversions, cuped_sum_x, cuped_sum_xx, cuped_sum_xy`

func scanVariant(rows *sql.Rows) (*Variant, error) {
	v := &Variant{}
	if err := rows.Scan(&v.CampaignID, &v.ID, &v.Name, &v.ContentViewID, &v.TrafficAllocation, &v.IsControl, &v.Impressions, &v.Conversions, &v.sumX, &v.sumXX, &v.sumXY); err != nil {
		return nil, err
	}
	if v.Impressions > 0 {
		v.ConversionRate = float64(v.Conversions) / float64(v.Impressions) * 100
	}
	return v, nil
}

func findVariants(q conn, campaignID int64) ([]*Variant, error) {
	rows, err := q.query(`SELECT `+variantColumns+` FROM campaign_variants WHERE campaign_id = ? ORDER BY id`, campaignID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	vs := []*Variant{}
	for rows.Next() {
		v, err := scanVariant(rows)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, rows.Err()
}

// attachVariants fills a page of campaigns' variants with one query, not
// one per campaign.
func (db *DB) attachVariants(ctx context.Context, list []*Campaign) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]int64, len(list))
	byID := make(map[int64]*Campaign, len(list))
	for i, c := range list {
		ids[i], byID[c.ID] = c.ID, c
		c.Variants = []*Variant{}
	}
	rows, err := db.reader(ctx).query(`SELECT `+variantColumns+` FROM campaign_variants
		WHERE campaign_id IN (`+db.eng.jsonIDs()+`) ORDER BY campaign_id, id`, jsonIDs(ids))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanVariant(rows)
		if err != nil {
			return err
		}
		if c := byID[v.CampaignID]; c != nil {
			c.Variants = append(c.Variants, v)
		}
	}
	return rows.Err()
}

// FindCampaignByID returns a campaign with its variants and totals.
func (db *DB) FindCampaignByID(ctx context.Context, appID, id int64) (*Campaign, error) {
	c, err := findCampaign(db.reader(ctx), appID, id)
	if err != nil {
		return nil, err
	}
	t := &Totals{}
	for _, v := range c.Variants {
		t.TotalImpressions += v.Impressions
		t.TotalConversions += v.Conversions
	}
	c.Analytics = t
	return c, nil
}

// FindCampaigns lists an app's campaigns, newest first. Archived campaigns
// are listed only when asked for by status.
func (db *DB) FindCampaigns(ctx context.Context, appID int64, status string, o ListOptions) ([]*Campaign, Pagination, error) {
	return db.findCampaigns(ctx, appID, status, "", o)
}

// findCampaigns lists an app's campaigns by status and, when name is set,
// by a part of their name.
func (db *DB) findCampaigns(ctx context.Context, appID int64, status, name string, o ListOptions) ([]*Campaign, Pagination, error) {
	where, args := `app_id = ? AND status != 'archived'`, []any{appID}
	if status != "" {
		where, args = `app_id = ? AND status = ?`, []any{appID, status}
	}
	if name != "" {
		// instr instead of LIKE: the search text needs no escaping.
		where += ` AND ` + db.eng.instr() + `(lower(name), lower(?)) > 0`
		args = append(args, name)
	}
	list, p, err := findPage(ctx, db, "campaigns", campaignColumns, where, args, o, scanCampaign)
	if err != nil {
		return nil, Pagination{}, err
	}
	if err := db.attachVariants(ctx, list); err != nil {
		return nil, Pagination{}, err
	}
	if err := attachMetrics(db.reader(ctx), list); err != nil {
		return nil, Pagination{}, err
	}
	return list, p, nil
}

// UpdateCampaign applies a partial update, and a move when status is given,
// in one transaction. What may change depends on the state.
func (db *DB) UpdateCampaign(ctx context.Context, appID, id int64, in CampaignInput) (*Campaign, error) {
	err := db.withTxRetry(ctx, func(tx *Tx) error {
		cur, err := findCampaign(tx.conn, appID, id)
		if err != nil {
			return err
		}
		fe := FieldErrors{}
		ed := in.validate(false, cur.Timezone, fe)
		if ed.key != nil && *ed.key == cur.Key {
			ed.key = nil // the same key again changes nothing, in any state
		}
		// The state's refusal comes first: no value of a refused field is
		// acceptable, so its validation errors would only mislead.
		if f := refusedField(cur.Status, ed); f != "" {
			return &Error{Code: EINVALID, Message: fmt.Sprintf("%s cannot be changed while the campaign is %s", f, cur.Status),
				Details: map[string]any{"field": f, "status": cur.Status, "fields": map[string]any{f: "cannot be changed while the campaign is " + cur.Status}}}
		}
		start, end := timeOf(cur.StartDate), timeOf(cur.EndDate)
		if ed.setStart {
			start = ed.start
		}
		if ed.setEnd {
			end = ed.end
			if cur.Status == CampaignActive || cur.Status == CampaignPaused {
				switch {
				case end == nil:
					fe.Add("endDate", "cannot be removed while the campaign is "+cur.Status)
				case cur.EndDate != nil && end.Before(cur.EndDate.Time):
					fe.Add("endDate", "can only be moved later while the campaign is "+cur.Status)
				case !end.After(tx.now):
					fe.Add("endDate", "must be in the future")
				}
			}
		}
		if start != nil && end != nil && !end.After(*start) {
			fe.Add("endDate", "must be after startDate")
		}
		if err := tx.checkRefs(appID, ed, fe); err != nil {
			return err
		}
		if err := fe.Err(); err != nil {
			return err
		}
		set, args := []string{"updated_at = ?"}, []any{ms(tx.now)}
		add := func(col string, v any) { set = append(set, col+" = ?"); args = append(args, v) }
		if ed.name != nil {
			add("name", *ed.name)
		}
		if ed.key != nil {
			if taken, err := tx.campaignKeyTaken(appID, *ed.key, id); err != nil {
				return err
			} else if taken {
				return keyTakenError(*ed.key)
			}
			add("key", *ed.key)
		}
		if ed.description != nil {
			add("description", *ed.description)
		}
		if ed.setStart {
			add("start_at", msPtr(ed.start))
		}
		if ed.setEnd {
			add("end_at", msPtr(ed.end))
		}
		if ed.timezone != nil {
			add("timezone", *ed.timezone)
		}
		if ed.setGoal {
			add("goal_event_id", ed.goal)
		}
		if ed.setAudience {
			add("audience_id", ed.audience)
		}
		if ed.assignment != nil {
			add("assignment_type", *ed.assignment)
		}
		if ed.engine != nil {
			add("stats_engine", *ed.engine)
		}
		if ed.setNamespace {
			// Moving a draft's range onto one a running campaign holds is
			// refused at once, rather than when the draft is started.
			if ed.namespace != nil {
				if err := tx.checkNamespaceFree(appID, id, ed.namespace, nil); err != nil {
					return err
				}
			}
			nsID, nsStart, nsEnd := namespaceArgs(ed.namespace)
			add("namespace_id", nsID)
			add("namespace_start", nsStart)
			add("namespace_end", nsEnd)
		}
		if ed.cuped != nil {
			add("cuped_lookback_days", *ed.cuped)
		}
		if ed.guardrailAction != nil {
			add("guardrail_action", *ed.guardrailAction)
		}
		if _, err := tx.exec(`UPDATE campaigns SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
			return err
		}
		if ed.setVariants {
			if _, err := tx.exec(`DELETE FROM campaign_variants WHERE campaign_id = ?`, id); err != nil {
				return err
			}
			if err := tx.insertVariants(id, ed.variants); err != nil {
				return err
			}
		}
		if ed.setMetrics {
			if _, err := tx.exec(`DELETE FROM campaign_metrics WHERE campaign_id = ?`, id); err != nil {
				return err
			}
			if err := tx.insertCampaignMetrics(id, ed.metrics); err != nil {
				return err
			}
		}
		tx.changed = true
		if ed.status != nil && *ed.status != cur.Status {
			if err := tx.move(appID, id, *ed.status); err != nil {
				return err
			}
		}
		return tx.auditCampaign(appID, id, cur)
	})
	if err != nil {
		return nil, err
	}
	return db.FindCampaignByID(ctx, appID, id)
}

func timeOf(t *Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Time
	return &v
}

// SetCampaignStatus moves a campaign through its state machine.
func (db *DB) SetCampaignStatus(ctx context.Context, appID, id int64, status string) (*Campaign, error) {
	ok := false
	for _, s := range CampaignStatuses {
		ok = ok || s == status
	}
	if !ok {
		return nil, FieldErrors{"status": "must be one of draft, active, paused, completed, archived"}.Err()
	}
	err := db.withTx(ctx, func(tx *Tx) error {
		cur, err := findCampaign(tx.conn, appID, id)
		if err != nil {
			return err
		}
		if cur.Status == status {
			return moveError("campaign", cur.Status, status)
		}
		if err := tx.move(appID, id, status); err != nil {
			return err
		}
		return tx.auditCampaign(appID, id, cur)
	})
	if err != nil {
		return nil, err
	}
	return db.FindCampaignByID(ctx, appID, id)
}

// UnarchiveCampaign returns an archived campaign to the state it was
// archived from.
func (db *DB) UnarchiveCampaign(ctx context.Context, appID, id int64) (*Campaign, error) {
	err := db.withTx(ctx, func(tx *Tx) error {
		before, err := findCampaign(tx.conn, appID, id)
		if err != nil {
			return err
		}
		cur, to := before.Status, before.archivedFrom
		if to == "" {
			to = CampaignCompleted
		}
		if cur != CampaignArchived {
			// Name the move asked for: the state it would restore means
			// nothing for a campaign that is not archived.
			return &Error{Code: EINVALID, Message: fmt.Sprintf("campaign cannot be unarchived: it is %s, not archived", cur),
				Details: map[string]any{"from": cur, "move": "unarchive"}}
		}
		res, err := tx.exec(`UPDATE campaigns SET status = ?, archived_from = NULL, updated_at = ? WHERE id = ? AND status = 'archived'`, to, ms(tx.now), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return moveError("campaign", cur, to)
		}
		tx.changed = true
		return tx.auditCampaign(appID, id, before)
	})
	if err != nil {
		return nil, err
	}
	return db.FindCampaignByID(ctx, appID, id)
}

// DeleteCampaign deletes a draft, completed or archived campaign with its
// variants, assignments and counters.
func (db *DB) DeleteCampaign(ctx context.Context, appID, id int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		before, err := findCampaign(tx.conn, appID, id)
		if err != nil {
			return err
		}
		cur := before.Status
		if cur == CampaignActive || cur == CampaignPaused {
			return &Error{Code: EINVALID, Message: "an " + cur + " campaign cannot be deleted; complete it first",
				Details: map[string]any{"status": cur}}
		}
		// Assignments go explicitly: on PostgreSQL they have no foreign
		// key to cascade through (see its schema).
		if _, err := tx.exec(`DELETE FROM assignments WHERE campaign_id = ?`, id); err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM campaigns WHERE id = ? AND status = ?`, id, cur); err != nil {
			return err
		}
		tx.changed = true
		return tx.audit(auditRecord{app: appID, action: "campaign.deleted", objType: ObjectCampaign, objID: id, objName: before.Name,
			before: campaignSnapshot(before)})
	})
}

// nullID stores 0 as NULL: no creator (a seeded campaign), no inviter, no
// claim holder.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// campaignFields are what the audit log compares of a campaign: its
// settings and variants, not its counters.
type campaignFields struct {
	Name           string          `json:"name"`
	Key            string          `json:"key"`
	Description    string          `json:"description"`
	Status         string          `json:"status"`
	StartDate      *Time           `json:"startDate"`
	EndDate        *Time           `json:"endDate"`
	Timezone       string          `json:"timezone"`
	GoalEventID    *string         `json:"goalEventId"`
	AudienceID     *int64          `json:"audienceId"`
	AssignmentType string          `json:"assignmentType"`
	StatsEngine    string          `json:"statsEngine"`
	Variants       []variantFields `json:"variants"`
	// Metrics are left out of a snapshot that has none, so campaigns
	// that use no metrics log as they always did.
	Metrics *CampaignMetrics `json:"metrics,omitempty"`
	// GuardrailAction is left out at its default for the same reason.
	GuardrailAction string `json:"guardrailAction,omitempty"`
}

type variantFields struct {
	Name              string  `json:"name"`
	ContentViewID     int64   `json:"contentViewId"`
	TrafficAllocation float64 `json:"trafficAllocation"`
	IsControl         bool    `json:"isControl"`
}

func campaignSnapshot(c *Campaign) *campaignFields {
	f := &campaignFields{Name: c.Name, Key: c.Key, Description: c.Description, Status: c.Status, StartDate: c.StartDate, EndDate: c.EndDate,
		Timezone: c.Timezone, GoalEventID: c.GoalEventID, AudienceID: c.AudienceID, AssignmentType: c.AssignmentType,
		StatsEngine: c.StatsEngine, Variants: make([]variantFields, len(c.Variants))}
	for i, v := range c.Variants {
		f.Variants[i] = variantFields{v.Name, v.ContentViewID, v.TrafficAllocation, v.IsControl}
	}
	if len(c.Metrics.Secondary)+len(c.Metrics.Guardrails) > 0 {
		m := c.Metrics
		f.Metrics = &m
	}
	if c.GuardrailAction != GuardrailAlert {
		f.GuardrailAction = c.GuardrailAction
	}
	return f
}

// auditCampaign records a change to a campaign that before (nil for a new
// one) described. A change of status alone (with the startDate that
// starting it may set) is campaign.status_changed, any other edit
// campaign.updated.
func (tx *Tx) auditCampaign(appID, id int64, before *Campaign) error {
	c, err := findCampaign(tx.conn, appID, id)
	if err != nil {
		return err
	}
	after := campaignSnapshot(c)
	r := auditRecord{app: appID, action: "campaign.created", objType: ObjectCampaign, objID: id, objName: c.Name, after: after}
	if before != nil {
		b := campaignSnapshot(before)
		r.before, r.action = b, "campaign.updated"
		if b.Status != after.Status {
			moved := *b
			moved.Status, moved.StartDate = after.Status, after.StartDate
			if same, err := sameFields(&moved, after); err != nil {
				return err
			} else if same {
				r.action = "campaign.status_changed"
			}
		}
	}
	return tx.audit(r)
}

// sameFields reports whether two snapshots hold the same values.
func sameFields(a, b any) (bool, error) {
	c, err := auditChanges(a, b)
	return len(c) == 0, err
}
