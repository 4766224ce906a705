package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"service/keyring"
	"service/netpolicy"
)

// Webhook statuses. Only ACTIVE webhooks receive new deliveries or have
// pending ones sent.
const (
	WebhookActive = "ACTIVE"
	WebhookFailed = "FAILED"
)

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// Webhook event kinds.
const (
	EventCampaignStarted   = "campaign.started"
	EventCampaignPaused    = "campaign.paused"
	EventCampaignCompleted = "campaign.completed"
	EventWinnerDeclared    = "campaign.winner_declared"
	// EventGuardrailRegressed: a guardrail of an active campaign regressed.
	EventGuardrailRegressed = "campaign.guardrail_regressed"
	EventContentPublished   = "content.published"
	EventContentUnpublish   = "content.unpublished"
	EventFormSubmitted      = "form.submitted"
	EventWebhookTest        = "webhook.test"
)

// EventKinds lists the kinds a webhook can subscribe to.
var EventKinds = []string{EventCampaignStarted, EventCampaignPaused, EventCampaignCompleted,
	EventWinnerDeclared, EventGuardrailRegressed, EventContentPublished, EventContentUnpublish, EventFormSubmitted}

// NormalizeEventKind accepts the dotted kind, the "webhook.campaign_started"
// spelling, or "*", and returns the dotted kind (or "*").
func NormalizeEventKind(s string) (string, bool) {
	if s == "*" || slices.Contains(EventKinds, s) {
		return s, true
	}
	if rest, ok := strings.CutPrefix(s, "webhook."); ok {
		if i := strings.IndexByte(rest, '_'); i > 0 {
			dotted := rest[:i] + "." + rest[i+1:]
			if slices.Contains(EventKinds, dotted) {
				return dotted, true
			}
		}
	}
	return "", false
}

// Limits and defaults of a webhook.
const (
	DefaultWebhookRetries     = 3
	MaxWebhookRetries         = 10
	DefaultWebhookTimeout     = 30
	MaxWebhookTimeout         = 120
	MaxWebhookHeaders         = 20
	MaxWebhookURLLen          = 2048
	MaxWebhookSecretLen       = 256
	MaxWebhookDescriptionLen  = 1000
	maxWebhookHeaderValueLen  = 1024
	maxWebhookAttemptErrorLen = 500

	// WebhookFailureThreshold is the number of consecutive failed attempts
	// after which a webhook becomes FAILED.
	WebhookFailureThreshold = 10
)

// Webhook is a receiver of signed event deliveries. Its secret never leaves
// the store through this type: HasSecret says whether one is set.
type Webhook struct {
	ID                  int64             `json:"id"`
	AppID               int64             `json:"appId"`
	URL                 string            `json:"url"`
	Events              []string          `json:"events"`
	HasSecret           bool              `json:"hasSecret"`
	Headers             map[string]string `json:"headers"`
	MaxRetries          int               `json:"maxRetries"`
	TimeoutSeconds      int               `json:"timeoutSeconds"`
	Description         string            `json:"description"`
	Status              string            `json:"status"`
	ConsecutiveFailures int               `json:"consecutiveFailures"`
	TotalSuccesses      int64             `json:"totalSuccesses"`
	TotalFailures       int64             `json:"totalFailures"`
	CreatedAt           Time              `json:"createdAt"`
	UpdatedAt           Time              `json:"updatedAt"`
	// SecretRotatedAt is when the secret was last rotated, or nil.
	SecretRotatedAt *Time `json:"secretRotatedAt"`
	// PreviousSecretExpiresAt is when the secret replaced by the last
	// rotation stops signing; nil when there is none. A time in the past
	// means only the current secret signs.
	PreviousSecretExpiresAt *Time `json:"previousSecretExpiresAt"`

	// sealed is the secret as stored, for the audit log to compare: it
	// never leaves the store.
	sealed string
}

// webhookFields are what the audit log compares of a webhook. Secret and
// Headers are compared as stored and logged redacted (see secretFields).
type webhookFields struct {
	URL            string            `json:"url"`
	Events         []string          `json:"events"`
	Secret         string            `json:"secret"`
	Headers        map[string]string `json:"headers"`
	MaxRetries     int               `json:"maxRetries"`
	TimeoutSeconds int               `json:"timeoutSeconds"`
	Description    string            `json:"description"`
	Status         string            `json:"status"`
}

func webhookSnapshot(w *Webhook) *webhookFields {
	return &webhookFields{w.URL, w.Events, w.sealed, w.Headers, w.MaxRetries, w.TimeoutSeconds, w.Description, w.Status}
}

