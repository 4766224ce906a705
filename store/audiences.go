package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"service/rules"
)

// Audience statuses.
const (
	AudienceActive   = "active"
	AudienceArchived = "archived"
)

// Audience is a user segment: a rule definition over user attributes and
// events, with the number of known users it matched at its last count.
type Audience struct {
	ID               int64           `json:"id"`
	AppID            int64           `json:"appId"`
	Name             string          `json:"name"`
	Description      string          `json:"description"`
	Status           string          `json:"status"`
	CustomerCount    int             `json:"customerCount"`
	LastCalculatedAt *Time           `json:"lastCalculatedAt"`
	Definition       json.RawMessage `json:"definition"`
	CreatedAt        Time            `json:"createdAt"`
	UpdatedAt        Time            `json:"updatedAt"`

	updatedMS int64
}

// AudienceInput is a create or a partial update; nil fields are left alone.
type AudienceInput struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Status      *string         `json:"status"`
	Definition  json.RawMessage `json:"definition"`
}

// AudienceMember is one user an audience matches.
type AudienceMember struct {
	UserID string `json:"userId"`
}

// validate checks every field at once and returns the definition compacted
// (nil when the input has none).
func (in *AudienceInput) validate(create bool) (json.RawMessage, error) {
	fe := FieldErrors{}
	if in.Name != nil || create {
		if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
			fe.Add("name", "is required")
		} else if tooLong(*in.Name, MaxNameLen) {
			fe.Add("name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
		}
	}
	if in.Description != nil && tooLong(*in.Description, MaxAudienceDescriptionLen) {
		fe.Add("description", fmt.Sprintf("must be at most %d characters", MaxAudienceDescriptionLen))
	}
	if in.Status != nil && *in.Status != AudienceActive && *in.Status != AudienceArchived {
		fe.Add("status", "must be one of active, archived")
	}
	var def json.RawMessage
	switch {
	case isNull(in.Definition) && create:
		fe.Add("definition", "is required")
	case isNull(in.Definition) && in.Definition != nil:
		fe.Add("definition", "must be an object with logic and rules")
	case !isNull(in.Definition):
		if _, errs := rules.Compile(in.Definition, "definition"); errs != nil {
			for k, v := range errs {
				fe.Add(k, v)
			}
			break
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, in.Definition); err != nil {
			fe.Add("definition", "must be valid JSON")
			break
		}
		def = buf.Bytes()
	}
	return def, fe.Err()
}

const audienceColumns = `id, app_id, name, description, status, definition, customer_count, last_calculated_at, created_at, updated_at`

func scanAudience(row scanner) (*Audience, error) {
	a := &Audience{}
	var def string
	var calc sql.NullInt64
	var created int64
	if err := row.Scan(&a.ID, &a.AppID, &a.Name, &a.Description, &a.Status, &def, &a.CustomerCount, &calc, &created, &a.updatedMS); err != nil {
		return nil, err
	}
	a.Definition = json.RawMessage(def)
	a.LastCalculatedAt = TimePtr(nullMS(calc))
	a.CreatedAt, a.UpdatedAt = NewTime(fromMS(created)), NewTime(fromMS(a.updatedMS))
	return a, nil
}

