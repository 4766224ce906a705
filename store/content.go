package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Content statuses.
const (
	ContentDraft     = "draft"
	ContentPublished = "published"
	ContentArchived  = "archived"
)

// Limits on content, so one request cannot make a block unbounded.
const (
	MaxItems      = 100
	MaxFormFields = 50
)

// ContentView is a content block: a list of typed items an app renders.
type ContentView struct {
	ID          int64           `json:"id"`
	AppID       int64           `json:"appId"`
	Name        string          `json:"name"`
	Status      string          `json:"status"`
	Items       json.RawMessage `json:"items"`
	PublishedAt *Time           `json:"publishedAt"`
	CreatedAt   Time            `json:"createdAt"`
	UpdatedAt   Time            `json:"updatedAt"`
}

// ContentInput is a create or a partial update; nil fields are left alone.
type ContentInput struct {
	Name   *string         `json:"name"`
	Status *string         `json:"status"`
	Items  json.RawMessage `json:"items"`
}

// FormField is one input of a form item.
type FormField struct {
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Label     string   `json:"label,omitempty"`
	Required  bool     `json:"required,omitempty"`
	Options   []string `json:"options,omitempty"`
	MinLength *int     `json:"minLength,omitempty"`
	MaxLength *int     `json:"maxLength,omitempty"`
	Pattern   string   `json:"pattern,omitempty"`
}

// item is the union of every item type's fields, for validation.
type item struct {
	Type           *string         `json:"type"`
	Content        json.RawMessage `json:"content"`
	Styles         json.RawMessage `json:"styles"`
	URL            json.RawMessage `json:"url"`
	Alt            json.RawMessage `json:"alt"`
	Label          json.RawMessage `json:"label"`
	Fields         json.RawMessage `json:"fields"`
	SubmitLabel    json.RawMessage `json:"submitLabel"`
	SuccessMessage json.RawMessage `json:"successMessage"`
}

var fieldTypes = map[string]bool{"text": true, "email": true, "number": true, "textarea": true, "checkbox": true, "select": true}

func validStatus(s string) bool {
	return s == ContentDraft || s == ContentPublished || s == ContentArchived
}

func isNull(r json.RawMessage) bool { return len(r) == 0 || string(r) == "null" }

// checkString records an error unless r is absent (when optional) or a string.
func checkString(fe FieldErrors, path string, r json.RawMessage, required bool) string {
	if isNull(r) {
		if required {
			fe.Add(path, "is required")
		}
		return ""
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		fe.Add(path, "must be a string")
	}
	return s
}

// validateItems checks a JSON array of content items and returns it compacted.
func validateItems(raw json.RawMessage, fe FieldErrors) json.RawMessage {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		fe.Add("items", "must be an array")
		return nil
	}
	if len(items) > MaxItems {
		fe.Add("items", fmt.Sprintf("must have at most %d items", MaxItems))
		return nil
	}
	for i, r := range items {
		p := fmt.Sprintf("items[%d]", i)
		var it item
		if err := json.Unmarshal(r, &it); err != nil || r[0] != '{' {
			fe.Add(p, "must be an object")
			continue
		}
		if it.Type == nil {
			fe.Add(p+".type", "is required")
			continue
		}
		// A number beyond float64 (1e999) is valid JSON but would make the
		// stored block unreadable to most clients.
		if !numbersInRange(r) {
			fe.Add(p, msgNumberRange)
			continue
		}
		if !isNull(it.Styles) {
			checkStyles(it.Styles, p+".styles", fe)
		}
		switch *it.Type {
		case "text", "heading":
			checkString(fe, p+".content", it.Content, true)
		case "image":
			if u := checkString(fe, p+".url", it.URL, true); u != "" && !validURL(u) {
				fe.Add(p+".url", "must be an http(s) URL or a path")
			}
			checkString(fe, p+".alt", it.Alt, false)
		case "button":
			checkString(fe, p+".label", it.Label, true)
			if u := checkString(fe, p+".url", it.URL, false); u != "" && !validURL(u) {
				fe.Add(p+".url", "must be an http(s) URL or a path")
			}
		case "form":
			validateFormFields(it.Fields, p+".fields", fe)
			checkString(fe, p+".submitLabel", it.SubmitLabel, false)
			checkString(fe, p+".successMessage", it.SuccessMessage, false)
		default:
			fe.Add(p+".type", "must be one of text, heading, image, button, form")
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		fe.Add("items", "must be an array")
		return nil
	}
	return buf.Bytes()
}

