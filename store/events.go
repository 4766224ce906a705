package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"service/jsonjs"
)

// MaxEventsLimit is the largest page of events one listing returns.
const MaxEventsLimit = 1000

// EventInput is a logged event as the SDK or a server sends it.
type EventInput struct {
	EventID   string          `json:"eventId"`
	UserID    string          `json:"userId"`
	SessionID string          `json:"sessionId"`
	Metadata  json.RawMessage `json:"metadata"`
	LogID     string          `json:"logId"`
}

// Validate checks an event before it is queued for writing.
func (in *EventInput) Validate() error {
	fe := FieldErrors{}
	if strings.TrimSpace(in.EventID) == "" {
		fe.Add("eventId", "is required")
	} else {
		checkLen(fe, "eventId", in.EventID, MaxEventIDLen)
	}
	checkVisitor(fe, in.UserID, in.SessionID)
	checkLen(fe, "logId", in.LogID, MaxLogIDLen)
	if m := bytes.TrimSpace(in.Metadata); len(m) > 0 && string(m) != "null" {
		if m[0] != '{' {
			fe.Add("metadata", "must be an object")
		} else if len(m) > MaxMetadata {
			fe.Add("metadata", "must be at most 64 KiB")
		} else if !numbersInRange(m) {
			// Stored as sent and answered back in event lists, where
			// JavaScript would read 1e999 as Infinity.
			fe.Add("metadata", msgNumberRange)
		}
	}
	return fe.Err()
}

// EventResult is the answer to a logged event.
type EventResult struct {
	Success   bool   `json:"success"`
	ID        int64  `json:"id"`
	EventID   string `json:"eventId"`
	Timestamp Time   `json:"timestamp"`
	// Duplicate is true when the logId was seen before: nothing new was
	// stored and the first event is answered.
	Duplicate bool `json:"duplicate,omitempty"`
}