// CreateAudience creates an audience in an app. Its count is zero and
// lastCalculatedAt null until RecountAudience runs.
func (db *DB) CreateAudience(ctx context.Context, appID int64, in AudienceInput) (*Audience, error) {
	def, err := in.validate(true)
	if err != nil {
		return nil, err
	}
	status := AudienceActive
	if in.Status != nil {
		status = *in.Status
	}
	desc := ""
	if in.Description != nil {
		desc = *in.Description
	}
	var id int64
	err = db.withTx(ctx, func(tx *Tx) error {
		newID, err := tx.insertID(`INSERT INTO audiences (app_id, name, description, status, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			appID, strings.TrimSpace(*in.Name), desc, status, string(def), ms(tx.now), ms(tx.now))
		if err != nil {
			return err
		}
		id = newID
		tx.changed = true
		// SQLite reuses the id of a deleted last row: drop anything a
		// reader cached for the deleted audience under that id.
		tx.after = append(tx.after, func() { db.audiences.forget(id) })
		name := strings.TrimSpace(*in.Name)
		return tx.audit(auditRecord{app: appID, action: "audience.created", objType: ObjectAudience, objID: id, objName: name,
			after: audienceFields{name, desc, status, def}})
	})
	if err != nil {
		return nil, err
	}
	return db.FindAudienceByID(ctx, appID, id)
}

// audienceFields are what the audit log compares of an audience: not its
// count, which the scheduler keeps.
type audienceFields struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Status      string          `json:"status"`
	Definition  json.RawMessage `json:"definition"`
}

// FindAudienceByID returns an audience of the app; one of another app is
// reported missing.
func (db *DB) FindAudienceByID(ctx context.Context, appID, id int64) (*Audience, error) {
	a, err := scanAudience(db.read.QueryRowContext(ctx, `SELECT `+audienceColumns+` FROM audiences WHERE id = ? AND app_id = ?`, id, appID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("audience")
	}
	return a, err
}

// FindAudiences lists an app's audiences, newest first; an empty status
// lists both active and archived ones.
func (db *DB) FindAudiences(ctx context.Context, appID int64, status string, o ListOptions) ([]*Audience, Pagination, error) {
	where, args := `app_id = ?`, []any{appID}
	if status != "" {
		where += ` AND status = ?`
		args = append(args, status)
	}
	return findPage(ctx, db, "audiences", audienceColumns, where, args, o, scanAudience)
}

// UpdateAudience applies a partial update. active and archived may follow
// each other freely. The count is left as it was: the caller recounts.
func (db *DB) UpdateAudience(ctx context.Context, appID, id int64, in AudienceInput) (*Audience, error) {
	def, err := in.validate(false)
	if err != nil {
		return nil, err
	}
	err = db.withTx(ctx, func(tx *Tx) error {
		cur, err := scanAudience(tx.queryRow(`SELECT `+audienceColumns+` FROM audiences WHERE id = ? AND app_id = ?`, id, appID))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("audience")
		} else if err != nil {
			return err
		}
		name, desc, status := cur.Name, cur.Description, cur.Status
		if in.Name != nil {
			name = strings.TrimSpace(*in.Name)
		}
		if in.Description != nil {
			desc = *in.Description
		}
		if in.Status != nil {
			status = *in.Status
		}
		if def == nil {
			def = cur.Definition
		}
		// updated_at strictly increases, even for two updates within one
		// millisecond, because it is what tells the compiled-definition
		// cache and a running count that the definition changed.
		if _, err := tx.exec(`UPDATE audiences SET name = ?, description = ?, status = ?, definition = ?, updated_at = `+tx.db.eng.greatest()+`(?, updated_at + 1) WHERE id = ?`,
			name, desc, status, string(def), ms(tx.now), id); err != nil {
			return err
		}
		tx.changed = true
		before, after := audienceFields{cur.Name, cur.Description, cur.Status, cur.Definition}, audienceFields{name, desc, status, def}
		action := "audience.updated"
		if before.Status != after.Status && before.Name == after.Name && before.Description == after.Description && bytes.Equal(before.Definition, after.Definition) {
			action = "audience.status_changed"
		}
		return tx.audit(auditRecord{app: appID, action: action, objType: ObjectAudience, objID: id, objName: name, before: before, after: after})
	})
	if err != nil {
		return nil, err
	}
	return db.FindAudienceByID(ctx, appID, id)
}

// DeleteAudience deletes an audience unless a draft, active or paused
// campaign targets it. Completed and archived campaigns that targeted it
// keep their results and lose the reference (audienceId becomes null).
func (db *DB) DeleteAudience(ctx context.Context, appID, id int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		cur, err := scanAudience(tx.queryRow(`SELECT `+audienceColumns+` FROM audiences WHERE id = ? AND app_id = ?`, id, appID))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("audience")
		} else if err != nil {
			return err
		}
		rows, err := tx.query(`SELECT id FROM campaigns WHERE audience_id = ? AND status IN ('draft','active','paused') ORDER BY id`, id)
		if err != nil {
			return err
		}
		var used []int64
		for rows.Next() {
			var cid int64
			if err := rows.Scan(&cid); err != nil {
				rows.Close()
				return err
			}
			used = append(used, cid)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(used) > 0 {
			return &Error{Code: EINVALID, Message: "audience is used by a draft, active or paused campaign",
				Details: map[string]any{"campaignIds": used}}
		}
		if _, err := tx.exec(`UPDATE campaigns SET audience_id = NULL WHERE audience_id = ?`, id); err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM audiences WHERE id = ?`, id); err != nil {
			return err
		}
		tx.changed = true
		db := tx.db
		tx.after = append(tx.after, func() { db.audiences.forget(id) })
		return tx.audit(auditRecord{app: appID, action: "audience.deleted", objType: ObjectAudience, objID: id, objName: cur.Name,
			before: audienceFields{cur.Name, cur.Description, cur.Status, cur.Definition}})
	})
}