// checkStyles checks the style properties whose type the spec fixes: a
// numeric fontSize and a colour string. Other properties pass through.
func checkStyles(raw json.RawMessage, p string, fe FieldErrors) {
	var st struct {
		FontSize json.RawMessage `json:"fontSize"`
		Color    json.RawMessage `json:"color"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &st) != nil {
		fe.Add(p, "must be an object")
		return
	}
	if !isNull(st.FontSize) {
		var n float64
		if st.FontSize[0] == '"' || json.Unmarshal(st.FontSize, &n) != nil {
			fe.Add(p+".fontSize", "must be a number")
		}
	}
	checkString(fe, p+".color", st.Color, false)
}

func validURL(u string) bool {
	return strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "/")
}

func validateFormFields(raw json.RawMessage, p string, fe FieldErrors) {
	var fields []json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || len(fields) == 0 {
		fe.Add(p, "must be a non-empty array")
		return
	}
	if len(fields) > MaxFormFields {
		fe.Add(p, fmt.Sprintf("must have at most %d fields", MaxFormFields))
		return
	}
	seen := map[string]bool{}
	for i, r := range fields {
		fp := fmt.Sprintf("%s[%d]", p, i)
		var f FormField
		if err := json.Unmarshal(r, &f); err != nil {
			fe.Add(fp, "must be an object with name, type, label, required, options, minLength, maxLength, pattern")
			continue
		}
		if f.Name == "" {
			fe.Add(fp+".name", "is required")
		} else if seen[f.Name] {
			fe.Add(fp+".name", "must be unique within the form")
		}
		seen[f.Name] = true
		if !fieldTypes[f.Type] {
			fe.Add(fp+".type", "must be one of text, email, number, textarea, checkbox, select")
		}
		if f.Type == "select" && len(f.Options) == 0 {
			fe.Add(fp+".options", "is required for a select field")
		}
		if f.MinLength != nil && *f.MinLength < 0 {
			fe.Add(fp+".minLength", "must be at least 0")
		}
		if f.MaxLength != nil && (*f.MaxLength < 0 || (f.MinLength != nil && *f.MaxLength < *f.MinLength)) {
			fe.Add(fp+".maxLength", "must be at least minLength and 0")
		}
		if f.Pattern != "" {
			if _, err := regexp.Compile(f.Pattern); err != nil {
				fe.Add(fp+".pattern", "must be a valid regular expression")
			}
		}
	}
}

// FormFields returns the fields of the first form item of a block, or nil
// when it has none.
func (c *ContentView) FormFields() []FormField {
	var items []struct {
		Type   string      `json:"type"`
		Fields []FormField `json:"fields"`
	}
	_ = json.Unmarshal(c.Items, &items)
	for _, it := range items {
		if it.Type == "form" {
			return it.Fields
		}
	}
	return nil
}

func (in *ContentInput) validate(create bool) (json.RawMessage, error) {
	fe := FieldErrors{}
	if in.Name != nil || create {
		if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
			fe.Add("name", "is required")
		} else if tooLong(*in.Name, MaxNameLen) {
			fe.Add("name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
		}
	}
	if in.Status != nil && !validStatus(*in.Status) {
		fe.Add("status", "must be one of draft, published, archived")
	}
	var items json.RawMessage
	if !isNull(in.Items) {
		items = validateItems(in.Items, fe)
	} else if in.Items != nil && !create {
		fe.Add("items", "must be an array")
	}
	return items, fe.Err()
}

// contentFields are what the audit log compares of a content block; large
// items are logged as a digest.
type contentFields struct {
	Name   string          `json:"name"`
	Status string          `json:"status"`
	Items  json.RawMessage `json:"items"`
}

type contentPublished struct {
	ContentViewID   int64  `json:"contentViewId"`
	ContentViewName string `json:"contentViewName"`
	PublishedAt     Time   `json:"publishedAt"`
	HasItems        bool   `json:"hasItems"`
}

type contentUnpublished struct {
	ContentViewID   int64  `json:"contentViewId"`
	ContentViewName string `json:"contentViewName"`
	UnpublishedAt   Time   `json:"unpublishedAt"`
	PreviousStatus  string `json:"previousStatus"`
}

// CreateContent creates a content block in an app.
func (db *DB) CreateContent(ctx context.Context, appID int64, in ContentInput) (*ContentView, error) {
	items, err := in.validate(true)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = json.RawMessage("[]")
	}
	status := ContentDraft
	if in.Status != nil {
		status = *in.Status
	}
	name := strings.TrimSpace(*in.Name)
	var id int64
	err = db.withTx(ctx, func(tx *Tx) error {
		var pub any
		if status == ContentPublished {
			pub = ms(tx.now)
		}
		newID, err := tx.insertID(`INSERT INTO content_views (app_id, name, status, items, published_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			appID, name, status, string(items), pub, ms(tx.now), ms(tx.now))
		if err != nil {
			return err
		}
		id = newID
		tx.changed = true
		if status == ContentPublished {
			if err := tx.emit(appID, EventContentPublished, contentPublished{id, name, NewTime(tx.now), string(items) != "[]"}); err != nil {
				return err
			}
		}
		return tx.audit(auditRecord{app: appID, action: "content.created", objType: ObjectContent, objID: id, objName: name,
			after: contentFields{name, status, items}})
	})
	if err != nil {
		return nil, err
	}
	return db.FindContentByID(ctx, appID, id)
}

