package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FindApps returns every app, in id order.
func (db *DB) FindApps(ctx context.Context) ([]*App, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, plan, rate_limit FROM apps ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*App{}
	for rows.Next() {
		a := &App{}
		if err := rows.Scan(&a.ID, &a.Name, &a.Plan, &a.RateLimit); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// appFields are what the audit log compares of an app.
type appFields struct {
	Name           string   `json:"name"`
	Plan           string   `json:"plan"`
	RateLimit      int      `json:"rateLimit"`
	AllowedOrigins []string `json:"allowedOrigins"`
	// The retentions are left out while they follow the server, so the
	// entries of apps that never set one read as before they existed.
	EventRetentionDays *int `json:"eventRetentionDays,omitempty"`
	FormRetentionDays  *int `json:"formRetentionDays,omitempty"`
}

// appFields reads an app's settings in tx.
func (tx *Tx) appFields(id int64) (*appFields, error) {
	f := &appFields{}
	var origins string
	var events, forms sql.NullInt64
	err := tx.queryRow(`SELECT name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days FROM apps WHERE id = ?`, id).
		Scan(&f.Name, &f.Plan, &f.RateLimit, &origins, &events, &forms)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("app")
	}
	f.AllowedOrigins = strings.Split(origins, ",")
	f.EventRetentionDays, f.FormRetentionDays = nullDays(events), nullDays(forms)
	return f, err
}

// MaxRetentionDays is the longest retention an app can set: ten years.
const MaxRetentionDays = 3650

// RetentionChange sets one of an app's retentions to Days, or, with Days
// nil, back to the server's: --retention for events, and for form
// submissions none (they are kept until deleted).
type RetentionChange struct{ Days *int }

// retentionReason is what a bad retention is told, on every way in.
var retentionReason = fmt.Sprintf("must be a whole number of days from 1 to %d, or null", MaxRetentionDays)

// checkRetention names a retention out of range in fe.
func checkRetention(fe FieldErrors, field string, c *RetentionChange) {
	if c != nil && c.Days != nil && (*c.Days < 1 || *c.Days > MaxRetentionDays) {
		fe.Add(field, retentionReason)
	}
}

// parseRetention reads a retention as the API gives it: left out (nil),
// null, or a whole number of days in range.
func parseRetention(fe FieldErrors, field string, raw json.RawMessage) *RetentionChange {
	if len(raw) == 0 {
		return nil
	}
	if string(raw) == "null" {
		return &RetentionChange{}
	}
	var d float64
	if json.Unmarshal(raw, &d) != nil || d != math.Trunc(d) || d < 1 || d > MaxRetentionDays {
		fe.Add(field, retentionReason)
		return nil
	}
	days := int(d)
	return &RetentionChange{Days: &days}
}

// ParseRetentionDays reads a retention as the command line and the
// dashboard give it: "null" (or empty) follows the server, else a whole
// number of days in range.
func ParseRetentionDays(field, s string) (*RetentionChange, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return &RetentionChange{}, nil
	}
	d, err := strconv.Atoi(s)
	if err != nil || d < 1 || d > MaxRetentionDays {
		fe := FieldErrors{}
		fe.Add(field, retentionReason)
		return nil, fe.Err()
	}
	return &RetentionChange{Days: &d}, nil
}

func nullDays(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	d := int(n.Int64)
	return &d
}

// AppUpdate holds the fields of an app to change; nil leaves one as is.
type AppUpdate struct {
	Name *string
	Plan *string
	// RateLimit 0 takes the plan's limit. A plan change without a rate
	// limit takes the new plan's limit too.
	RateLimit *int
	// AllowedOrigins replaces the browser origins the SDK routes answer
	// (as ParseAllowedOrigins returns them).
	AllowedOrigins *[]string
	// EventRetention and FormRetention set how long the app's events and
	// form submissions are kept.
	EventRetention, FormRetention *RetentionChange
}

