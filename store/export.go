package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
)

// ExportedAssignment is one of a user's assignments, as an export lists it.
type ExportedAssignment struct {
	CampaignID   int64  `json:"campaignId"`
	CampaignName string `json:"campaignName"`
	CampaignKey  string `json:"campaignKey,omitempty"`
	VariantID    int64  `json:"variantId"`
	VariantName  string `json:"variantName"`
	// SessionID names the linked session the assignment was made to;
	// empty for the user's own.
	SessionID   string `json:"sessionId,omitempty"`
	AssignedAt  Time   `json:"assignedAt"`
	ConvertedAt *Time  `json:"convertedAt"`
	// Covariate is CUPED's count of the campaign's goal events before the
	// assignment.
	Covariate int64 `json:"covariate"`
}

// ExportedMetricValue is a user's value of one metric in one campaign.
type ExportedMetricValue struct {
	CampaignID int64   `json:"campaignId"`
	MetricID   int64   `json:"metricId"`
	MetricKey  string  `json:"metricKey"`
	SessionID  string  `json:"sessionId,omitempty"`
	Value      float64 `json:"value"`
}

// ExportStarted is returned (wrapped) by ExportUser for a failure after
// it began to write: the document is cut short, and the caller can only
// say so by ending the answer.
var ExportStarted = errors.New("export cut short")

