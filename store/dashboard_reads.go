package store

// Reads only the dashboard needs: searching campaigns by name, why a user
// is in or out of an audience, which campaigns target an audience, event
// counts per id and one user's assignments.

import (
	"context"
	"database/sql"
	"time"
)

// AudienceCheck is the answer to "is this user in the audience, and why".
type AudienceCheck struct {
	Match     bool
	KnownUser bool
	// Rules holds, per rule of the definition in its written order,
	// whether it holds for the user. Empty for an unknown user.
	Rules []bool
}

// FirstFailed is the index of the first rule that does not hold, or -1.
func (c *AudienceCheck) FirstFailed() int {
	for i, ok := range c.Rules {
		if !ok {
			return i
		}
	}
	return -1
}

// ExplainUserInAudience is UserInAudience with each rule's result, read
// in one snapshot. An archived audience is still evaluated.
func (db *DB) ExplainUserInAudience(ctx context.Context, appID, audienceID int64, userID string) (*AudienceCheck, error) {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	q := db.readTx(ctx, tx)
	r, err := db.loadAudienceUser(q, appID, audienceID, userID)
	if err != nil {
		return nil, err
	}
	if !r.found {
		return nil, notFound("audience")
	}
	out := &AudienceCheck{KnownUser: r.knownUser}
	if !r.knownUser {
		return out, nil
	}
	now := db.Now().UTC()
	// Explain reads every attribute rule, so the profile is always decoded.
	r.c = &compiledAudience{def: r.c.def, eventIDs: r.c.eventIDs, window: r.c.window, bounded: r.c.bounded,
		needsAttrs: true, userEvents: r.c.userEvents, userEventsRead: r.c.userEventsRead, readTail: r.c.readTail}
	attrs, facts, err := userFacts(q, nil, r, appID, userID, now)
	if err != nil {
		return nil, err
	}
	out.Match, out.Rules = r.c.def.Explain(attrs, facts, now)
	return out, nil
}

// FindCampaignsNamed is FindCampaigns narrowed to names containing name
// (case-insensitive for ASCII letters).
func (db *DB) FindCampaignsNamed(ctx context.Context, appID int64, status, name string, o ListOptions) ([]*Campaign, Pagination, error) {
	return db.findCampaigns(ctx, appID, status, name, o)
}

// CampaignRef names a campaign.
type CampaignRef struct {
	ID     int64
	Name   string
	Status string
}

// CampaignsUsingAudience lists the campaigns of the app that target the
// audience, newest first.
func (db *DB) CampaignsUsingAudience(ctx context.Context, appID, audienceID int64) ([]CampaignRef, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, status FROM campaigns WHERE app_id = ? AND audience_id = ? ORDER BY id DESC`, appID, audienceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CampaignRef
	for rows.Next() {
		var c CampaignRef
		if err := rows.Scan(&c.ID, &c.Name, &c.Status); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// EventCount is how often one event id was logged lately.
type EventCount struct {
	EventID                  string
	Last24h, Last7d, Last30d int64
}

// EventCounts counts an app's events per event id over the last 24 hours,
// 7 days and 30 days before now, most frequent first, in one pass over the
// (app_id, event_id, ts) index, which covers the query.
func (db *DB) EventCounts(ctx context.Context, appID int64, now time.Time) ([]EventCount, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT event_id, SUM(CASE WHEN ts >= ? THEN 1 ELSE 0 END), SUM(CASE WHEN ts >= ? THEN 1 ELSE 0 END), COUNT(*)
		FROM `+db.eng.eventsByEventTS()+` WHERE app_id = ? AND ts >= ?
		GROUP BY event_id ORDER BY COUNT(*) DESC, event_id LIMIT 200`,
		ms(now.Add(-24*time.Hour)), ms(now.Add(-7*24*time.Hour)), appID, ms(now.Add(-30*24*time.Hour)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []EventCount
	for rows.Next() {
		var c EventCount
		if err := rows.Scan(&c.EventID, &c.Last24h, &c.Last7d, &c.Last30d); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// UserAssignment is one campaign a user was assigned in.
type UserAssignment struct {
	CampaignID   int64
	CampaignName string
	Status       string
	VariantID    int64
	VariantName  string
	AssignedAt   Time
	ConvertedAt  *Time
}

// FindUserAssignments lists the campaigns of the app a userId was assigned
// in, newest assignment first: one primary-key lookup per campaign.
func (db *DB) FindUserAssignments(ctx context.Context, appID int64, userID string) ([]UserAssignment, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT c.id, c.name, c.status, a.variant_id, COALESCE(v.name, ''), a.assigned_at, a.converted_at
		FROM campaigns AS c JOIN assignments AS a ON a.campaign_id = c.id AND a.user_key = ?
		LEFT JOIN campaign_variants AS v ON v.id = a.variant_id
		WHERE c.app_id = ? ORDER BY a.assigned_at DESC, c.id DESC`, storedKey('u', userID), appID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UserAssignment
	for rows.Next() {
		var u UserAssignment
		var at int64
		var conv sql.NullInt64
		if err := rows.Scan(&u.CampaignID, &u.CampaignName, &u.Status, &u.VariantID, &u.VariantName, &at, &conv); err != nil {
			return nil, err
		}
		u.AssignedAt, u.ConvertedAt = NewTime(fromMS(at)), TimePtr(nullMS(conv))
		out = append(out, u)
	}
	return out, rows.Err()
}
