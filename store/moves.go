package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"

	"service/stats"
)

// moves is the campaign state machine: from -> allowed targets.
var moves = map[string][]string{
	CampaignDraft:     {CampaignActive, CampaignArchived},
	CampaignActive:    {CampaignPaused, CampaignCompleted},
	CampaignPaused:    {CampaignActive, CampaignCompleted},
	CampaignCompleted: {CampaignArchived},
}

func canMove(from, to string) bool {
	for _, t := range moves[from] {
		if t == to {
			return true
		}
	}
	return false
}

// Webhook payloads of campaign events, fields in the documented order.
type campaignStarted struct {
	CampaignID   int64  `json:"campaignId"`
	CampaignName string `json:"campaignName"`
	StartDate    *Time  `json:"startDate"`
	EndDate      *Time  `json:"endDate"`
}

type campaignPaused struct {
	CampaignID   int64  `json:"campaignId"`
	CampaignName string `json:"campaignName"`
	PausedAt     Time   `json:"pausedAt"`
}

type completedAnalytics struct {
	TotalImpressions        int64   `json:"totalImpressions"`
	TotalConversions        int64   `json:"totalConversions"`
	ConversionRate          float64 `json:"conversionRate"`
	BestVariant             *string `json:"bestVariant"`
	StatisticalSignificance bool    `json:"statisticalSignificance"`
	WinningVariant          *string `json:"winningVariant"`
}

type campaignCompleted struct {
	CampaignID   int64              `json:"campaignId"`
	CampaignName string             `json:"campaignName"`
	CompletedAt  Time               `json:"completedAt"`
	Analytics    completedAnalytics `json:"analytics"`
}

type winnerDeclared struct {
	CampaignID      int64   `json:"campaignId"`
	CampaignName    string  `json:"campaignName"`
	Winner          string  `json:"winner"`
	PValue          float64 `json:"pValue"`
	ConfidenceLevel float64 `json:"confidenceLevel"`
	EffectSize      float64 `json:"effectSize"`
	Interpretation  string  `json:"interpretation"`
}

// move performs one state-machine move inside tx as a conditional UPDATE
// on the status it read, so two movers (an API call and the scheduler)
// can never both apply a move from the same state.
func (tx *Tx) move(appID, id int64, to string) error {
	var from, name string
	var start, end sql.NullInt64
	var nsID sql.NullString
	var nsStart, nsEnd sql.NullFloat64
	err := tx.queryRow(`SELECT status, name, start_at, end_at, namespace_id, namespace_start, namespace_end FROM campaigns WHERE id = ? AND app_id = ?`, id, appID).
		Scan(&from, &name, &start, &end, &nsID, &nsStart, &nsEnd)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("campaign")
	} else if err != nil {
		return err
	}
	if !canMove(from, to) {
		return moveError("campaign", from, to)
	}
	now := ms(tx.now)
	set, args := "status = ?, updated_at = ?", []any{to, now}
	switch to {
	case CampaignActive:
		if !end.Valid || end.Int64 <= now {
			return &Error{Code: EINVALID, Message: "a campaign needs an endDate in the future to be active",
				Details: map[string]any{"from": from, "to": to, "fields": map[string]any{"endDate": "must be set and in the future"}}}
		}
		// Activating before the startDate starts the campaign now: an active
		// campaign that assigns nobody would only confuse.
		if from == CampaignDraft && (!start.Valid || start.Int64 > now) {
			start = sql.NullInt64{Int64: now, Valid: true}
			set += ", start_at = ?"
			args = append(args, now)
		}
		if from == CampaignDraft {
			set += ", started_at = ?"
			args = append(args, now)
		}
		// Never go live with a block end users cannot see: they would be
		// assigned and counted with nothing shown. A draft block is the
		// usual case; a block may also have been archived or deleted while
		// the campaign sat archived, when nothing protects it.
		problems, err := blockProblems(tx.conn, id)
		if err != nil {
			return err
		}
		if len(problems) > 0 {
			return blockError(problems, from, to)
		}
		// Starting or resuming: no campaign of an overlapping range may be
		// running, or the two would share users.
		if ns := scanNamespace(nsID, nsStart, nsEnd); ns != nil {
			if err := tx.checkNamespaceFree(appID, id, ns, map[string]any{"from": from, "to": to}); err != nil {
				return err
			}
		}
	case CampaignCompleted:
		set += ", completed_at = ?"
		args = append(args, now)
	case CampaignArchived:
		set += ", archived_from = ?"
		args = append(args, from)
	}
	res, err := tx.exec(`UPDATE campaigns SET `+set+` WHERE id = ? AND status = ?`, append(args, id, from)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return moveError("campaign", from, to)
	}
	tx.changed = true
	switch {
	case to == CampaignActive && from == CampaignDraft:
		return tx.emit(appID, EventCampaignStarted, campaignStarted{id, name, TimePtr(nullMS(start)), TimePtr(nullMS(end))})
	case to == CampaignPaused:
		return tx.emit(appID, EventCampaignPaused, campaignPaused{id, name, NewTime(tx.now)})
	case to == CampaignCompleted:
		return tx.emitCompleted(appID, id, name)
	}
	return nil
}

