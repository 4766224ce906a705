package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The audit log: every change to the service's configuration, whoever made
// it (an API key, a dashboard user, the command line, the scheduler), is
// written in the transaction that makes the change. No change commits
// without its entry and no entry without its change.
//
// Who makes a change travels in the context (WithCaller), so that the
// store's methods keep their signatures and every way in records itself
// the same way. A context without a caller is the command line's: the API,
// the dashboard and the scheduler always name theirs.

// Actor types.
const (
	ActorKey       = "key"
	ActorUser      = "user"
	ActorCLI       = "cli"
	ActorScheduler = "scheduler"
)

// Actor is who made a change: an API key (its id, name and prefix, never
// the key), a dashboard user (id and email), the command line or the
// scheduler.
type Actor struct {
	Type   string `json:"type"`
	ID     *int64 `json:"id,omitempty"`
	Name   string `json:"name,omitempty"`
	Prefix string `json:"prefix,omitempty"`
}

// KeyActor is the actor of a change made with an API key.
func KeyActor(k *Key) Actor {
	id := k.ID
	return Actor{Type: ActorKey, ID: &id, Name: k.Name, Prefix: k.Prefix}
}

// UserActor is the actor of a change made by a dashboard user.
func UserActor(u DashboardUser) Actor {
	id := u.ID
	return Actor{Type: ActorUser, ID: &id, Name: u.Email}
}

// Label names the actor in one word, as the log's actor filter takes it:
// "cli", "scheduler", "key:<id>" or the user's email.
func (a Actor) Label() string {
	switch {
	case a.Type == ActorKey && a.ID != nil:
		return "key:" + strconv.FormatInt(*a.ID, 10)
	case a.Type == ActorUser:
		return a.Name
	}
	return a.Type
}

// Caller is who makes the changes of a context, and from where.
type Caller struct {
	Actor Actor
	// RequestID is the id of the HTTP request (X-Request-Id), if any.
	RequestID string
	// Addr is the client's address, if any.
	Addr string
	// Instance marks an instance key's changes: each is listed as the
	// instance's too, so owners see in one place everything done with
	// the keys that provision apps.
	Instance bool
}

type callerKey struct{}

// WithCaller returns a context whose changes are recorded as c's.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the caller of ctx: the command line when none was set.
func CallerOf(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return c
	}
	return Caller{Actor: Actor{Type: ActorCLI}}
}

// AuditEntry is one recorded change.
type AuditEntry struct {
	ID int64 `json:"id"`
	// AppID is the app the change belongs to; nil for changes to the
	// instance alone (dashboard users and owners).
	AppID     *int64      `json:"appId"`
	Timestamp Time        `json:"timestamp"`
	Actor     Actor       `json:"actor"`
	Action    string      `json:"action"`
	Object    AuditObject `json:"object"`
	RequestID string      `json:"requestId"`
	// ClientAddress is the address the request came from; empty for the
	// command line and the scheduler.
	ClientAddress string `json:"clientAddress"`
	// Changes holds, by field, the values before and after: only the
	// fields that changed on an update, every field on a create (after)
	// and a delete (before).
	Changes map[string]Change `json:"changes"`
	// Instance marks changes listed to owners as the instance's own.
	Instance bool `json:"-"`
}

// AuditObject is what a change was made to.
type AuditObject struct {
	Type string `json:"type"`
	ID   *int64 `json:"id"`
	Name string `json:"name"`
}

// Change is one field's value before and after a change; a side that does
// not exist (before a create, after a delete) is left out.
type Change struct {
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
}

// Object types of the audit log.
const (
	ObjectApp        = "app"
	ObjectKey        = "key"
	ObjectCampaign   = "campaign"
	ObjectContent    = "content"
	ObjectAudience   = "audience"
	ObjectMetric     = "metric"
	ObjectWebhook    = "webhook"
	ObjectMember     = "member"
	ObjectInvitation = "invitation"
	ObjectUser       = "user"
)

// AuditObjectTypes are the object types, in the order the docs list them.
var AuditObjectTypes = []string{ObjectApp, ObjectKey, ObjectCampaign, ObjectContent, ObjectAudience, ObjectMetric,
	ObjectWebhook, ObjectMember, ObjectInvitation, ObjectUser, ObjectEndUser}

// RedactedValue stands in the log for every secret's value.
const RedactedValue = "[redacted]"

// auditInlineMax is the largest value the log keeps as it is; a larger one
// (a content block's items, an audience's rules) is kept as its SHA-256 and
// size, so the log stays small and still shows that it changed.
const auditInlineMax = 4 << 10