// ExportUser writes, as one JSON document, everything stored about one
// user of the app: the profile (null when there is none), the linked
// sessions, the assignments with their campaigns' and variants' names,
// the metric values, the form submissions and the events, oldest first.
// It reads in one read-only transaction and writes rows as it reads them,
// so a user with any number of events costs a row's memory. A user the
// app does not know gets a document with nothing in it.
//
// Errors before anything was written (a bad id, an unknown app) are
// returned as they are; one after wraps ExportStarted.
func (db *DB) ExportUser(ctx context.Context, appID int64, userID string, out io.Writer) error {
	fe := FieldErrors{}
	checkUserID(fe, "userId", userID)
	if err := fe.Err(); err != nil {
		return err
	}
	// The user's metric values count every acknowledged event.
	if err := db.ApplyMetricMoves(ctx); err != nil {
		return err
	}
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	q := db.readTx(ctx, tx)
	var one int
	if err := q.queryRow(`SELECT 1 FROM apps WHERE id = ?`, appID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return notFound("app")
	} else if err != nil {
		return err
	}
	profile, err := scanUserProfile(q.queryRow(`SELECT user_id, attributes, first_seen, last_seen FROM users WHERE app_id = ? AND user_id = ?`, appID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		profile = nil
	} else if err != nil {
		return err
	}
	sessions, err := linkedSessions(q, appID, userID)
	if err != nil {
		return err
	}
	x := &exporter{w: bufio.NewWriterSize(out, 32<<10)}
	x.raw(`{"appId":`)
	x.value(appID)
	x.raw(`,"userId":`)
	x.value(userID)
	x.raw(`,"exportedAt":`)
	x.value(NewTime(db.Now()))
	x.raw(`,"profile":`)
	x.value(profile)
	x.raw(`,"sessions":`)
	x.value(sessions)
	if x.err != nil {
		return errors.Join(ExportStarted, x.err)
	}
	err = x.list("assignments", func(emit func(any) error) error {
		for _, k := range userKeys(userID, sessions) {
			rows, err := q.query(`SELECT c.id, c.name, c.key, v.id, v.name, a.assigned_at, a.converted_at, a.covariate
				FROM campaigns c JOIN assignments a ON a.campaign_id = c.id AND a.user_key = ?
				JOIN campaign_variants v ON v.id = a.variant_id
				WHERE c.app_id = ? ORDER BY c.id`, k.stored, appID)
			if err != nil {
				return err
			}
			err = eachRow(rows, func() error {
				a := ExportedAssignment{SessionID: k.session}
				var key sql.NullString
				var at int64
				var conv sql.NullInt64
				if err := rows.Scan(&a.CampaignID, &a.CampaignName, &key, &a.VariantID, &a.VariantName, &at, &conv, &a.Covariate); err != nil {
					return err
				}
				a.CampaignKey, a.AssignedAt, a.ConvertedAt = key.String, NewTime(fromMS(at)), TimePtr(nullMS(conv))
				return emit(a)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = x.list("metricValues", func(emit func(any) error) error {
			for _, k := range userKeys(userID, sessions) {
				rows, err := q.query(`SELECT mv.campaign_id, m.id, m.key, mv.value FROM metric_values mv JOIN metrics m ON m.id = mv.metric_id
					WHERE mv.campaign_id IN (SELECT id FROM campaigns WHERE app_id = ?)
						AND mv.metric_id IN (SELECT id FROM metrics WHERE app_id = ?) AND mv.user_key = ?
					ORDER BY mv.campaign_id, m.id`, appID, appID, k.stored)
				if err != nil {
					return err
				}
				err = eachRow(rows, func() error {
					v := ExportedMetricValue{SessionID: k.session}
					if err := rows.Scan(&v.CampaignID, &v.MetricID, &v.MetricKey, &v.Value); err != nil {
						return err
					}
					return emit(v)
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		err = x.list("formSubmissions", func(emit func(any) error) error {
			where, args := `user_id = ?`, []any{appID, userID}
			for _, s := range sessions {
				where += ` OR session_id = ?`
				args = append(args, s)
			}
			rows, err := q.query(`SELECT id, content_view_id, data, user_id, session_id, environment, submitted_at
				FROM form_submissions WHERE app_id = ? AND (`+where+`) ORDER BY id`, args...)
			if err != nil {
				return err
			}
			return eachRow(rows, func() error {
				s, err := scanFormSubmission(rows)
				if err != nil {
					return err
				}
				return emit(s)
			})
		})
	}
	if err == nil {
		err = x.list("events", func(emit func(any) error) error {
			for _, k := range eventOwners(appID, userID, sessions) {
				text, args := db.eraser.eventsOf(k)
				if err := exportEvents(q, emit, text, args...); err != nil {
					return err
				}
			}
			return nil
		})
	}
	x.raw("}\n")
	if err == nil {
		err = x.err
	}
	if err == nil {
		err = x.w.Flush()
	}
	if err != nil {
		return errors.Join(ExportStarted, err)
	}
	return nil
}

// exportEvents emits the events the query text selects.
func exportEvents(q conn, emit func(any) error, text string, args ...any) error {
	rows, err := q.query(text, args...)
	if err != nil {
		return err
	}
	return eachRow(rows, func() error {
		e, err := scanStoredEvent(rows)
		if err != nil {
			return err
		}
		return emit(e)
	})
}

// subjectKey is one of the keys a user's rows are stored under: the
// user's own, or a linked session's.
type subjectKey struct{ stored, session string }

func userKeys(userID string, sessions []string) []subjectKey {
	keys := []subjectKey{{stored: storedKey('u', userID)}}
	for _, s := range sessions {
		keys = append(keys, subjectKey{storedKey('s', s), s})
	}
	return keys
}

// eachRow calls fn for each row and closes rows.
func eachRow(rows *sql.Rows, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// exporter writes a JSON document a value at a time; the first write
// error sticks and stops the rest.
type exporter struct {
	w   *bufio.Writer
	err error
}

func (x *exporter) raw(s string) {
	if x.err == nil {
		_, x.err = x.w.WriteString(s)
	}
}

func (x *exporter) value(v any) {
	if x.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		x.err = err
		return
	}
	_, x.err = x.w.Write(b)
}

// list writes `,"name":[…]` with the values fill emits; emit returns
// the write error that ends the export.
func (x *exporter) list(name string, fill func(emit func(any) error) error) error {
	x.raw(`,"` + name + `":[`)
	first := true
	err := fill(func(v any) error {
		if !first {
			x.raw(",")
		}
		first = false
		x.value(v)
		return x.err
	})
	x.raw("]")
	if err != nil {
		return err
	}
	return x.err
}