// UpdateApp changes an app's name, plan, rate limit, allowed origins or
// retentions.
func (db *DB) UpdateApp(ctx context.Context, id int64, upd AppUpdate) (*App, error) {
	fe := FieldErrors{}
	if upd.Name != nil && strings.TrimSpace(*upd.Name) == "" {
		fe.Add("name", "must not be empty")
	} else if upd.Name != nil && tooLong(strings.TrimSpace(*upd.Name), MaxNameLen) {
		fe.Add("name", "must be at most 200 characters")
	}
	if upd.Plan != nil {
		if _, ok := planLimits[*upd.Plan]; !ok {
			fe.Add("plan", "must be one of free, starter, pro, enterprise")
		}
	}
	if upd.RateLimit != nil && *upd.RateLimit < 0 {
		fe.Add("rateLimit", "must be 0 (the plan's limit) or more")
	}
	checkRetention(fe, "eventRetentionDays", upd.EventRetention)
	checkRetention(fe, "formRetentionDays", upd.FormRetention)
	if upd.AllowedOrigins != nil {
		// The same parser as every other way in, so a list stored here
		// reads back as given.
		list, err := ParseAllowedOrigins(strings.Join(*upd.AllowedOrigins, ","))
		if err != nil {
			return nil, err
		}
		upd.AllowedOrigins = &list
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	a := &App{ID: id}
	err := db.withTx(ctx, func(tx *Tx) error {
		before, err := tx.appFields(id)
		if err != nil {
			return err
		}
		a.Name, a.Plan, a.RateLimit = before.Name, before.Plan, before.RateLimit
		if upd.Name != nil {
			a.Name = strings.TrimSpace(*upd.Name)
		}
		if upd.Plan != nil && *upd.Plan != a.Plan {
			a.Plan = *upd.Plan
			a.RateLimit = planLimits[a.Plan]
		}
		if upd.RateLimit != nil {
			a.RateLimit = *upd.RateLimit
			if a.RateLimit == 0 {
				a.RateLimit = planLimits[a.Plan]
			}
		}
		after := *before
		after.Name, after.Plan, after.RateLimit = a.Name, a.Plan, a.RateLimit
		if _, err = tx.exec(`UPDATE apps SET name = ?, plan = ?, rate_limit = ? WHERE id = ?`, a.Name, a.Plan, a.RateLimit, id); err != nil {
			return err
		}
		if upd.AllowedOrigins != nil {
			after.AllowedOrigins = *upd.AllowedOrigins
			if _, err = tx.exec(`UPDATE apps SET allowed_origins = ? WHERE id = ?`, strings.Join(*upd.AllowedOrigins, ","), id); err != nil {
				return err
			}
		}
		if upd.EventRetention != nil {
			after.EventRetentionDays = upd.EventRetention.Days
			if _, err = tx.exec(`UPDATE apps SET event_retention_days = ? WHERE id = ?`, upd.EventRetention.Days, id); err != nil {
				return err
			}
		}
		if upd.FormRetention != nil {
			after.FormRetentionDays = upd.FormRetention.Days
			if _, err = tx.exec(`UPDATE apps SET form_retention_days = ? WHERE id = ?`, upd.FormRetention.Days, id); err != nil {
				return err
			}
		}
		tx.changed = true
		return tx.audit(auditRecord{app: id, action: "app.updated", objType: ObjectApp, objID: id, objName: a.Name, before: before, after: after})
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// appData lists what an app holds besides its keys, table by table, in
// the order DeleteApp reports it.
var appData = []struct{ name, query string }{
	{"campaigns", `SELECT COUNT(*) FROM campaigns WHERE app_id = ?`},
	{"contentViews", `SELECT COUNT(*) FROM content_views WHERE app_id = ?`},
	{"audiences", `SELECT COUNT(*) FROM audiences WHERE app_id = ?`},
	{"metrics", `SELECT COUNT(*) FROM metrics WHERE app_id = ?`},
	{"users", `SELECT COUNT(*) FROM users WHERE app_id = ?`},
	{"events", `SELECT COUNT(*) FROM events WHERE app_id = ?`},
	{"webhooks", `SELECT COUNT(*) FROM webhooks WHERE app_id = ?`},
	{"formSubmissions", `SELECT COUNT(*) FROM form_submissions WHERE app_id = ?`},
}

// DeleteApp deletes an app and its keys. An app that holds data
// (campaigns, content, audiences, metrics, users, events, webhooks, form
// submissions) is refused unless force is set; with force everything goes
// in the same transaction, so a failure leaves the app whole. It returns
// what was deleted, by kind.
func (db *DB) DeleteApp(ctx context.Context, id int64, force bool) (map[string]int64, error) {
	counts := map[string]int64{}
	err := db.withTx(ctx, func(tx *Tx) error {
		before, err := tx.appFields(id)
		if err != nil {
			return err
		}
		var held []string
		for _, d := range appData {
			var n int64
			if err := tx.queryRow(d.query, id).Scan(&n); err != nil {
				return err
			}
			counts[d.name] = n
			if n > 0 {
				held = append(held, fmt.Sprintf("%d %s", n, d.name))
			}
		}
		if len(held) > 0 && !force {
			details := map[string]any{}
			for k, v := range counts {
				details[k] = v
			}
			return &Error{Code: EINVALID, Message: fmt.Sprintf("app %d holds data (%s); use --force to delete it with all its data", id, strings.Join(held, ", ")),
				Details: details}
		}
		// Events have no foreign key to apps (their table is written in
		// bulk), so they go explicitly, and so do users and assignments,
		// which have none on PostgreSQL for the same reason; campaigns go
		// before the app because they reference audiences, which the app's
		// cascade also deletes.
		deletes := []string{
			`DELETE FROM events WHERE app_id = ?`,
			`DELETE FROM users WHERE app_id = ?`,
			`DELETE FROM assignments WHERE campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?)`,
			`DELETE FROM campaigns WHERE app_id = ?`,
			`DELETE FROM apps WHERE id = ?`,
		}
		if err := tx.db.eng.purgeApp(tx, id); err != nil {
			return err
		}
		for _, q := range deletes {
			if _, err := tx.exec(q, id); err != nil {
				return err
			}
		}
		tx.changed = true
		tx.purged = append(tx.purged, id)
		return tx.audit(auditRecord{app: id, instance: true, action: "app.deleted", objType: ObjectApp, objID: id, objName: before.Name, before: before})
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}

// AppSettings is an app with the browser origins its SDK routes answer:
// what the API answers for an app.
type AppSettings struct {
	App
	AllowedOrigins []string `json:"allowedOrigins"`
	// EventRetentionDays is how many days the app's events are kept; null
	// follows the server's --retention.
	EventRetentionDays *int `json:"eventRetentionDays"`
	// FormRetentionDays is how many days the app's form submissions are
	// kept; null keeps them until they are deleted.
	FormRetentionDays *int `json:"formRetentionDays"`
}

// AppInput is an app's settings as the API takes them. On a create, name
// is required and the rest take their defaults (the instance's default
// plan, its limit, any origin); on an update, a field left out stays as it is. Its fields
// are AppUpdate's, so one converts to the other.
type AppInput struct {
	Name *string `json:"name"`
	Plan *string `json:"plan"`
	// RateLimit 0 takes the plan's limit.
	RateLimit      *int      `json:"rateLimit"`
	AllowedOrigins *[]string `json:"allowedOrigins"`
	// The retentions are raw so that an explicit null (follow the server)
	// differs from leaving them out.
	EventRetentionDays json.RawMessage `json:"eventRetentionDays"`
	FormRetentionDays  json.RawMessage `json:"formRetentionDays"`
}

// appInput is an AppInput as validate reads it.
type appInput struct {
	origins                       []string
	eventRetention, formRetention *RetentionChange
}

// validate names every bad field at once and returns the origins as
// ParseAllowedOrigins reads them, and the retentions.
func (in *AppInput) validate(create bool) (appInput, FieldErrors) {
	fe := FieldErrors{}
	switch {
	case in.Name == nil && create:
		fe.Add("name", "is required")
	case in.Name == nil:
	case strings.TrimSpace(*in.Name) == "":
		fe.Add("name", "must not be empty")
	case tooLong(strings.TrimSpace(*in.Name), MaxNameLen):
		fe.Add("name", "must be at most 200 characters")
	}
	if in.Plan != nil {
		if _, ok := planLimits[*in.Plan]; !ok {
			fe.Add("plan", "must be one of free, starter, pro, enterprise")
		}
	}
	if in.RateLimit != nil && *in.RateLimit < 0 {
		fe.Add("rateLimit", "must be 0 (the plan's limit) or more")
	}
	var origins []string
	if in.AllowedOrigins != nil {
		for i, o := range *in.AllowedOrigins {
			// One origin an entry: a comma would smuggle in a second.
			if strings.Contains(o, ",") {
				fe.Add("allowedOrigins["+strconv.Itoa(i)+"]", "must be one origin, without commas")
			}
		}
		list, err := ParseAllowedOrigins(strings.Join(*in.AllowedOrigins, ","))
		for k, v := range fieldsIn(err) {
			fe.Add(k, v)
		}
		origins = list
	}
	return appInput{origins: origins,
		eventRetention: parseRetention(fe, "eventRetentionDays", in.EventRetentionDays),
		formRetention:  parseRetention(fe, "formRetentionDays", in.FormRetentionDays)}, fe
}

// CheckFields names the bad fields of an app body.
func (in *AppInput) CheckFields(create bool) FieldErrors {
	_, fe := in.validate(create)
	return fe
}

// CreateAppFrom creates an app from the API's body, every bad field named
// at once.
func (db *DB) CreateAppFrom(ctx context.Context, in AppInput) (*AppSettings, error) {
	v, fe := in.validate(true)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	// An empty plan takes the instance's default, a 0 rate limit the
	// plan's, as createApp reads them.
	plan, rate := "", 0
	if in.Plan != nil {
		plan = *in.Plan
	}
	if in.RateLimit != nil {
		rate = *in.RateLimit
	}
	origins := v.origins
	if origins == nil {
		origins = []string{AnyOrigin}
	}
	s := &AppSettings{AllowedOrigins: origins}
	if v.eventRetention != nil {
		s.EventRetentionDays = v.eventRetention.Days
	}
	if v.formRetention != nil {
		s.FormRetentionDays = v.formRetention.Days
	}
	a, err := db.createApp(ctx, strings.TrimSpace(*in.Name), plan, rate, origins, s.EventRetentionDays, s.FormRetentionDays)
	if err != nil {
		return nil, err
	}
	s.App = *a
	return s, nil
}

// UpdateAppFrom changes what the API's body gives, every bad field named
// at once, and returns the app as it now is.
func (db *DB) UpdateAppFrom(ctx context.Context, id int64, in AppInput) (*AppSettings, error) {
	v, fe := in.validate(false)
	if err := fe.Err(); err != nil {
		return nil, err
	}
	upd := AppUpdate{Name: in.Name, Plan: in.Plan, RateLimit: in.RateLimit,
		EventRetention: v.eventRetention, FormRetention: v.formRetention}
	if in.AllowedOrigins != nil {
		upd.AllowedOrigins = &v.origins
	}
	if _, err := db.UpdateApp(ctx, id, upd); err != nil {
		return nil, err
	}
	return db.FindAppSettings(ctx, id)
}

const appSettingsColumns = `id, name, plan, rate_limit, allowed_origins, event_retention_days, form_retention_days`

func scanAppSettings(row scanner) (*AppSettings, error) {
	a := &AppSettings{}
	var origins string
	var events, forms sql.NullInt64
	if err := row.Scan(&a.ID, &a.Name, &a.Plan, &a.RateLimit, &origins, &events, &forms); err != nil {
		return nil, err
	}
	a.AllowedOrigins = strings.Split(origins, ",")
	a.EventRetentionDays, a.FormRetentionDays = nullDays(events), nullDays(forms)
	return a, nil
}

// FindAppSettings returns one app with its allowed origins.
func (db *DB) FindAppSettings(ctx context.Context, id int64) (*AppSettings, error) {
	a, err := scanAppSettings(db.read.QueryRowContext(ctx, `SELECT `+appSettingsColumns+` FROM apps WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("app")
	}
	return a, err
}

// FindAllAppSettings returns every app with its settings, in id order,
// as the command line lists them.
func (db *DB) FindAllAppSettings(ctx context.Context) ([]*AppSettings, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+appSettingsColumns+` FROM apps ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*AppSettings{}
	for rows.Next() {
		a, err := scanAppSettings(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// FindAppsPage lists one page of the apps with their allowed origins,
// newest first, as the API lists resources.
func (db *DB) FindAppsPage(ctx context.Context, o ListOptions) ([]*AppSettings, Pagination, error) {
	return findPage(ctx, db, "apps", appSettingsColumns, "1 = 1", nil, o, scanAppSettings)
}