// BlockProblem is a variant whose content block keeps its campaign from
// being active, because end users would not see it.
type BlockProblem struct {
	// Variant is the variant's index in the campaign's variants, in the
	// order the API lists them.
	Variant       int
	ContentViewID int64
	// Status is the block's status, "" when it no longer exists.
	Status string
}

// Short is the problem in a few words: "block 7 is a draft".
func (p BlockProblem) Short() string {
	switch p.Status {
	case "":
		return fmt.Sprintf("block %d no longer exists", p.ContentViewID)
	case ContentDraft:
		return fmt.Sprintf("block %d is a draft", p.ContentViewID)
	}
	return fmt.Sprintf("block %d is %s", p.ContentViewID, p.Status)
}

// Reason is the field error on the variant's contentViewId, which says
// what to do about it.
func (p BlockProblem) Reason() string {
	if p.Status == "" {
		return fmt.Sprintf("content block %d no longer exists; choose another block", p.ContentViewID)
	}
	return fmt.Sprintf("content %s; publish it first", p.Short())
}

// Field is the path of the variant's contentViewId in field errors.
func (p BlockProblem) Field() string { return fmt.Sprintf("variants[%d].contentViewId", p.Variant) }

// blockProblems lists the variants of the campaign whose block is not
// published, in the order of its variants.
func blockProblems(q conn, campaignID int64) ([]BlockProblem, error) {
	rows, err := q.query(`SELECT v.content_view_id, c.status FROM campaign_variants v LEFT JOIN content_views c ON c.id = v.content_view_id
		WHERE v.campaign_id = ? ORDER BY v.id`, campaignID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BlockProblem
	for i := 0; rows.Next(); i++ {
		var p BlockProblem
		var status sql.NullString
		if err := rows.Scan(&p.ContentViewID, &status); err != nil {
			return nil, err
		}
		if status.String != ContentPublished {
			p.Variant, p.Status = i, status.String
			out = append(out, p)
		}
	}
	return out, rows.Err()
}

// blockError refuses a move to active over blocks that are not published,
// naming each variant's contentViewId.
func blockError(problems []BlockProblem, from, to string) error {
	fields := make(map[string]any, len(problems))
	for _, p := range problems {
		fields[p.Field()] = p.Reason()
	}
	msg := problems[0].Reason()
	if len(problems) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(problems)-1)
	}
	return &Error{Code: EINVALID, Message: msg, Details: map[string]any{"from": from, "to": to, "fields": fields}}
}

// CampaignBlockProblems lists the variants whose block keeps the campaign
// from being active, so that a page can say so before a start is tried.
// A campaign of another app has none.
func (db *DB) CampaignBlockProblems(ctx context.Context, appID, id int64) ([]BlockProblem, error) {
	var n int
	if err := db.readRow(ctx, `SELECT COUNT(*) FROM campaigns WHERE id = ? AND app_id = ?`, id, appID).Scan(&n); err != nil || n == 0 {
		return nil, err
	}
	return blockProblems(db.reader(ctx), id)
}

