package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"service/jsonjs"
)

// FormSubmission is one stored submission of a content block's form. Data
// is the submitted object exactly as the form.submitted webhook carried it.
type FormSubmission struct {
	ID            int64           `json:"id"`
	ContentViewID int64           `json:"contentViewId"`
	Data          json.RawMessage `json:"data"`
	UserID        *string         `json:"userId"`
	SessionID     *string         `json:"sessionId"`
	Environment   *string         `json:"environment"`
	SubmittedAt   Time            `json:"submittedAt"`
}

// FormSubmissionInput is the body of a submission.
type FormSubmissionInput struct {
	ContentViewID *int64          `json:"contentViewId"`
	Data          json.RawMessage `json:"data"`
	UserID        *string         `json:"userId"`
	SessionID     *string         `json:"sessionId"`
	Environment   *string         `json:"environment"`
}

// validate checks the body itself; the data is checked against the form
// once the block is known. It returns the parsed data object.
func (in *FormSubmissionInput) validate() (*jsonjs.Object, FieldErrors) {
	fe := FieldErrors{}
	if in.ContentViewID == nil {
		fe.Add("contentViewId", "is required")
	} else if *in.ContentViewID < 1 {
		fe.Add("contentViewId", "must be a positive integer")
	}
	var data *jsonjs.Object
	if isNull(in.Data) {
		fe.Add("data", "is required")
	} else if v, err := jsonjs.Parse(in.Data); err != nil {
		fe.Add("data", "must be an object")
	} else if data, _ = v.(*jsonjs.Object); data == nil {
		fe.Add("data", "must be an object")
	}
	checkVisitor(fe, deref(in.UserID), deref(in.SessionID))
	checkLen(fe, "environment", deref(in.Environment), MaxFormEnvironmentLen)
	return data, fe
}

// emailPattern is deliberately loose: one @, no spaces, a dot in the
// domain. Stricter checks reject real addresses; delivery proves the rest.
var emailPattern = regexp.MustCompile(`^[^\s@]+@[^\s@]+\.[^\s@]+$`)

// formPatterns caches compiled field patterns: a block's form is validated
// on every submission, and its patterns rarely change. The cap bounds the
// memory that a stream of edited patterns could take.
var (
	formPatterns     sync.Map // string -> *regexp.Regexp
	formPatternCount atomic.Int64
)

const maxFormPatterns = 4096

func formPattern(p string) (*regexp.Regexp, error) {
	if re, ok := formPatterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	// Anchored, so the pattern must match the whole value, as the HTML
	// pattern attribute does.
	re, err := regexp.Compile(`^(?:` + p + `)$`)
	if err != nil {
		return nil, err
	}
	if formPatternCount.Add(1) <= maxFormPatterns {
		formPatterns.Store(p, re)
	}
	return re, nil
}

// validateFormData checks submitted values against a form's fields. Every
// problem is reported as data.<field name>; keys that name no field are
// refused too, so a form cannot be used to store arbitrary data.
func validateFormData(fields []FormField, data *jsonjs.Object, fe FieldErrors) {
	for _, k := range data.Keys() {
		if !slices.ContainsFunc(fields, func(f FormField) bool { return f.Name == k }) {
			fe.Add("data."+k, "is not a field of this form")
		}
	}
	for _, f := range fields {
		p := "data." + f.Name
		v, present := data.Get(f.Name)
		if s, isString := v.(string); !present || v == nil || (isString && s == "" && f.Type != "checkbox") {
			// An empty input submits "", which means no value.
			if f.Required {
				fe.Add(p, "is required")
			}
			continue
		}
		switch f.Type {
		case "checkbox":
			b, ok := v.(bool)
			if !ok {
				fe.Add(p, "must be a boolean")
			} else if f.Required && !b {
				fe.Add(p, "must be checked")
			}
			continue
		case "number":
			if !formNumber(v) {
				fe.Add(p, "must be a number")
			}
			continue
		case "select":
			s, ok := v.(string)
			if !ok || !slices.Contains(f.Options, s) {
				fe.Add(p, "must be one of "+strings.Join(f.Options, ", "))
			}
			continue
		}
		// text, textarea, email
		s, ok := v.(string)
		if !ok {
			fe.Add(p, "must be a string")
			continue
		}
		n := utf8.RuneCountInString(s)
		switch {
		case f.MinLength != nil && n < *f.MinLength:
			fe.Add(p, fmt.Sprintf("must be at least %d characters", *f.MinLength))
		case f.MaxLength != nil && n > *f.MaxLength:
			fe.Add(p, fmt.Sprintf("must be at most %d characters", *f.MaxLength))
		case f.Type == "email" && !emailPattern.MatchString(s):
			fe.Add(p, "must be an email address")
		case f.Pattern != "":
			re, err := formPattern(f.Pattern)
			if err != nil || !re.MatchString(s) {
				fe.Add(p, "must match the pattern "+f.Pattern)
			}
		}
	}
}