// UserInAudience reports whether a user belongs to an audience now, for the
// check endpoint: an audience of another app is not found, an archived one
// is still evaluated, and an unknown user does not match.
func (db *DB) UserInAudience(ctx context.Context, appID, audienceID int64, userID string) (bool, error) {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	if err := fe.Err(); err != nil {
		return false, err
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	q := db.readTx(ctx, tx)
	r, err := db.loadAudienceUser(q, appID, audienceID, userID)
	if err != nil {
		return false, err
	}
	if !r.found {
		return false, notFound("audience")
	}
	return matchUser(q, nil, r, appID, userID, db.Now().UTC())
}

// FindAudienceMembers returns one page of the users an audience matches
// now, in user id order. It evaluates every user of the app, which the
// total needs anyway.
func (db *DB) FindAudienceMembers(ctx context.Context, appID, id int64, o ListOptions) ([]AudienceMember, Pagination, error) {
	a, err := db.FindAudienceByID(ctx, appID, id)
	if err != nil {
		return nil, Pagination{}, err
	}
	c, err := db.compileAudience(a.ID, a.updatedMS, a.Definition)
	if err != nil {
		return nil, Pagination{}, err
	}
	list := []AudienceMember{}
	from, total := o.offset(), 0
	err = db.scanAudienceUsers(ctx, appID, []*compiledAudience{c}, db.Now().UTC(), func(userID string, match []bool) {
		if !match[0] {
			return
		}
		if total >= from && len(list) < o.Limit {
			list = append(list, AudienceMember{UserID: userID})
		}
		total++
	})
	if err != nil {
		return nil, Pagination{}, err
	}
	return list, newPagination(o, total), nil
}

// RecountAudience counts the known users an audience matches now and
// stores the count. It reads without holding the writer and then writes in
// a short transaction; a count made from a definition that an update
// replaced meanwhile is dropped, since that update recounts.
func (db *DB) RecountAudience(ctx context.Context, appID, id int64) (*Audience, error) {
	a, err := db.FindAudienceByID(ctx, appID, id)
	if err != nil {
		return nil, err
	}
	job := &recountJob{id: a.ID, updatedMS: a.updatedMS}
	if job.c, err = db.compileAudience(a.ID, a.updatedMS, a.Definition); err != nil {
		return nil, err
	}
	if err := db.recountApp(ctx, appID, []*recountJob{job}); err != nil {
		return nil, err
	}
	return db.FindAudienceByID(ctx, appID, id)
}

// RecountAudiences recounts every active audience of every app, reading
// each app's users once for all its audiences. An app whose count fails
// does not stop the others; the errors are returned together.
func (db *DB) RecountAudiences(ctx context.Context) error {
	rows, err := db.read.QueryContext(ctx, `SELECT id, app_id, definition, updated_at FROM audiences WHERE status = 'active' ORDER BY app_id, id`)
	if err != nil {
		return err
	}
	byApp := map[int64][]*recountJob{}
	var apps []int64
	var errs []error
	for rows.Next() {
		var id, app, updated int64
		var raw []byte
		if err := rows.Scan(&id, &app, &raw, &updated); err != nil {
			rows.Close()
			return err
		}
		c, err := db.compileAudience(id, updated, raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if byApp[app] == nil {
			apps = append(apps, app)
		}
		byApp[app] = append(byApp[app], &recountJob{id: id, updatedMS: updated, c: c})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, app := range apps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := db.recountApp(ctx, app, byApp[app]); err != nil {
			errs = append(errs, fmt.Errorf("recount audiences of app %d: %w", app, err))
		}
	}
	return errors.Join(errs...)
}