// checkNamespaceFree refuses ns when a campaign of the app other than
// self, active or paused, holds a range of the same namespace that
// overlaps it: two such campaigns would share users. The error names
// those campaigns in details.campaigns; details are added to it, and
// without them (an edit, not a move) the range is named as the bad field.
func (tx *Tx) checkNamespaceFree(appID, self int64, ns *Namespace, details map[string]any) error {
	rows, err := tx.query(`SELECT id, name, status, namespace_start, namespace_end FROM campaigns
		WHERE app_id = ? AND namespace_id = ? AND id <> ? AND status IN ('active','paused')
			AND namespace_start < ? AND namespace_end > ? ORDER BY id`, appID, ns.ID, self, ns.Range[1], ns.Range[0])
	if err != nil {
		return err
	}
	defer rows.Close()
	var clash []NamespaceCampaign
	for rows.Next() {
		var c NamespaceCampaign
		if err := rows.Scan(&c.ID, &c.Name, &c.Status, &c.Range[0], &c.Range[1]); err != nil {
			return err
		}
		clash = append(clash, c)
	}
	if err := rows.Err(); err != nil || len(clash) == 0 {
		return err
	}
	msg := fmt.Sprintf("namespace %q range [%g, %g) overlaps campaign %d (%s), which is %s", ns.ID, ns.Range[0], ns.Range[1], clash[0].ID, clash[0].Name, clash[0].Status)
	if len(clash) > 1 {
		msg += fmt.Sprintf(", and %d more", len(clash)-1)
	}
	if details == nil {
		details = map[string]any{"fields": map[string]any{"namespace.range": "overlaps the range of an active or paused campaign"}}
	}
	details["campaigns"] = clash
	return &Error{Code: EINVALID, Message: msg, Details: details}
}

// emitCompleted emits campaign.completed with the final analytics and,
// when a significant winner exists, campaign.winner_declared.
func (tx *Tx) emitCompleted(appID, id int64, name string) error {
	vs, err := findVariants(tx.conn, id)
	if err != nil {
		return err
	}
	var engine string
	if err := tx.queryRow(`SELECT stats_engine FROM campaigns WHERE id = ?`, id).Scan(&engine); err != nil {
		return err
	}
	r := analyze(vs, engine)
	a := completedAnalytics{
		TotalImpressions:        r.TotalImpressions,
		TotalConversions:        r.TotalConversions,
		ConversionRate:          r.AverageConversionRate,
		StatisticalSignificance: r.Significant,
	}
	best := bestArm(r.Arms)
	if best >= 0 {
		a.BestVariant = &r.Arms[best].Name
	}
	winner := -1
	if r.WinnerID != nil {
		for i, arm := range r.Arms {
			if arm.ID == *r.WinnerID {
				winner = i
			}
		}
	}
	if winner >= 0 {
		a.WinningVariant = &r.Arms[winner].Name
	}
	if err := tx.emit(appID, EventCampaignCompleted, campaignCompleted{id, name, NewTime(tx.now), a}); err != nil {
		return err
	}
	if winner < 0 || r.PValue == nil {
		return nil
	}
	w := r.Arms[winner]
	other := 0.0
	for i, arm := range r.Arms {
		if i != winner && arm.Impressions > 0 && arm.ConversionRate > other {
			other = arm.ConversionRate
		}
	}
	d := winnerDeclared{CampaignID: id, CampaignName: name, Winner: w.Name, PValue: *r.PValue}
	if r.WinnerConfidence != nil {
		d.ConfidenceLevel = *r.WinnerConfidence
	}
	if r.EffectSize != nil {
		d.EffectSize = *r.EffectSize
	}
	d.Interpretation = stats.Interpretation(w.Name, w.ConversionRate, other, d.ConfidenceLevel)
	return tx.emit(appID, EventWinnerDeclared, d)
}

// bestArm is the arm with the highest conversion rate among those with
// impressions, or -1.
func bestArm(arms []stats.ArmResult) int {
	best := -1
	for i, a := range arms {
		if a.Impressions > 0 && (best < 0 || a.ConversionRate > arms[best].ConversionRate) {
			best = i
		}
	}
	return best
}