const contentColumns = `id, app_id, name, status, items, published_at, created_at, updated_at`

type scanner interface{ Scan(...any) error }

// scanIDs reads the single id column of rows (or returns err).
func scanIDs(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		list = append(list, id)
	}
	return list, rows.Err()
}

func scanContent(row scanner) (*ContentView, error) {
	c := &ContentView{}
	var items string
	var pub sql.NullInt64
	var created, updated int64
	if err := row.Scan(&c.ID, &c.AppID, &c.Name, &c.Status, &items, &pub, &created, &updated); err != nil {
		return nil, err
	}
	c.Items = json.RawMessage(items)
	c.PublishedAt = TimePtr(nullMS(pub))
	c.CreatedAt, c.UpdatedAt = NewTime(fromMS(created)), NewTime(fromMS(updated))
	return c, nil
}

// FindContentByID returns a block of the app; a block of another app is
// reported missing.
func (db *DB) FindContentByID(ctx context.Context, appID, id int64) (*ContentView, error) {
	c, err := scanContent(db.read.QueryRowContext(ctx, `SELECT `+contentColumns+` FROM content_views WHERE id = ? AND app_id = ?`, id, appID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("content view")
	}
	return c, err
}

// FindContents lists an app's blocks, newest first.
func (db *DB) FindContents(ctx context.Context, appID int64, status string, o ListOptions) ([]*ContentView, Pagination, error) {
	where, args := `app_id = ?`, []any{appID}
	if status != "" {
		where += ` AND status = ?`
		args = append(args, status)
	}
	return findPage(ctx, db, "content_views", contentColumns, where, args, o, scanContent)
}

// usedByLiveCampaign reports whether a draft, active or paused campaign
// shows the block: such a block cannot be archived or deleted.
func (tx *Tx) usedByLiveCampaign(contentID int64) (bool, error) {
	var n int
	err := tx.queryRow(`SELECT COUNT(*) FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE v.content_view_id = ? AND c.status IN ('draft','active','paused')`, contentID).Scan(&n)
	return n > 0, err
}

// runningCampaignsShowing returns the ids of the active and paused
// campaigns with a variant showing the block, in ascending order.
func (tx *Tx) runningCampaignsShowing(contentID int64) ([]int64, error) {
	return scanIDs(tx.query(`SELECT DISTINCT c.id FROM campaign_variants v JOIN campaigns c ON c.id = v.campaign_id
		WHERE v.content_view_id = ? AND c.status IN ('active','paused') ORDER BY c.id`, contentID))
}

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}