// numericString is a decimal number as an HTML number input submits it.
var numericString = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// formNumber accepts a JSON number or a string holding a finite decimal
// number.
func formNumber(v jsonjs.Value) bool {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case string:
		s = x
	default:
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0) && numericString.MatchString(s)
}

type formSubmitted struct {
	FormSubmissionID int64        `json:"formSubmissionId"`
	ContentViewID    int64        `json:"contentViewId"`
	ContentViewName  string       `json:"contentViewName"`
	SubmittedAt      Time         `json:"submittedAt"`
	Data             jsonjs.Value `json:"data"`
	UserID           *string      `json:"userId"`
	SessionID        *string      `json:"sessionId"`
	Environment      *string      `json:"environment"`
}

// SubmitForm validates and stores a submission of a block's form and emits
// form.submitted in the same transaction. The block must belong to the app
// (else ENOTFOUND), be published and contain a form (else EINVALID on
// contentViewId), and data must fit the form's fields.
func (db *DB) SubmitForm(ctx context.Context, appID int64, in FormSubmissionInput) (*FormSubmission, error) {
	data, fe := in.validate()
	if err := fe.Err(); err != nil {
		return nil, err
	}
	// Stored exactly as JSON.stringify(JSON.parse(data)) would write it:
	// key order kept, so the webhook payload and the list agree byte for byte.
	canonical, err := jsonjs.Stringify(data)
	if err != nil {
		return nil, Errorf(EINVALID, "data cannot be represented as JSON")
	}
	sub := &FormSubmission{ContentViewID: *in.ContentViewID, Data: canonical,
		UserID: in.UserID, SessionID: in.SessionID, Environment: in.Environment}
	err = db.withTx(ctx, func(tx *Tx) error {
		c, err := scanContent(tx.queryRow(`SELECT `+contentColumns+` FROM content_views WHERE id = ? AND app_id = ?`, *in.ContentViewID, appID))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("content view")
		} else if err != nil {
			return err
		}
		fields := c.FormFields()
		switch {
		case c.Status != ContentPublished:
			fe.Add("contentViewId", "content view is not published")
		case fields == nil:
			fe.Add("contentViewId", "content view has no form")
		default:
			validateFormData(fields, data, fe)
		}
		if err := fe.Err(); err != nil {
			return err
		}
		newID, err := tx.insertID(`INSERT INTO form_submissions (app_id, content_view_id, data, user_id, session_id, environment, submitted_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, appID, c.ID, string(canonical), in.UserID, in.SessionID, in.Environment, ms(tx.now))
		if err != nil {
			return err
		}
		sub.ID = newID
		sub.SubmittedAt = NewTime(tx.now)
		return tx.emit(appID, EventFormSubmitted, formSubmitted{sub.ID, c.ID, c.Name, sub.SubmittedAt, data,
			in.UserID, in.SessionID, in.Environment})
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// FindFormSubmissions lists an app's submissions, newest first; a non-zero
// contentViewID keeps those of one block.
func (db *DB) FindFormSubmissions(ctx context.Context, appID, contentViewID int64, o ListOptions) ([]*FormSubmission, Pagination, error) {
	where, args := `app_id = ?`, []any{appID}
	if contentViewID != 0 {
		where += ` AND content_view_id = ?`
		args = append(args, contentViewID)
	}
	return findPage(ctx, db, "form_submissions", `id, content_view_id, data, user_id, session_id, environment, submitted_at`, where, args, o, scanFormSubmission)
}

func scanFormSubmission(row scanner) (*FormSubmission, error) {
	s := &FormSubmission{}
	var data string
	var user, session, env sql.NullString
	var at int64
	if err := row.Scan(&s.ID, &s.ContentViewID, &data, &user, &session, &env, &at); err != nil {
		return nil, err
	}
	s.Data = json.RawMessage(data)
	s.UserID, s.SessionID, s.Environment = formNullString(user), formNullString(session), formNullString(env)
	s.SubmittedAt = NewTime(fromMS(at))
	return s, nil
}

// FindContentSubmissions lists the submissions of one block of the app,
// newest first; a block of another app is reported missing.
func (db *DB) FindContentSubmissions(ctx context.Context, appID, contentViewID int64, o ListOptions) ([]*FormSubmission, Pagination, error) {
	if _, err := db.FindContentByID(ctx, appID, contentViewID); err != nil {
		return nil, Pagination{}, err
	}
	return db.FindFormSubmissions(ctx, appID, contentViewID, o)
}

func formNullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}