// analyze runs the statistics over a campaign's counters, decided by the
// campaign's engine.
func analyze(vs []*Variant, engine string) stats.Result {
	arms := make([]stats.Arm, len(vs))
	for i, v := range vs {
		arms[i] = stats.Arm{ID: v.ID, Name: v.Name, Impressions: v.Impressions, Conversions: v.Conversions,
			Allocation: v.TrafficAllocation, Control: v.IsControl}
	}
	return stats.AnalyzeWith(arms, stats.Engine(engine))
}

// ScheduleResult says what one scheduler pass did.
type ScheduleResult struct {
	Started, Completed []int64
	// Blocked are the due drafts that could not start, and why; each
	// pass tries them again.
	Blocked []BlockedStart
}

// BlockedStart is a draft whose startDate has come but which cannot start:
// a block is not published, or a running campaign holds its namespace
// range.
type BlockedStart struct {
	AppID, CampaignID int64
	Reason            string
}

// RunSchedule starts drafts whose startDate has come (and whose endDate has
// not) and completes active and paused campaigns whose endDate has passed.
// It catches up after downtime because it acts on dates, not on ticks.
// Each campaign moves in its own transaction through the same conditional
// move as the API, so a concurrent API call and the scheduler never both
// apply a move.
func (db *DB) RunSchedule(ctx context.Context) (ScheduleResult, error) {
	var out ScheduleResult
	// The moves made here are the scheduler's, whoever runs the pass.
	ctx = WithCaller(ctx, Caller{Actor: Actor{Type: ActorScheduler}})
	now := ms(db.Now())
	type due struct {
		app, id int64
		to      string
	}
	var list []due
	rows, err := db.read.QueryContext(ctx, `
		SELECT app_id, id, 'active' FROM campaigns WHERE status = 'draft' AND start_at IS NOT NULL AND start_at <= ? AND end_at > ?
		UNION ALL
		SELECT app_id, id, 'completed' FROM campaigns WHERE status IN ('active','paused') AND end_at IS NOT NULL AND end_at <= ?`, now, now, now)
	if err != nil {
		return out, err
	}
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.app, &d.id, &d.to); err != nil {
			rows.Close()
			return out, err
		}
		list = append(list, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, err
	}
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	var errs []error
	for _, d := range list {
		err := db.withTx(ctx, func(tx *Tx) error {
			// The list was read outside this transaction: an edit committed
			// since may have moved the dates, so they are checked again here.
			var start, end sql.NullInt64
			if err := tx.queryRow(`SELECT start_at, end_at FROM campaigns WHERE id = ?`, d.id).Scan(&start, &end); err != nil {
				return err
			}
			now := ms(tx.now)
			due := end.Valid && end.Int64 <= now
			if d.to == CampaignActive {
				due = start.Valid && start.Int64 <= now && end.Valid && end.Int64 > now
			}
			if !due {
				return errNotDue
			}
			before, err := findCampaign(tx.conn, d.app, d.id)
			if err != nil {
				return err
			}
			if err := tx.move(d.app, d.id, d.to); err != nil {
				return err
			}
			return tx.auditCampaign(d.app, d.id, before)
		})
		switch {
		case err == nil && d.to == CampaignActive:
			out.Started = append(out.Started, d.id)
		case err == nil:
			out.Completed = append(out.Completed, d.id)
		case d.to == CampaignActive && preconditionFailed(err):
			out.Blocked = append(out.Blocked, BlockedStart{AppID: d.app, CampaignID: d.id, Reason: err.Error()})
		case errors.Is(err, errNotDue), errors.Is(err, sql.ErrNoRows), ErrorCode(err) == EINVALID, ErrorCode(err) == ENOTFOUND:
			// Edited, moved or deleted by someone else first; nothing to do.
		default:
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

var errNotDue = errors.New("store: campaign no longer due")

// preconditionFailed tells a move refused for what the campaign needs (its
// blocks, its namespace range) from one that lost a race: the first names
// fields or campaigns in its details, a refused move only from and to.
func preconditionFailed(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Code != EINVALID {
		return false
	}
	_, fields := e.Details["fields"]
	_, campaigns := e.Details["campaigns"]
	return fields || campaigns
}