// findWebhookTx reads a webhook of the app in tx.
func (tx *Tx) findWebhook(appID, id int64) (*Webhook, error) {
	w, err := scanWebhook(tx.queryRow(`SELECT `+webhookColumns+` FROM webhooks WHERE id = ? AND app_id = ?`, id, appID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook")
	}
	return w, err
}

// WebhookInput is a create or a partial update; nil fields are left alone
// (on create they take their defaults). An empty Secret removes the secret.
type WebhookInput struct {
	URL            *string            `json:"url"`
	Events         *[]string          `json:"events"`
	Secret         *string            `json:"secret"`
	Headers        *map[string]string `json:"headers"`
	MaxRetries     *int               `json:"maxRetries"`
	TimeoutSeconds *int               `json:"timeoutSeconds"`
	Description    *string            `json:"description"`
	Status         *string            `json:"status"`
}

// reservedHeaders are set by the dispatcher itself, or describe the
// connection and body framing; a webhook cannot override them.
var reservedHeaders = []string{"content-type", "user-agent", "host", "content-length",
	"transfer-encoding", "connection", "te", "trailer", "upgrade", "keep-alive", "proxy-connection",
	"webhook-id", "webhook-timestamp", "webhook-signature"}

// validate checks the fields present and returns the normalised events.
func (in *WebhookInput) validate(create bool) ([]string, error) {
	fe := FieldErrors{}
	if in.URL != nil || create {
		if in.URL == nil || *in.URL == "" {
			fe.Add("url", "is required")
		} else if reason := checkWebhookURL(*in.URL); reason != "" {
			fe.Add("url", reason)
		}
	}
	var events []string
	if in.Events != nil || create {
		if in.Events == nil || len(*in.Events) == 0 {
			fe.Add("events", "must be a non-empty array of event kinds")
		} else {
			for i, k := range *in.Events {
				kind, ok := NormalizeEventKind(k)
				if !ok {
					fe.Add(fmt.Sprintf("events[%d]", i), "must be * or one of "+strings.Join(EventKinds, ", "))
					continue
				}
				if !slices.Contains(events, kind) {
					events = append(events, kind)
				}
			}
		}
	}
	if in.Secret != nil && tooLong(*in.Secret, MaxWebhookSecretLen) {
		fe.Add("secret", fmt.Sprintf("must be at most %d characters", MaxWebhookSecretLen))
	}
	if in.Secret != nil && keyring.Sealed(*in.Secret) {
		// Stored as plaintext (no key), it would pass for an encrypted one.
		fe.Add("secret", "must not begin with "+keyring.Prefix)
	}
	if in.Headers != nil {
		checkWebhookHeaders(*in.Headers, fe)
	}
	if in.MaxRetries != nil && (*in.MaxRetries < 0 || *in.MaxRetries > MaxWebhookRetries) {
		fe.Add("maxRetries", fmt.Sprintf("must be between 0 and %d", MaxWebhookRetries))
	}
	if in.TimeoutSeconds != nil && (*in.TimeoutSeconds < 1 || *in.TimeoutSeconds > MaxWebhookTimeout) {
		fe.Add("timeoutSeconds", fmt.Sprintf("must be between 1 and %d", MaxWebhookTimeout))
	}
	if in.Description != nil && tooLong(*in.Description, MaxWebhookDescriptionLen) {
		fe.Add("description", fmt.Sprintf("must be at most %d characters", MaxWebhookDescriptionLen))
	}
	if in.Status != nil && *in.Status != WebhookActive && *in.Status != WebhookFailed {
		fe.Add("status", "must be one of ACTIVE, FAILED")
	}
	return events, fe.Err()
}

// validateWebhook is validate plus the network policy: a URL whose host is
// a literal IP the policy refuses is a bad url field. Host names are judged
// when a delivery dials them.
func (db *DB) validateWebhook(in *WebhookInput, create bool) ([]string, error) {
	events, err := in.validate(create)
	if in.URL == nil {
		return events, err
	}
	u, perr := url.Parse(*in.URL)
	if perr != nil {
		return events, err
	}
	pe := db.WebhookPolicy.CheckHost(u.Hostname())
	var be *netpolicy.BlockedError
	if !errors.As(pe, &be) {
		return events, err
	}
	reason := "is refused by the network policy: " + be.Addr.String() + " is " + be.Reason
	var e *Error
	if errors.As(err, &e) {
		if f, ok := e.Details["fields"].(map[string]any); ok {
			if _, dup := f["url"]; !dup {
				f["url"] = reason
			}
		}
		return nil, err
	}
	return nil, FieldErrors{"url": reason}.Err()
}

func checkWebhookURL(raw string) string {
	if tooLong(raw, MaxWebhookURLLen) {
		return fmt.Sprintf("must be at most %d characters", MaxWebhookURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "must be an absolute http or https URL"
	}
	return ""
}

func checkWebhookHeaders(h map[string]string, fe FieldErrors) {
	if len(h) > MaxWebhookHeaders {
		fe.Add("headers", fmt.Sprintf("must have at most %d headers", MaxWebhookHeaders))
		return
	}
	seen := map[string]string{}
	// Sorted, so the same duplicate is reported whatever the map order.
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := "headers." + name
		lower := strings.ToLower(name)
		switch {
		case !validHeaderName(name):
			fe.Add(p, "must be a valid HTTP header name")
		case slices.Contains(reservedHeaders, lower) || strings.HasPrefix(lower, "x-service-"):
			fe.Add(p, "is set by the service and cannot be overridden")
		case seen[lower] != "":
			fe.Add(p, "duplicates header "+seen[lower])
		case !validHeaderValue(h[name]):
			fe.Add(p, fmt.Sprintf("must be at most %d characters without control characters", maxWebhookHeaderValueLen))
		}
		seen[lower] = name
	}
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue refuses CR, LF and other controls, which would let a
// value smuggle extra headers into the request.
func validHeaderValue(s string) bool {
	if tooLong(s, maxWebhookHeaderValueLen) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

const webhookColumns = `id, app_id, url, events, secret, headers, max_retries, timeout_seconds, description,
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at,
	secret_rotated_at, previous_secret_expires_at`

func scanWebhook(row scanner) (*Webhook, error) {
	w := &Webhook{}
	var events, secret, headers string
	var created, updated int64
	var rotated, prevExpires sql.NullInt64
	if err := row.Scan(&w.ID, &w.AppID, &w.URL, &events, &secret, &headers, &w.MaxRetries, &w.TimeoutSeconds,
		&w.Description, &w.Status, &w.ConsecutiveFailures, &w.TotalSuccesses, &w.TotalFailures, &created, &updated,
		&rotated, &prevExpires); err != nil {
		return nil, err
	}
	w.SecretRotatedAt, w.PreviousSecretExpiresAt = TimePtr(nullMS(rotated)), TimePtr(nullMS(prevExpires))
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(headers), &w.Headers); err != nil {
		return nil, err
	}
	if w.Headers == nil {
		w.Headers = map[string]string{}
	}
	w.HasSecret, w.sealed = secret != "", secret
	w.CreatedAt, w.UpdatedAt = NewTime(fromMS(created)), NewTime(fromMS(updated))
	return w, nil
}

// CreateWebhook registers a webhook of an app. A nil MaxRetries takes 3, a
// nil TimeoutSeconds 30 (the handlers pass the server's configured default).
func (db *DB) CreateWebhook(ctx context.Context, appID int64, in WebhookInput) (*Webhook, error) {
	events, err := db.validateWebhook(&in, true)
	if err != nil {
		return nil, err
	}
	retries, timeout, status := DefaultWebhookRetries, DefaultWebhookTimeout, WebhookActive
	if in.MaxRetries != nil {
		retries = *in.MaxRetries
	}
	if in.TimeoutSeconds != nil {
		timeout = *in.TimeoutSeconds
	}
	if in.Status != nil {
		status = *in.Status
	}
	var secret, desc string
	if in.Secret != nil {
		if secret, err = db.sealSecret(*in.Secret); err != nil {
			return nil, err
		}
	}
	if in.Description != nil {
		desc = *in.Description
	}
	headers := map[string]string{}
	if in.Headers != nil && *in.Headers != nil {
		headers = *in.Headers
	}
	ev, _ := json.Marshal(events)
	hd, _ := json.Marshal(headers)
	var id int64
	err = db.withTx(ctx, func(tx *Tx) error {
		newID, err := tx.insertID(`INSERT INTO webhooks (app_id, url, events, secret, headers, max_retries, timeout_seconds,
			description, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			appID, *in.URL, string(ev), secret, string(hd), retries, timeout, desc, status, ms(tx.now), ms(tx.now))
		if err != nil {
			return err
		}
		id = newID
		// Webhooks are read from the database at each claim, not cached;
		// the change still counts, so that every process hears of it.
		tx.changed = true
		w, err := tx.findWebhook(appID, id)
		if err != nil {
			return err
		}
		return tx.audit(auditRecord{app: appID, action: "webhook.created", objType: ObjectWebhook, objID: id, objName: w.URL,
			after: webhookSnapshot(w)})
	})
	if err != nil {
		return nil, err
	}
	return db.FindWebhookByID(ctx, appID, id)
}

// FindWebhookByID returns a webhook of the app; one of another app is
// reported missing.
func (db *DB) FindWebhookByID(ctx context.Context, appID, id int64) (*Webhook, error) {
	w, err := scanWebhook(db.read.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = ? AND app_id = ?`, id, appID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("webhook")
	}
	return w, err
}

// FindWebhooks lists an app's webhooks, newest first.
func (db *DB) FindWebhooks(ctx context.Context, appID int64, o ListOptions) ([]*Webhook, Pagination, error) {
	return findPage(ctx, db, "webhooks", webhookColumns, "app_id = ?", []any{appID}, o, scanWebhook)
}

// UpdateWebhook applies a partial update. Setting status ACTIVE resets the
// consecutive-failure counter, which is how a FAILED webhook is re-enabled;
// its pending deliveries are then sent again.
func (db *DB) UpdateWebhook(ctx context.Context, appID, id int64, in WebhookInput) (*Webhook, error) {
	events, err := db.validateWebhook(&in, false)
	if err != nil {
		return nil, err
	}
	err = db.withTx(ctx, func(tx *Tx) error {
		cur, err := tx.findWebhook(appID, id)
		if err != nil {
			return err
		}
		set, args := []string{`updated_at = ?`}, []any{ms(tx.now)}
		add := func(col string, v any) {
			set = append(set, col+` = ?`)
			args = append(args, v)
		}
		if in.URL != nil {
			add("url", *in.URL)
		}
		if in.Events != nil {
			ev, _ := json.Marshal(events)
			add("events", string(ev))
		}
		if in.Secret != nil {
			// Setting the secret outright replaces it at once: a grace
			// period is what rotate-secret is for, so any previous secret
			// still in its grace stops signing too.
			sealed, err := db.sealSecret(*in.Secret)
			if err != nil {
				return err
			}
			add("secret", sealed)
			add("previous_secret", "")
			add("previous_secret_expires_at", nil)
		}
		if in.Headers != nil {
			h := *in.Headers
			if h == nil {
				h = map[string]string{}
			}
			hd, _ := json.Marshal(h)
			add("headers", string(hd))
		}
		if in.MaxRetries != nil {
			add("max_retries", *in.MaxRetries)
		}
		if in.TimeoutSeconds != nil {
			add("timeout_seconds", *in.TimeoutSeconds)
		}
		if in.Description != nil {
			add("description", *in.Description)
		}
		if in.Status != nil {
			add("status", *in.Status)
			if *in.Status == WebhookActive {
				add("consecutive_failures", 0)
			}
		}
		if _, err = tx.exec(`UPDATE webhooks SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
			return err
		}
		switch {
		case in.Status == nil:
		case *in.Status == WebhookFailed:
			if err := tx.parkDeliveries(id); err != nil {
				return err
			}
		default:
			// Deliveries that waited while it was FAILED are due now.
			res, err := tx.exec(`UPDATE webhook_deliveries SET next_attempt_at = ?
				WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at IS NULL`, ms(tx.now), id)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			tx.enqueued = n > 0
		}
		tx.changed = true
		w, err := tx.findWebhook(appID, id)
		if err != nil {
			return err
		}
		before, after := webhookSnapshot(cur), webhookSnapshot(w)
		action := "webhook.updated"
		if moved := *before; before.Status != after.Status {
			moved.Status = after.Status
			if same, err := sameFields(&moved, after); err != nil {
				return err
			} else if same && after.Status == WebhookActive {
				action = "webhook.enabled"
			} else if same {
				action = "webhook.disabled"
			}
		}
		return tx.audit(auditRecord{app: appID, action: action, objType: ObjectWebhook, objID: id, objName: w.URL, before: before, after: after})
	})
	if err != nil {
		return nil, err
	}
	return db.FindWebhookByID(ctx, appID, id)
}

func (db *DB) DeleteWebhook(ctx context.Context, appID, id int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		cur, err := tx.findWebhook(appID, id)
		if err != nil {
			return err
		}
		if _, err := tx.exec(`DELETE FROM webhooks WHERE id = ? AND app_id = ?`, id, appID); err != nil {
			return err
		}
		tx.changed = true
		return tx.audit(auditRecord{app: appID, action: "webhook.deleted", objType: ObjectWebhook, objID: id, objName: cur.URL,
			before: webhookSnapshot(cur)})
	})
}

// Delivery is one event queued for one webhook, with its attempts.
//
// AttemptCount counts every attempt ever made; the retry schedule counts
// only the attempts since the delivery was queued or last redelivered.
type Delivery struct {
	ID            int64             `json:"id"`
	WebhookID     int64             `json:"webhookId"`
	Event         string            `json:"event"`
	Payload       json.RawMessage   `json:"payload"`
	Status        string            `json:"status"`
	Attempts      []DeliveryAttempt `json:"attempts"`
	AttemptCount  int               `json:"attemptCount"`
	NextAttemptAt *Time             `json:"nextAttemptAt"`
	CreatedAt     Time              `json:"createdAt"`
	// RedactedAt is when an erasure took a user's fields out of the
	// payload (see EraseUser); absent for a delivery never redacted.
	RedactedAt *Time `json:"redactedAt,omitempty"`
}

// DeliveryAttempt is one HTTP request of a delivery. ResponseStatus is nil
// when no response arrived (timeout, refused connection); Error is nil when
// one did.
type DeliveryAttempt struct {
	At             Time    `json:"at"`
	ResponseStatus *int    `json:"responseStatus"`
	Error          *string `json:"error"`
	DurationMS     int64   `json:"durationMs"`
}

const deliveryColumns = `d.id, d.webhook_id, d.event, d.payload, d.status, d.next_attempt_at, d.created_at,
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id), d.redacted_at`

func scanDelivery(row scanner) (*Delivery, error) {
	d := &Delivery{Attempts: []DeliveryAttempt{}}
	var payload []byte
	var next, redacted sql.NullInt64
	var created int64
	if err := row.Scan(&d.ID, &d.WebhookID, &d.Event, &payload, &d.Status, &next, &created, &d.AttemptCount, &redacted); err != nil {
		return nil, err
	}
	d.RedactedAt = TimePtr(nullMS(redacted))
	d.Payload = json.RawMessage(payload)
	if d.Status == DeliveryPending {
		d.NextAttemptAt = TimePtr(nullMS(next))
	}
	d.CreatedAt = NewTime(fromMS(created))
	return d, nil
}

// deliveryAttempts loads the attempts of the given deliveries, oldest first.
func deliveryAttempts(q conn, list []*Delivery) error {
	if len(list) == 0 {
		return nil
	}
	byID := make(map[int64]*Delivery, len(list))
	ids := make([]int64, len(list))
	for i, d := range list {
		byID[d.ID], ids[i] = d, d.ID
	}
	rows, err := q.query(`SELECT delivery_id, at, response_status, error, duration_ms FROM webhook_attempts
		WHERE delivery_id IN (`+q.stmts.eng.jsonIDs()+`) ORDER BY id`, jsonIDs(ids))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, at, dur int64
		var status sql.NullInt64
		var msg sql.NullString
		if err := rows.Scan(&id, &at, &status, &msg, &dur); err != nil {
			return err
		}
		a := DeliveryAttempt{At: NewTime(fromMS(at)), DurationMS: dur}
		if status.Valid {
			s := int(status.Int64)
			a.ResponseStatus = &s
		}
		if msg.Valid {
			a.Error = &msg.String
		}
		d := byID[id]
		d.Attempts = append(d.Attempts, a)
	}
	return rows.Err()
}

// FindDeliveries lists a webhook's deliveries, newest first, with their
// attempts; status, when set, filters them.
func (db *DB) FindDeliveries(ctx context.Context, appID, webhookID int64, status string, o ListOptions) ([]*Delivery, Pagination, error) {
	if _, err := db.FindWebhookByID(ctx, appID, webhookID); err != nil {
		return nil, Pagination{}, err
	}
	where, args := `d.webhook_id = ?`, []any{webhookID}
	if status != "" {
		where += ` AND d.status = ?`
		args = append(args, status)
	}
	list, p, err := findPage(ctx, db, "webhook_deliveries d", deliveryColumns, where, args, o, scanDelivery)
	if err != nil {
		return nil, Pagination{}, err
	}
	if err := deliveryAttempts(db.reader(ctx), list); err != nil {
		return nil, Pagination{}, err
	}
	return list, p, nil
}

// FindDeliveryByID returns one delivery of a webhook of the app.
func (db *DB) FindDeliveryByID(ctx context.Context, appID, webhookID, id int64) (*Delivery, error) {
	d, err := scanDelivery(db.read.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ? AND d.webhook_id = ? AND w.app_id = ?`, id, webhookID, appID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("delivery")
	} else if err != nil {
		return nil, err
	}
	if err := deliveryAttempts(db.reader(ctx), []*Delivery{d}); err != nil {
		return nil, err
	}
	return d, nil
}
