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
	"time"
	"unicode/utf8"

	"service/jsonjs"
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
	"transfer-encoding", "connection", "te", "trailer", "upgrade", "keep-alive", "proxy-connection"}

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
	if in.Secret != nil && utf8.RuneCountInString(*in.Secret) > MaxWebhookSecretLen {
		fe.Add("secret", fmt.Sprintf("must be at most %d characters", MaxWebhookSecretLen))
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
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > MaxWebhookDescriptionLen {
		fe.Add("description", fmt.Sprintf("must be at most %d characters", MaxWebhookDescriptionLen))
	}
	if in.Status != nil && *in.Status != WebhookActive && *in.Status != WebhookFailed {
		fe.Add("status", "must be one of ACTIVE, FAILED")
	}
	return events, fe.Err()
}

func checkWebhookURL(raw string) string {
	if len(raw) > MaxWebhookURLLen {
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
	if len(s) > maxWebhookHeaderValueLen {
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
	status, consecutive_failures, total_successes, total_failures, created_at, updated_at`

func scanWebhook(row scanner) (*Webhook, error) {
	w := &Webhook{}
	var events, secret, headers string
	var created, updated int64
	if err := row.Scan(&w.ID, &w.AppID, &w.URL, &events, &secret, &headers, &w.MaxRetries, &w.TimeoutSeconds,
		&w.Description, &w.Status, &w.ConsecutiveFailures, &w.TotalSuccesses, &w.TotalFailures, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(headers), &w.Headers); err != nil {
		return nil, err
	}
	if w.Headers == nil {
		w.Headers = map[string]string{}
	}
	w.HasSecret = secret != ""
	w.CreatedAt, w.UpdatedAt = NewTime(fromMS(created)), NewTime(fromMS(updated))
	return w, nil
}

// CreateWebhook registers a webhook of an app. A nil MaxRetries takes 3, a
// nil TimeoutSeconds 30 (the handlers pass the server's configured default).
func (db *DB) CreateWebhook(ctx context.Context, appID int64, in WebhookInput) (*Webhook, error) {
	events, err := in.validate(true)
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
		secret = *in.Secret
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
		res, err := tx.Exec(`INSERT INTO webhooks (app_id, url, events, secret, headers, max_retries, timeout_seconds,
			description, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			appID, *in.URL, string(ev), secret, string(hd), retries, timeout, desc, status, ms(tx.now), ms(tx.now))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
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
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks WHERE app_id = ?`, appID).Scan(&total); err != nil {
		return nil, Pagination{}, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE app_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
		appID, o.Limit, o.offset())
	if err != nil {
		return nil, Pagination{}, err
	}
	defer rows.Close()
	list := []*Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, Pagination{}, err
		}
		list = append(list, w)
	}
	return list, newPagination(o, total), rows.Err()
}

// UpdateWebhook applies a partial update. Setting status ACTIVE resets the
// consecutive-failure counter, which is how a FAILED webhook is re-enabled;
// its pending deliveries are then sent again.
func (db *DB) UpdateWebhook(ctx context.Context, appID, id int64, in WebhookInput) (*Webhook, error) {
	events, err := in.validate(false)
	if err != nil {
		return nil, err
	}
	err = db.withTx(ctx, func(tx *Tx) error {
		var n int
		err := tx.QueryRow(`SELECT COUNT(*) FROM webhooks WHERE id = ? AND app_id = ?`, id, appID).Scan(&n)
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound("webhook")
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
			add("secret", *in.Secret)
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
		if _, err = tx.Exec(`UPDATE webhooks SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
			return err
		}
		switch {
		case in.Status == nil:
		case *in.Status == WebhookFailed:
			return tx.parkDeliveries(id)
		default:
			// Deliveries that waited while it was FAILED are due now.
			res, err := tx.Exec(`UPDATE webhook_deliveries SET next_attempt_at = ?
				WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at IS NULL`, ms(tx.now), id)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			tx.enqueued = n > 0
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db.FindWebhookByID(ctx, appID, id)
}

// parkDeliveries unschedules the pending deliveries of a FAILED webhook
// that are not being sent right now: they wait, with no nextAttemptAt, until
// the webhook is re-enabled, and cost the dispatcher nothing meanwhile.
func (tx *Tx) parkDeliveries(hookID int64) error {
	_, err := tx.Exec(`UPDATE webhook_deliveries SET next_attempt_at = NULL
		WHERE webhook_id = ? AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= ?)`, hookID, ms(tx.now))
	return err
}

// DeleteWebhook deletes a webhook with its deliveries and their attempts.
func (db *DB) DeleteWebhook(ctx context.Context, appID, id int64) error {
	return db.withTx(ctx, func(tx *Tx) error {
		res, err := tx.Exec(`DELETE FROM webhooks WHERE id = ? AND app_id = ?`, id, appID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("webhook")
		}
		return nil
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
	(SELECT COUNT(*) FROM webhook_attempts a WHERE a.delivery_id = d.id)`

func scanDelivery(row scanner) (*Delivery, error) {
	d := &Delivery{Attempts: []DeliveryAttempt{}}
	var payload []byte
	var next sql.NullInt64
	var created int64
	if err := row.Scan(&d.ID, &d.WebhookID, &d.Event, &payload, &d.Status, &next, &created, &d.AttemptCount); err != nil {
		return nil, err
	}
	d.Payload = json.RawMessage(payload)
	if d.Status == DeliveryPending {
		d.NextAttemptAt = TimePtr(nullMS(next))
	}
	d.CreatedAt = NewTime(fromMS(created))
	return d, nil
}

// deliveryAttempts loads the attempts of the given deliveries, oldest first.
func deliveryAttempts(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, list []*Delivery) error {
	if len(list) == 0 {
		return nil
	}
	byID := make(map[int64]*Delivery, len(list))
	marks := make([]string, len(list))
	args := make([]any, len(list))
	for i, d := range list {
		byID[d.ID] = d
		marks[i], args[i] = "?", d.ID
	}
	rows, err := q.QueryContext(ctx, `SELECT delivery_id, at, response_status, error, duration_ms FROM webhook_attempts
		WHERE delivery_id IN (`+strings.Join(marks, ",")+`) ORDER BY id`, args...)
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
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries d WHERE `+where, args...).Scan(&total); err != nil {
		return nil, Pagination{}, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d WHERE `+where+
		` ORDER BY d.id DESC LIMIT ? OFFSET ?`, append(args, o.Limit, o.offset())...)
	if err != nil {
		return nil, Pagination{}, err
	}
	list := []*Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, Pagination{}, err
		}
		list = append(list, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, Pagination{}, err
	}
	if err := deliveryAttempts(ctx, db.read, list); err != nil {
		return nil, Pagination{}, err
	}
	return list, newPagination(o, total), nil
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
	if err := deliveryAttempts(ctx, db.read, []*Delivery{d}); err != nil {
		return nil, err
	}
	return d, nil
}

// RedeliverDelivery queues a delivery again under the same id: it becomes
// pending, due now, with a fresh retry budget. A delivery being sent at
// this moment keeps its claim, and that attempt counts as the first of the
// new round.
func (db *DB) RedeliverDelivery(ctx context.Context, appID, webhookID, id int64) (*Delivery, error) {
	err := db.withTx(ctx, func(tx *Tx) error {
		// A FAILED webhook's delivery waits, unscheduled, like its others.
		res, err := tx.Exec(`UPDATE webhook_deliveries SET status = 'pending', attempts = 0,
				next_attempt_at = CASE WHEN (SELECT status FROM webhooks WHERE id = ?) = 'ACTIVE' THEN ? END
			WHERE id = ? AND webhook_id = ? AND webhook_id IN (SELECT id FROM webhooks WHERE app_id = ?)`,
			webhookID, ms(tx.now), id, webhookID, appID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("delivery")
		}
		tx.enqueued = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db.FindDeliveryByID(ctx, appID, webhookID, id)
}

type webhookTest struct {
	WebhookID int64  `json:"webhookId"`
	Message   string `json:"message"`
	SentAt    Time   `json:"sentAt"`
}

// WebhookTestMessage is the message of a webhook.test delivery.
const WebhookTestMessage = "This is a test delivery from Service webhooks."

// SendTestDelivery queues a webhook.test event to one webhook, whatever it
// subscribes to. Like every delivery it waits while the webhook is FAILED.
func (db *DB) SendTestDelivery(ctx context.Context, appID, webhookID int64) (*Delivery, error) {
	var id int64
	err := db.withTx(ctx, func(tx *Tx) error {
		var status string
		err := tx.QueryRow(`SELECT status FROM webhooks WHERE id = ? AND app_id = ?`, webhookID, appID).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("webhook")
		} else if err != nil {
			return err
		}
		payload, err := jsonjs.Stringify(webhookTest{webhookID, WebhookTestMessage, NewTime(tx.now)})
		if err != nil {
			return err
		}
		var next any
		if status == WebhookActive {
			next = ms(tx.now)
		}
		res, err := tx.Exec(`INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?)`,
			webhookID, EventWebhookTest, payload, ms(tx.now), next)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		tx.enqueued = true
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.FindDeliveryByID(ctx, appID, webhookID, id)
}

// ClaimedDelivery is everything the dispatcher needs to send one attempt,
// read while claiming it so the send itself touches no database.
type ClaimedDelivery struct {
	ID         int64
	WebhookID  int64
	Event      string
	Payload    []byte
	CreatedAt  time.Time
	URL        string
	Secret     string
	Headers    map[string]string
	Timeout    time.Duration
	MaxRetries int
	// Attempt is the 1-based number of this attempt within the current
	// round (since queued or last redelivered).
	Attempt int
	// Claim identifies this claim (it is the lease's expiry in ms):
	// RecordAttempt changes the delivery only while it still holds it.
	Claim int64
}

// ClaimOptions bounds one claim.
type ClaimOptions struct {
	// Limit is the most deliveries to claim (the idle workers).
	Limit int
	// PerWebhook is the most sends in flight to one webhook, counting
	// InFlight, so a slow receiver cannot take every worker.
	PerWebhook int
	// InFlight is the caller's count of sends in progress per webhook.
	InFlight map[int64]int
	// Lease is how long a claim outlives the webhook's timeout.
	Lease time.Duration
}

// ClaimDueDeliveries claims pending deliveries of ACTIVE webhooks that are
// due at now, oldest first, within the bounds of o. Each claim is a lease
// until now + the webhook's timeout + o.Lease: if the process dies
// mid-send, the delivery is claimable again once the lease has expired, so
// a restart resumes it.
//
// A read on the reader pool finds the candidates first, so the frequent
// looks that find nothing never take the write lock from API writes; the
// claim itself is a conditional UPDATE in one write transaction.
func (db *DB) ClaimDueDeliveries(ctx context.Context, now time.Time, o ClaimOptions) ([]*ClaimedDelivery, error) {
	if o.Limit < 1 {
		return nil, nil
	}
	per := max(o.PerWebhook, 1)
	t := ms(now)
	count := make(map[int64]int, len(o.InFlight)+1)
	var capped []int64
	for k, v := range o.InFlight {
		count[k] = v
		if v >= per {
			capped = append(capped, k)
		}
	}
	ids, err := db.dueDeliveries(ctx, t, o.Limit, per, count, capped)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	lease := o.Lease
	var out []*ClaimedDelivery
	err = db.withTx(ctx, func(tx *Tx) error {
		out = out[:0]
		for _, id := range ids {
			c := &ClaimedDelivery{ID: id}
			var headers string
			var timeout int
			var created int64
			err := tx.QueryRow(`SELECT d.webhook_id, d.event, d.payload, d.created_at, d.attempts, w.url, w.secret, w.headers,
					w.timeout_seconds, w.max_retries
				FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
				WHERE d.id = ? AND d.status = 'pending' AND d.next_attempt_at <= ?
					AND (d.claimed_until IS NULL OR d.claimed_until <= ?) AND w.status = 'ACTIVE'`, id, t, t).
				Scan(&c.WebhookID, &c.Event, &c.Payload, &created, &c.Attempt, &c.URL, &c.Secret, &headers, &timeout, &c.MaxRetries)
			if errors.Is(err, sql.ErrNoRows) {
				continue // claimed, redelivered or disabled since the read
			} else if err != nil {
				return err
			}
			c.Attempt++
			c.CreatedAt = fromMS(created)
			c.Timeout = time.Duration(timeout) * time.Second
			c.Claim = t + (c.Timeout + lease).Milliseconds()
			if err := json.Unmarshal([]byte(headers), &c.Headers); err != nil {
				return err
			}
			if _, err := tx.Exec(`UPDATE webhook_deliveries SET claimed_until = ? WHERE id = ?`, c.Claim, id); err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// dueDeliveries picks up to limit claimable deliveries in due order, at
// most per for each webhook (count holds those in flight already). It reads
// the due index in pages that leave out webhooks at their cap, so a large
// backlog of a slow receiver is skipped inside SQLite rather than row by
// row here, and continues after the last row seen when a webhook fills up
// mid-page.
func (db *DB) dueDeliveries(ctx context.Context, t int64, limit, per int, count map[int64]int, capped []int64) ([]int64, error) {
	var ids []int64
	page := limit * per
	afterAt, afterID := int64(-1<<63), int64(0)
	for len(ids) < limit {
		q := `SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
			JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.next_attempt_at, d.id) > (?, ?)
				AND (d.claimed_until IS NULL OR d.claimed_until <= ?) AND w.status = 'ACTIVE'`
		args := []any{t, afterAt, afterID, t}
		if len(capped) > 0 {
			q += ` AND d.webhook_id NOT IN (?` + strings.Repeat(`, ?`, len(capped)-1) + `)`
			for _, h := range capped {
				args = append(args, h)
			}
		}
		rows, err := db.read.QueryContext(ctx, q+` ORDER BY d.next_attempt_at, d.id LIMIT ?`, append(args, page)...)
		if err != nil {
			return nil, err
		}
		n, filled := 0, false
		for len(ids) < limit && rows.Next() {
			var id, hook int64
			if err := rows.Scan(&id, &hook, &afterAt); err != nil {
				rows.Close()
				return nil, err
			}
			n, afterID = n+1, id
			if count[hook] >= per {
				continue
			}
			if count[hook]++; count[hook] >= per {
				capped, filled = append(capped, hook), true
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		// A short page means the due rows are exhausted; a full page in
		// which no webhook filled up was all claimed.
		if n < page || !filled {
			break
		}
	}
	return ids, nil
}

// ReleaseDelivery gives up a claim without recording an attempt (the
// dispatcher is shutting down), so a restart sends it at once instead of
// waiting for the lease to expire.
func (db *DB) ReleaseDelivery(ctx context.Context, c *ClaimedDelivery) error {
	return db.withTx(ctx, func(tx *Tx) error {
		_, err := tx.Exec(`UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = ? AND claimed_until = ?`, c.ID, c.Claim)
		return err
	})
}

// NextDeliveryDue returns the earliest retry due after now, so the
// dispatcher can sleep exactly until then. It reads the due index only:
// expiring leases of a crashed process are found by the dispatcher's poll.
func (db *DB) NextDeliveryDue(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var next sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT MIN(next_attempt_at) FROM webhook_deliveries
		WHERE status = 'pending' AND next_attempt_at > ?`, ms(now)).Scan(&next)
	if err != nil || !next.Valid {
		return time.Time{}, false, err
	}
	return fromMS(next.Int64), true, nil
}

// AttemptResult is the outcome of one HTTP attempt. Status is the response
// status, 0 when none arrived; Err describes a failure without a response
// and must not contain the webhook's secret.
type AttemptResult struct {
	At       time.Time
	Duration time.Duration
	Status   int
	Err      string
}

// OK reports whether the receiver accepted the delivery (a 2xx answer).
func (r AttemptResult) OK() bool { return r.Err == "" && r.Status >= 200 && r.Status < 300 }

// RetryDelay is the wait before retry k (1-based): base * 2^(k-1).
func RetryDelay(base time.Duration, k int) time.Duration {
	if k < 1 {
		k = 1
	}
	d := base
	for i := 1; i < k && d < 365*24*time.Hour; i++ {
		d *= 2
	}
	return d
}

// RecordAttempt stores the outcome of an attempt in one transaction: the
// attempt row, the webhook's counters (FAILED once WebhookFailureThreshold
// attempts in a row have failed), and, if the claim is still held, the
// delivery's new state: succeeded; pending with the next retry due at
// retryBase * 2^(k-1) after this failure; or failed once maxRetries
// retries are spent. A delivery deleted meanwhile is ignored.
//
// It goes through the group commit, so the attempts of many workers share
// a commit.
func (db *DB) RecordAttempt(ctx context.Context, c *ClaimedDelivery, res AttemptResult, retryBase time.Duration) error {
	var status any
	if res.Status != 0 {
		status = res.Status
	}
	var msg any
	if res.Err != "" {
		m := res.Err
		if c.Secret != "" {
			m = strings.ReplaceAll(m, c.Secret, "[secret]")
		}
		if len(m) > maxWebhookAttemptErrorLen {
			m = strings.ToValidUTF8(m[:maxWebhookAttemptErrorLen], "")
		}
		msg = m
	}
	ok := res.OK()
	return db.batch.do(ctx, func(tx *Tx) error {
		var attempts, maxRetries int
		var claim sql.NullInt64
		err := tx.QueryRow(`SELECT d.attempts, d.claimed_until, w.max_retries FROM webhook_deliveries d
			JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = ?`, c.ID).Scan(&attempts, &claim, &maxRetries)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO webhook_attempts (delivery_id, at, response_status, error, duration_ms) VALUES (?, ?, ?, ?, ?)`,
			c.ID, ms(res.At), status, msg, res.Duration.Milliseconds()); err != nil {
			return err
		}
		var hookStatus string
		if ok {
			err = tx.QueryRow(`UPDATE webhooks SET consecutive_failures = 0, total_successes = total_successes + 1
				WHERE id = ? RETURNING status`, c.WebhookID).Scan(&hookStatus)
		} else {
			err = tx.QueryRow(`UPDATE webhooks SET consecutive_failures = consecutive_failures + 1, total_failures = total_failures + 1,
				status = CASE WHEN consecutive_failures + 1 >= ? THEN 'FAILED' ELSE status END WHERE id = ? RETURNING status`,
				WebhookFailureThreshold, c.WebhookID).Scan(&hookStatus)
		}
		if err != nil {
			return err
		}
		if hookStatus == WebhookFailed {
			if err := tx.parkDeliveries(c.WebhookID); err != nil {
				return err
			}
		}
		if !claim.Valid || claim.Int64 != c.Claim {
			// The lease expired and another claim owns the delivery now.
			return nil
		}
		attempts++
		switch {
		case ok:
			_, err = tx.Exec(`UPDATE webhook_deliveries SET status = 'succeeded', attempts = ?, next_attempt_at = NULL, claimed_until = NULL WHERE id = ?`,
				attempts, c.ID)
		case attempts <= maxRetries:
			var next any
			if hookStatus == WebhookActive {
				next = ms(tx.now.Add(RetryDelay(retryBase, attempts)))
			}
			_, err = tx.Exec(`UPDATE webhook_deliveries SET attempts = ?, next_attempt_at = ?, claimed_until = NULL WHERE id = ?`,
				attempts, next, c.ID)
		default:
			_, err = tx.Exec(`UPDATE webhook_deliveries SET status = 'failed', attempts = ?, next_attempt_at = NULL, claimed_until = NULL WHERE id = ?`,
				attempts, c.ID)
		}
		return err
	})
}