// secretFields are the snapshot fields whose values the log never holds:
// the webhook's signing secret, and the values of its custom headers,
// which commonly carry a receiver's credentials.
var secretFields = map[string]func(json.RawMessage) json.RawMessage{
	"secret":  redactSecret,
	"headers": redactHeaders,
}

func redactSecret(v json.RawMessage) json.RawMessage {
	if isNull(v) || string(v) == `""` {
		return json.RawMessage("null")
	}
	return json.RawMessage(`"` + RedactedValue + `"`)
}

func redactHeaders(v json.RawMessage) json.RawMessage {
	var h map[string]json.RawMessage
	if json.Unmarshal(v, &h) != nil {
		return json.RawMessage(`"` + RedactedValue + `"`)
	}
	for k := range h {
		h[k] = json.RawMessage(`"` + RedactedValue + `"`)
	}
	b, _ := json.Marshal(h)
	return b
}

// auditRecord is what a store method tells tx.audit about its change.
type auditRecord struct {
	app      int64 // 0: the instance's alone
	instance bool  // listed to owners as the instance's
	action   string
	objType  string
	objID    int64 // 0: none
	objName  string
	// before and after are snapshots of the object (structs whose json
	// fields are what the log compares); nil for the side of a create or
	// a delete that does not exist.
	before, after any
}

// snapshotFields reads a snapshot as its JSON fields.
func snapshotFields(v any) (map[string]json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	return m, json.Unmarshal(b, &m)
}

// auditChanges compares two snapshots field by field. Values are compared
// as they are and only then redacted or digested, so a rotated secret
// shows as changed without showing.
func auditChanges(before, after any) (map[string]Change, error) {
	b, err := snapshotFields(before)
	if err != nil {
		return nil, err
	}
	a, err := snapshotFields(after)
	if err != nil {
		return nil, err
	}
	out := map[string]Change{}
	for k, av := range a {
		bv, had := b[k]
		if before != nil && had && bytes.Equal(bv, av) {
			continue
		}
		c := Change{After: loggable(k, av)}
		if before != nil {
			c.Before = loggable(k, bv)
		}
		out[k] = c
	}
	// A field that a snapshot leaves out at its default (omitempty) and
	// that went back to it is a change too: it is logged with after null.
	for k, bv := range b {
		if _, has := a[k]; !has {
			c := Change{Before: loggable(k, bv)}
			if after != nil {
				c.After = json.RawMessage("null")
			}
			out[k] = c
		}
	}
	return out, nil
}

// loggable is a field's value as the log may hold it: redacted when it is
// a secret, digested when it is large.
func loggable(field string, v json.RawMessage) json.RawMessage {
	if v == nil {
		v = json.RawMessage("null")
	}
	if redact := secretFields[field]; redact != nil {
		return redact(v)
	}
	if len(v) > auditInlineMax {
		sum := sha256.Sum256(v)
		d, _ := json.Marshal(map[string]any{"sha256": hex.EncodeToString(sum[:]), "bytes": len(v)})
		return d
	}
	return v
}