// UpdateContent applies a partial update. Any status may follow any other;
// entering published stamps publishedAt and emits content.published, leaving
// it emits content.unpublished.
func (db *DB) UpdateContent(ctx context.Context, appID, id int64, in ContentInput) (*ContentView, error) {
	items, err := in.validate(false)
	if err != nil {
		return nil, err
	}
	err = db.withTx(ctx, func(tx *Tx) error {
		cur, err := scanContent(tx.queryRow(`SELECT `+contentColumns+` FROM content_views WHERE id = ? AND app_id = ?`, id, appID))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("content view")
		} else if err != nil {
			return err
		}
		name, status := cur.Name, cur.Status
		if in.Name != nil {
			name = strings.TrimSpace(*in.Name)
		}
		if in.Status != nil {
			status = *in.Status
		}
		if items == nil {
			items = cur.Items
		}
		if cur.Status == ContentPublished && status != ContentPublished {
			// End users see only published blocks: one that a running
			// campaign serves stays published until the campaign ends.
			ids, err := tx.runningCampaignsShowing(id)
			if err != nil {
				return err
			}
			if len(ids) > 0 {
				return &Error{Code: EINVALID,
					Message: fmt.Sprintf("content view is used by an active or paused campaign (%s) and must stay published", joinIDs(ids)),
					Details: map[string]any{"from": cur.Status, "to": status, "campaigns": ids}}
			}
		}
		if status == ContentArchived && cur.Status != ContentArchived {
			if used, err := tx.usedByLiveCampaign(id); err != nil {
				return err
			} else if used {
				return &Error{Code: EINVALID, Message: "content view is used by a draft, active or paused campaign",
					Details: map[string]any{"from": cur.Status, "to": status}}
			}
		}
		pub := sql.NullInt64{}
		if cur.PublishedAt != nil {
			pub = sql.NullInt64{Int64: ms(cur.PublishedAt.Time), Valid: true}
		}
		if status == ContentPublished && cur.Status != ContentPublished {
			pub = sql.NullInt64{Int64: ms(tx.now), Valid: true}
		}
		if _, err := tx.exec(`UPDATE content_views SET name = ?, status = ?, items = ?, published_at = ?, updated_at = ? WHERE id = ?`,
			name, status, string(items), pub, ms(tx.now), id); err != nil {
			return err
		}
		tx.changed = true
		switch {
		case status == ContentPublished && cur.Status != ContentPublished:
			err = tx.emit(appID, EventContentPublished, contentPublished{id, name, NewTime(tx.now), string(items) != "[]"})
		case cur.Status == ContentPublished && status != ContentPublished:
			err = tx.emit(appID, EventContentUnpublish, contentUnpublished{id, name, NewTime(tx.now), ContentPublished})
		}
		if err != nil {
			return err
		}
		before, after := contentFields{cur.Name, cur.Status, cur.Items}, contentFields{name, status, items}
		action := "content.updated"
		if before.Name == after.Name && bytes.Equal(before.Items, after.Items) && before.Status != after.Status {
			action = "content.status_changed"
		}
		return tx.audit(auditRecord{app: appID, action: action, objType: ObjectContent, objID: id, objName: name, before: before, after: after})
	})
	if err != nil {
		return nil, err
	}
	return db.FindContentByID(ctx, appID, id)
}

// DeleteContent deletes a block unless a live campaign uses it.
func (db *DB) DeleteContent(ctx context.Context, appID, id int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		cur, err := scanContent(tx.queryRow(`SELECT `+contentColumns+` FROM content_views WHERE id = ? AND app_id = ?`, id, appID))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("content view")
		} else if err != nil {
			return err
		}
		if used, err := tx.usedByLiveCampaign(id); err != nil {
			return err
		} else if used {
			return Errorf(EINVALID, "content view is used by a draft, active or paused campaign")
		}
		if _, err := tx.exec(`DELETE FROM content_views WHERE id = ?`, id); err != nil {
			return err
		}
		tx.changed = true
		return tx.audit(auditRecord{app: appID, action: "content.deleted", objType: ObjectContent, objID: id, objName: cur.Name,
			before: contentFields{cur.Name, cur.Status, cur.Items}})
	})
}