// AppendJSON appends the result as encoding/json writes it: the answer of
// the event route, which is a hot path.
func (r *EventResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"success":`...)
	b = strconv.AppendBool(b, r.Success)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `,"eventId":`...)
	b = appendJSONString(b, r.EventID)
	b = append(b, `,"timestamp":`...)
	b = jsonjs.AppendQuotedTime(b, r.Timestamp.Time)
	if r.Duplicate {
		b = append(b, `,"duplicate":true`...)
	}
	return append(b, '}')
}

// appendJSONString appends s quoted as encoding/json quotes it. Strings of
// printable ASCII without the characters it escapes are copied; anything
// else goes through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Event is a stored event.
type Event struct {
	ID        int64           `json:"id"`
	EventID   string          `json:"eventId"`
	UserID    *string         `json:"userId"`
	SessionID *string         `json:"sessionId"`
	Metadata  json.RawMessage `json:"metadata"`
	LogID     *string         `json:"logId,omitempty"`
	Timestamp Time            `json:"timestamp"`
}

// LogEvent stores an event and counts the conversions it makes, in the
// shared group commit: it returns once both are on disk.
func (db *DB) LogEvent(ctx context.Context, appID int64, in *EventInput) (*EventResult, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	// Goal lookups come from the in-memory active campaigns, not a query
	// per event.
	active, metrics, err := db.activeWithMetrics(ctx, appID)
	if err != nil {
		return nil, err
	}
	goals := goalsOf(active, in.EventID)
	// One map lookup, on a nil map for apps whose campaigns have no
	// metrics: all an event that moves no metric pays for them.
	targets := metrics[in.EventID]
	res := &EventResult{Success: true, EventID: in.EventID}
	err = db.batch.do(ctx, func(tx *Tx) error { return tx.logEvent(appID, in, goals, targets, res) })
	if err != nil {
		return nil, err
	}
	return res, nil
}

// goalsOf returns the active campaigns whose goal is eventID, sharing
// active's array while they are one (the common case on the event path):
// callers only read the list.
func goalsOf(active []*liveCampaign, eventID string) []*liveCampaign {
	var goals []*liveCampaign
	for i, lc := range active {
		if lc.goal == eventID {
			if goals == nil {
				goals = active[i : i+1 : i+1]
			} else {
				goals = append(goals, lc)
			}
		}
	}
	return goals
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (tx *Tx) logEvent(appID int64, in *EventInput, goals []*liveCampaign, metrics []metricTarget, res *EventResult) error {
	res.Duplicate = false
	if in.LogID != "" {
		if p := tx.pendingLog(appID, in.LogID); p != nil {
			res.EventID, res.Timestamp, res.Duplicate = p.res.EventID, p.res.Timestamp, true
			p.dups = append(p.dups, res)
			return nil
		}
		var ts int64
		err := tx.queryRow(`SELECT id, event_id, ts FROM events WHERE app_id = ? AND log_id = ?`, appID, in.LogID).Scan(&res.ID, &res.EventID, &ts)
		if err == nil {
			res.Timestamp, res.Duplicate = NewTime(fromMS(ts)), true
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	now := ms(tx.now)
	var meta any
	if m := bytes.TrimSpace(in.Metadata); len(m) > 0 && string(m) != "null" {
		c, err := compactJSON(m)
		if err != nil {
			return err
		}
		meta = c
	}
	// The row is written at commit with the batch's other events, which
	// sets res.ID (see rows.go).
	tx.insertEventLater(pendingEvent{appID: appID, eventID: in.EventID, user: nullable(in.UserID),
		session: nullable(in.SessionID), meta: meta, l: nullable(in.LogID), res: res})
	res.EventID, res.Timestamp = in.EventID, NewTime(fromMS(now))
	if in.UserID != "" {
		if err := tx.seeUser(appID, in.UserID, nil); err != nil {
			return err
		}
	}
	for _, lc := range goals {
		if err := tx.convert(lc, in, now); err != nil {
			return err
		}
	}
	for _, t := range metrics {
		if err := tx.countMetric(t, in, now); err != nil {
			return err
		}
	}
	return nil
}

// compactJSON returns the JSON document m without insignificant space. A
// valid document without any space byte is compact already, as SDKs send
// it: it is copied as it is, into the one allocation the row needs.
func compactJSON(m []byte) (string, error) {
	if bytes.IndexAny(m, " \t\r\n") < 0 && json.Valid(m) {
		return string(m), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, m); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// convert counts a conversion for the user's assigned variant when the
// spec's three rules hold: the goal event, an earlier impression, and the
// campaign's active period. A user converts at most once per campaign.
func (tx *Tx) convert(lc *liveCampaign, in *EventInput, now int64) error {
	// A user who already converted cannot convert again. Repeated goal
	// events are the common case, and the cache answers them before the
	// campaign's state is read (a query per commit) or the UPDATE is tried.
	keys := [2]userKey{{lc.id, 'u', in.UserID}, {lc.id, 's', in.SessionID}}
	var open [2]bool
	for i, k := range keys {
		if k.user != "" {
			_, done := tx.db.converted.get(k)
			open[i] = !done
		}
	}
	if !open[0] && !open[1] {
		return nil
	}
	if ok, err := tx.stillRunning(lc, now); err != nil || !ok {
		return err
	}
	// Written at the commit, after the assignments (see rows.go). An
	// impression queued earlier in this batch counts as earlier; one
	// queued later does not, as it would not have had the conversion been
	// written now.
	tx.convs = append(tx.convs, pendingConv{lc: lc, keys: keys, open: open, queued: tx.queued, now: now})
	return nil
}

// pendingConv is a conversion waiting for the commit: the campaign, the
// user's keys, which of them may still convert, and how many assignments
// the transaction had queued when it came (Tx.queued).
type pendingConv struct {
	lc        *liveCampaign
	keys      [2]userKey
	open      [2]bool
	queued    int
	now       int64
	converted bool
}

// sortConversions sorts the queued conversions by campaign and their i-th
// key, the order of their assignments' rows.
func (tx *Tx) sortConversions(i int) {
	slices.SortStableFunc(tx.convs, func(a, b pendingConv) int {
		return cmp.Or(cmp.Compare(a.lc.id, b.lc.id), strings.Compare(a.keys[i].user, b.keys[i].user))
	})
}

// flushConversions writes the queued conversions, after the assignments
// they may convert. Each tries its user's userId key, then its sessionId
// key: every userId attempt goes first, then the sessionId attempts of
// those that did not convert, each round sorted by (campaign, key) on
// PostgreSQL, so that the assignments' rows are locked in one order
// whatever the batch holds. A user converts once per campaign, whichever
// of two conversions in one batch comes first.
func (tx *Tx) flushConversions() error {
	if len(tx.convs) == 0 {
		return nil
	}
	for i := range 2 {
		tx.db.eng.orderConversions(tx, i)
		var err error
		if i == 0 {
			err = tx.db.eng.convertUsers(tx)
		} else {
			err = tx.convertEach(1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// convertible returns the key of the queued conversion's i-th attempt,
// and whether it is to be made: it is open, the conversion did not
// convert by its first key, and the assignment was not first written
// after the goal event in this batch.
func (tx *Tx) convertible(c *pendingConv, i int) (assignRef, bool) {
	if c.converted || !c.open[i] {
		return assignRef{}, false
	}
	k := c.keys[i]
	ref := assignRef{c.lc.id, storedKey(k.kind, k.user)}
	if seq, ok := tx.wrote[ref]; ok && seq >= c.queued {
		return ref, false // first assigned after the goal event, in this batch
	}
	return ref, true
}

// convertEach makes the queued conversions' i-th attempts, a statement
// each, in their order.
func (tx *Tx) convertEach(i int) error {
	for j := range tx.convs {
		c := &tx.convs[j]
		ref, ok := tx.convertible(c, i)
		if !ok {
			continue
		}
		var vid, x int64
		var err error
		if i == 0 {
			err = tx.queryRow(`UPDATE assignments SET converted_at = ? WHERE campaign_id = ? AND user_key = ? AND converted_at IS NULL AND assigned_at <= ? RETURNING variant_id, covariate`,
				c.now, ref.campaign, ref.key, c.now).Scan(&vid, &x)
		} else {
			err = tx.queryRow(sessionConvert[c.keys[0].user == ""],
				c.now, ref.campaign, ref.campaign, c.lc.appID, c.keys[i].user, ref.key, c.now).Scan(&vid, &x)
		}
		if errors.Is(err, sql.ErrNoRows) {
			continue
		} else if err != nil {
			return err
		}
		tx.converted(c, i, vid, x)
	}
	return nil
}

// converted records that the queued conversion c converted its i-th key's
// assignment to variant vid, whose user's covariate is x.
func (tx *Tx) converted(c *pendingConv, i int, vid, x int64) {
	c.converted = true
	tx.countConversion(vid)
	tx.countConvertedCovariate(vid, x)
	k := c.keys[i]
	tx.after = append(tx.after, func() { tx.db.converted.put(k, vid, tx.epoch) })
}

// linkedUserKey is the key of the user the session (the third parameter,
// of the app of the second) is linked to, when that user holds an
// assignment in the campaign of the first: the person whose assignment
// the session's events count on (see links.go). A session without a link
// costs one probe of session_links' primary key.
const linkedUserKey = `(SELECT 'u:' || l.user_id FROM session_links AS l JOIN assignments AS b ON b.campaign_id = ? AND b.user_key = 'u:' || l.user_id
	WHERE l.app_id = ? AND l.session_id = ?)`

// sessionConvert converts by an event's sessionId. With a userId beside
// it (false), that user had no assignment to convert, and the session's
// own converts unless the session belongs to a user assigned in the
// campaign; without one (true), the linked user's converts, else the
// session's own. Its parameters: the time, the campaign, then the
// campaign, app and session of linkedUserKey, the session's key and the
// time.
var sessionConvert = map[bool]string{
	false: `UPDATE assignments SET converted_at = ? WHERE campaign_id = ? AND NOT EXISTS ` + linkedUserKey + `
		AND user_key = ? AND converted_at IS NULL AND assigned_at <= ? RETURNING variant_id, covariate`,
	true: `UPDATE assignments SET converted_at = ? WHERE campaign_id = ? AND user_key = coalesce(` + linkedUserKey + `, ?)
		AND converted_at IS NULL AND assigned_at <= ? RETURNING variant_id, covariate`,
}

// EventFilter selects events of an app.
type EventFilter struct {
	EventID, UserID string
	Start, End      *time.Time
	Before          int64
	Limit           int
}

// FindEvents lists an app's events, newest first.
func (db *DB) FindEvents(ctx context.Context, appID int64, f EventFilter) ([]*Event, error) {
	where, args := []string{"app_id = ?"}, []any{appID}
	if f.EventID != "" {
		where, args = append(where, "event_id = ?"), append(args, f.EventID)
	}
	from := "events"
	if f.UserID != "" {
		from, where, args = db.eng.userEvents(where, args, appID, f.UserID, f.EventID)
	}
	if f.Start != nil {
		where, args = append(where, "ts >= ?"), append(args, ms(*f.Start))
	}
	if f.End != nil {
		where, args = append(where, "ts <= ?"), append(args, ms(*f.End))
	}
	if f.Before > 0 {
		where, args = append(where, "(ts, id) < (SELECT ts, id FROM events WHERE id = ?)"), append(args, f.Before)
	}
	// Ordering by (ts, id) rather than id lets SQLite walk an index backwards
	// and stop after one page; ORDER BY id alone sorts every matching event.
	rows, err := db.read.QueryContext(ctx, `SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM `+from+` WHERE `+
		strings.Join(where, " AND ")+` ORDER BY ts DESC, id DESC LIMIT ?`, append(args, f.Limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*Event{}
	for rows.Next() {
		e, err := scanStoredEvent(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	return list, rows.Err()
}

// scanStoredEvent reads an event of the columns id, event_id, user_id,
// session_id, metadata, log_id, ts.
func scanStoredEvent(row scanner) (*Event, error) {
	e := &Event{}
	var user, session, meta, logID sql.NullString
	var ts int64
	if err := row.Scan(&e.ID, &e.EventID, &user, &session, &meta, &logID, &ts); err != nil {
		return nil, err
	}
	if user.Valid {
		e.UserID = &user.String
	}
	if session.Valid {
		e.SessionID = &session.String
	}
	if logID.Valid {
		e.LogID = &logID.String
	}
	e.Metadata = json.RawMessage("{}")
	if meta.Valid {
		e.Metadata = json.RawMessage(meta.String)
	}
	e.Timestamp = NewTime(fromMS(ts))
	return e, nil
}

// expireBatch deletes up to retentionBatch of the app's events before
// cutoff (ms), oldest first, after taking them out of their runs in
// event_users (see expireFromRuns): a user's, and a session's under the
// app's id negated (sessionRef).
func (tx *Tx) expireBatch(app, cutoff int64, done map[runGroup]tailEvent) (int64, error) {
	rows, err := tx.query(`SELECT id, user_id, session_id, event_id, ts FROM events WHERE app_id = ? AND ts < ? ORDER BY ts LIMIT ?`, app, cutoff, retentionBatch)
	if err != nil {
		return 0, err
	}
	var ids []int64
	var batch, sessions []expiring
	for rows.Next() {
		var e expiring
		var user, session sql.NullString
		if err := rows.Scan(&e.id, &user, &session, &e.eventID, &e.ts); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, e.id)
		if user.Valid {
			e.user = user.String
			batch = append(batch, e)
		} else if session.Valid {
			e.user = session.String
			sessions = append(sessions, e)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if err := tx.db.eng.expireEvents(tx, app, cutoff, batch, done); err != nil {
		return 0, err
	}
	// Sessions' runs are under the app's id negated (sessionRef).
	if err := tx.db.eng.expireEvents(tx, -app, cutoff, sessions, done); err != nil {
		return 0, err
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	r, err := tx.exec(`DELETE FROM events WHERE id IN (`+tx.db.eng.jsonIDs()+`)`, string(list))
	if err != nil {
		return 0, err
	}
	tx.expired = append(tx.expired, expiry{app, cutoff})
	return r.RowsAffected()
}

// retentionBatch bounds one delete transaction, so retention never holds
// the writer long enough to delay ingestion noticeably.
const retentionBatch = 2000

// DeleteEventsBefore deletes every app's events older than cutoff, its
// own retention aside, and returns how many went.
func (db *DB) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	apps, err := db.appRetentions(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, a := range apps {
		n, err := db.expireEvents(ctx, a.id, cutoff)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// DeleteExpiredEvents deletes each app's events older than its own
// eventRetentionDays before now, or older than keep for an app that
// follows the server's --retention, and returns how many went.
func (db *DB) DeleteExpiredEvents(ctx context.Context, now time.Time, keep time.Duration) (int64, error) {
	apps, err := db.appRetentions(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, a := range apps {
		cutoff := now.Add(-keep)
		if a.events.Valid {
			cutoff = now.Add(-daysOf(a.events.Int64))
		}
		n, err := db.expireEvents(ctx, a.id, cutoff)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// DeleteExpiredFormSubmissions deletes the form submissions older than
// their app's formRetentionDays before now, in small transactions as
// events go, and returns how many went. Apps without one keep theirs:
// the server has no default for forms.
func (db *DB) DeleteExpiredFormSubmissions(ctx context.Context, now time.Time) (int64, error) {
	apps, err := db.appRetentions(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, a := range apps {
		if !a.forms.Valid {
			continue
		}
		cutoff := ms(now.Add(-daysOf(a.forms.Int64)))
		for {
			var n int64
			err := db.withTx(ctx, func(tx *Tx) error {
				r, err := tx.exec(`DELETE FROM form_submissions WHERE id IN
					(SELECT id FROM form_submissions WHERE app_id = ? AND submitted_at < ? ORDER BY id LIMIT ?)`, a.id, cutoff, retentionBatch)
				if err != nil {
					return err
				}
				n, err = r.RowsAffected()
				return err
			})
			total += n
			if err != nil {
				return total, err
			}
			if n < retentionBatch {
				break
			}
			if err := ctx.Err(); err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// appRetention is one app's own retentions, in days; null follows the
// server.
type appRetention struct {
	id            int64
	events, forms sql.NullInt64
}

// daysOf is n days as --retention counts them: 24 hours each, whatever the
// calendar.
func daysOf(n int64) time.Duration { return time.Duration(n) * 24 * time.Hour }

func (db *DB) appRetentions(ctx context.Context) ([]appRetention, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, event_retention_days, form_retention_days FROM apps ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var apps []appRetention
	for rows.Next() {
		var a appRetention
		if err := rows.Scan(&a.id, &a.events, &a.forms); err != nil {
			return nil, err
		}
		apps = append(apps, a)
	}
	return apps, rows.Err()
}

// expireEvents deletes one app's events older than cutoff in small
// transactions. It works app by app on the (app_id, ts) index: an index on
// ts alone would cost every ingested event one more b-tree write to serve
// a job that runs a few times an hour.
func (db *DB) expireEvents(ctx context.Context, app int64, cutoff time.Time) (int64, error) {
	var total int64
	done := map[runGroup]tailEvent{}
	for {
		var n int64
		err := db.withTx(ctx, func(tx *Tx) error {
			var err error
			n, err = tx.expireBatch(app, ms(cutoff), done)
			return err
		})
		total += n
		if err != nil {
			return total, err
		}
		if n < retentionBatch {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