// audit writes the entry of a change in the change's transaction. An
// update that changed no field writes none: the log lists changes.
func (tx *Tx) audit(r auditRecord) error {
	changes, err := auditChanges(r.before, r.after)
	if err != nil {
		return err
	}
	if r.before != nil && r.after != nil && len(changes) == 0 {
		return nil
	}
	var text any
	if len(changes) > 0 {
		b, err := json.Marshal(changes)
		if err != nil {
			return err
		}
		text = string(b)
	}
	c := CallerOf(tx.ctx)
	var app, obj, actor any
	if r.app != 0 {
		app = r.app
	}
	if r.objID != 0 {
		obj = r.objID
	}
	if c.Actor.ID != nil {
		actor = *c.Actor.ID
	}
	_, err = tx.exec(`INSERT INTO audit_log (at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ms(tx.now), app, r.instance || c.Instance, c.Actor.Type, actor, c.Actor.Name, c.Actor.Prefix,
		r.action, r.objType, obj, r.objName, c.RequestID, c.Addr, text)
	return err
}

// MaxAuditLimit is the largest page of entries one listing returns.
const MaxAuditLimit = 1000

// AuditFilter selects entries of the audit log, newest first.
type AuditFilter struct {
	// AppID selects one app's entries; Instance the instance's (those
	// listed to owners). Neither lists every entry.
	AppID    int64
	Instance bool
	// ObjectType and ObjectID select one kind of object, or one object.
	ObjectType string
	ObjectID   int64
	// Actor is an actor's Label: "cli", "scheduler", "key:<id>",
	// "user:<id>" or a user's email.
	Actor string
	// Action is one action, such as campaign.status_changed.
	Action     string
	Start, End *time.Time
	// Before returns entries older than this entry id: the next page.
	Before int64
	Limit  int
}

// validate checks the filter's fields and returns the actor condition.
func (f *AuditFilter) validate() (string, []any, error) {
	fe := FieldErrors{}
	if f.ObjectType != "" {
		ok := false
		for _, t := range AuditObjectTypes {
			ok = ok || t == f.ObjectType
		}
		if !ok {
			fe.Add("objectType", "must be one of "+strings.Join(AuditObjectTypes, ", "))
		}
	}
	var where string
	var args []any
	switch a := f.Actor; {
	case a == "":
	case a == ActorCLI || a == ActorScheduler:
		where, args = `actor_type = ?`, []any{a}
	case strings.HasPrefix(a, "key:") || strings.HasPrefix(a, "user:"):
		kind, raw, _ := strings.Cut(a, ":")
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id < 1 {
			fe.Add("actor", "must be cli, scheduler, key:<id>, user:<id> or an email")
		}
		where, args = `actor_type = ? AND actor_id = ?`, []any{map[string]string{"key": ActorKey, "user": ActorUser}[kind], id}
	case strings.Contains(a, "@"):
		where, args = `actor_type = ? AND lower(actor_name) = lower(?)`, []any{ActorUser, a}
	default:
		fe.Add("actor", "must be cli, scheduler, key:<id>, user:<id> or an email")
	}
	if f.Start != nil && f.End != nil && f.End.Before(*f.Start) {
		fe.Add("endDate", "must not be before startDate")
	}
	return where, args, fe.Err()
}

// FindAuditLog lists entries of the audit log, newest first.
func (db *DB) FindAuditLog(ctx context.Context, f AuditFilter) ([]*AuditEntry, error) {
	actorWhere, actorArgs, err := f.validate()
	if err != nil {
		return nil, err
	}
	where, args := []string{"1 = 1"}, []any{}
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	if f.AppID != 0 {
		add(`app_id = ?`, f.AppID)
	}
	if f.Instance {
		add(`instance = ?`, true)
	}
	if f.ObjectType != "" {
		add(`object_type = ?`, f.ObjectType)
	}
	if f.ObjectID != 0 {
		add(`object_id = ?`, f.ObjectID)
	}
	if actorWhere != "" {
		add(actorWhere, actorArgs...)
	}
	if f.Action != "" {
		add(`action = ?`, f.Action)
	}
	if f.Start != nil {
		add(`at >= ?`, ms(*f.Start))
	}
	if f.End != nil {
		add(`at <= ?`, ms(*f.End))
	}
	if f.Before > 0 {
		add(`id < ?`, f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE `+strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, append(args, min(limit, MaxAuditLimit))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*AuditEntry{}
	for rows.Next() {
		e := &AuditEntry{}
		var at int64
		var app, actorID, objID sql.NullInt64
		var changes sql.NullString
		if err := rows.Scan(&e.ID, &at, &app, &e.Instance, &e.Actor.Type, &actorID, &e.Actor.Name, &e.Actor.Prefix,
			&e.Action, &e.Object.Type, &objID, &e.Object.Name, &e.RequestID, &e.ClientAddress, &changes); err != nil {
			return nil, err
		}
		e.Timestamp = NewTime(fromMS(at))
		if app.Valid {
			e.AppID = &app.Int64
		}
		if actorID.Valid {
			e.Actor.ID = &actorID.Int64
		}
		if objID.Valid {
			e.Object.ID = &objID.Int64
		}
		e.Changes = map[string]Change{}
		if changes.Valid {
			if err := json.Unmarshal([]byte(changes.String), &e.Changes); err != nil {
				return nil, err
			}
		}
		list = append(list, e)
	}
	return list, rows.Err()
}

// DeleteAuditBefore deletes the audit entries older than cutoff, the
// retention of the log, and the invitations and password reset links that
// expired before it. It returns how many entries went.
func (db *DB) DeleteAuditBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := db.withTx(ctx, func(tx *Tx) error {
		res, err := tx.exec(`DELETE FROM audit_log WHERE at < ?`, ms(cutoff))
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if _, err = tx.exec(`DELETE FROM dashboard_invitations WHERE expires_at < ?`, ms(cutoff)); err != nil {
			return err
		}
		_, err = tx.exec(`DELETE FROM dashboard_password_resets WHERE expires_at < ?`, ms(cutoff))
		return err
	})
	return n, err
}
