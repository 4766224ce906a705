package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
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
	return findPage(ctx, db, "webhooks", webhookColumns, "app_id = ?", []any{appID}, o, scanWebhook)
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
	_, err := tx.exec(`UPDATE webhook_deliveries SET next_attempt_at = NULL
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
	list, p, err := findPage(ctx, db, "webhook_deliveries d", deliveryColumns, where, args, o, scanDelivery)
	if err != nil {
		return nil, Pagination{}, err
	}
	if err := deliveryAttempts(ctx, db.read, list); err != nil {
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
// Deliveries of one webhook claimed together share their Headers map: it
// is read-only.
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

// LeaseExpiry is when the claim lapses and the delivery becomes claimable
// again: an attempt must end, and be recorded, before then.
func (c *ClaimedDelivery) LeaseExpiry() time.Time { return fromMS(c.Claim) }

// ClaimOptions bounds one claim.
type ClaimOptions struct {
	// Limit is the most deliveries to claim.
	Limit int
	// PerWebhook is the most deliveries of one webhook held at once,
	// counting InFlight, so a slow receiver cannot take every worker.
	PerWebhook int
	// Caps overrides PerWebhook for the webhooks it lists.
	Caps map[int64]int
	// InFlight is the caller's count of claims it holds per webhook.
	InFlight map[int64]int
	// Lease is how long a claim outlives the webhook's timeout.
	Lease time.Duration
}

func (o *ClaimOptions) capOf(hook int64) int {
	if c, ok := o.Caps[hook]; ok {
		return max(c, 1)
	}
	return max(o.PerWebhook, 1)
}

// jsonIDs renders ids as a JSON array, so that one constant (and so
// prepared) statement takes a list of any length through json_each.
func jsonIDs(ids []int64) string {
	b := make([]byte, 0, 2+len(ids)*8)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// whReadRows runs a query of constant text on the reader pool through a
// prepared statement.
func (db *DB) whReadRows(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := db.rstmts.get(q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.read.QueryContext(ctx, q, args...)
}

// ClaimDueDeliveries claims pending deliveries of ACTIVE webhooks that are
// due at now, oldest first, within the bounds of o. Each claim is a lease
// until now + the webhook's timeout + o.Lease: if the process dies
// mid-send, the delivery is claimable again once the lease has expired, so
// a restart resumes it.
//
// A read on the reader pool finds the candidates first, so the frequent
// looks that find nothing never take the write lock from API writes; the
// claim itself is one conditional UPDATE of them all, and one read of
// their webhooks, in one write transaction.
func (db *DB) ClaimDueDeliveries(ctx context.Context, now time.Time, o ClaimOptions) ([]*ClaimedDelivery, error) {
	if o.Limit < 1 {
		return nil, nil
	}
	t := ms(now)
	count := make(map[int64]int, len(o.InFlight)+1)
	var capped []int64
	for k, v := range o.InFlight {
		count[k] = v
		if v >= o.capOf(k) {
			capped = append(capped, k)
		}
	}
	ids, err := db.dueDeliveries(ctx, t, &o, count, capped)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	order := make(map[int64]int, len(ids))
	for i, id := range ids {
		order[id] = i
	}
	var out []*ClaimedDelivery
	// Through the group commit, the claim shares a commit with the
	// attempts being recorded instead of waiting for them.
	err = db.batch.do(ctx, func(tx *Tx) error {
		out = out[:0]
		// The unary pluses keep SQLite on the id list rather than the due
		// index, which would walk the whole backlog. Rows gone, claimed,
		// redelivered or disabled since the read are simply not returned.
		rows, err := tx.query(`UPDATE webhook_deliveries
			SET claimed_until = ? + ? + (SELECT w.timeout_seconds * 1000 FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id)
			WHERE id IN (SELECT value FROM json_each(?)) AND +status = 'pending' AND +next_attempt_at <= ?
				AND (claimed_until IS NULL OR claimed_until <= ?)
				AND (SELECT w.status FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id) = 'ACTIVE'
			RETURNING id, webhook_id, event, payload, created_at, attempts, claimed_until`,
			t, o.Lease.Milliseconds(), jsonIDs(ids), t, t)
		if err != nil {
			return err
		}
		byHook := map[int64][]*ClaimedDelivery{}
		for rows.Next() {
			c := &ClaimedDelivery{}
			var created int64
			if err := rows.Scan(&c.ID, &c.WebhookID, &c.Event, &c.Payload, &created, &c.Attempt, &c.Claim); err != nil {
				rows.Close()
				return err
			}
			c.Attempt++
			c.CreatedAt = fromMS(created)
			out = append(out, c)
			byHook[c.WebhookID] = append(byHook[c.WebhookID], c)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(out) == 0 {
			return err
		}
		hooks := make([]int64, 0, len(byHook))
		for h := range byHook {
			hooks = append(hooks, h)
		}
		rows, err = tx.query(`SELECT id, url, secret, headers, timeout_seconds, max_retries FROM webhooks
			WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(hooks))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var url, secret, headers string
			var timeout, retries int
			if err := rows.Scan(&id, &url, &secret, &headers, &timeout, &retries); err != nil {
				return err
			}
			var h map[string]string
			if err := json.Unmarshal([]byte(headers), &h); err != nil {
				return err
			}
			for _, c := range byHook[id] {
				c.URL, c.Secret, c.Headers, c.MaxRetries = url, secret, h, retries
				c.Timeout = time.Duration(timeout) * time.Second
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *ClaimedDelivery) int { return order[a.ID] - order[b.ID] })
	return out, nil
}

// duePage is the most rows one read of the due index returns. It is a
// literal because a bound LIMIT makes SQLite plan the statement anew at
// every run; rows are stepped only while needed, so a large page costs
// nothing when the first rows suffice.
const (
	duePage     = "512"
	duePageRows = 512
)

// dueDeliveries picks up to o.Limit claimable deliveries in due order, at
// most o.capOf(hook) for each webhook (count holds those in flight
// already). It reads the due index in pages that leave out webhooks at
// their cap, so a large backlog of a slow receiver is skipped inside SQLite
// rather than row by row here, and continues after the last row seen when
// a webhook fills up mid-page.
func (db *DB) dueDeliveries(ctx context.Context, t int64, o *ClaimOptions, count map[int64]int, capped []int64) ([]int64, error) {
	var ids []int64
	afterAt, afterID := int64(-1<<63), int64(0)
	for len(ids) < o.Limit {
		rows, err := db.whReadRows(ctx, `SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
			JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.next_attempt_at, d.id) > (?, ?)
				AND (d.claimed_until IS NULL OR d.claimed_until <= ?) AND w.status = 'ACTIVE'
				AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
			ORDER BY d.next_attempt_at, d.id LIMIT `+duePage, t, afterAt, afterID, t, jsonIDs(capped))
		if err != nil {
			return nil, err
		}
		n, filled := 0, false
		for len(ids) < o.Limit && rows.Next() {
			var id, hook int64
			if err := rows.Scan(&id, &hook, &afterAt); err != nil {
				rows.Close()
				return nil, err
			}
			n, afterID = n+1, id
			limit := o.capOf(hook)
			if count[hook] >= limit {
				continue
			}
			if count[hook]++; count[hook] >= limit {
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
		if n < duePageRows || !filled {
			break
		}
	}
	return ids, nil
}

// ReleaseDelivery gives up a claim without recording an attempt (the
// dispatcher is shutting down), so a restart sends it at once instead of
// waiting for the lease to expire.
func (db *DB) ReleaseDelivery(ctx context.Context, c *ClaimedDelivery) error {
	return db.ReleaseDeliveries(ctx, []*ClaimedDelivery{c})
}

// ReleaseDeliveries releases many claims in one transaction.
func (db *DB) ReleaseDeliveries(ctx context.Context, list []*ClaimedDelivery) error {
	if len(list) == 0 {
		return nil
	}
	return db.withTx(ctx, func(tx *Tx) error {
		for _, c := range list {
			if _, err := tx.exec(`UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = ? AND claimed_until = ?`, c.ID, c.Claim); err != nil {
				return err
			}
		}
		return nil
	})
}

// NextDeliveryDue returns the earliest retry due after now, so the
// dispatcher can sleep exactly until then. It reads the due index only:
// expiring leases of a crashed process are found by the dispatcher's poll.
func (db *DB) NextDeliveryDue(ctx context.Context, now time.Time) (time.Time, bool, error) {
	var next sql.NullInt64
	err := db.readRow(ctx, `SELECT MIN(next_attempt_at) FROM webhook_deliveries
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

// AttemptOutcome is one attempt to record: the claim it was made under and
// what happened.
type AttemptOutcome struct {
	Claim  *ClaimedDelivery
	Result AttemptResult
}

// RecordAttempt stores the outcome of one attempt; see RecordAttempts.
func (db *DB) RecordAttempt(ctx context.Context, c *ClaimedDelivery, res AttemptResult, retryBase time.Duration) error {
	return db.RecordAttempts(ctx, []AttemptOutcome{{c, res}}, retryBase)
}

// RecordAttempts stores the outcomes of attempts, in order, in one
// transaction. For each: the attempt row, the webhook's counters (FAILED
// once WebhookFailureThreshold attempts in a row have failed), and, if the
// claim is still held, the delivery's new state: succeeded; pending with
// the next retry due at retryBase * 2^(k-1) after this failure; or failed
// once maxRetries retries are spent. A delivery deleted meanwhile is
// ignored.
//
// It goes through the group commit, so the attempts of many workers share
// a commit; each webhook's counters are written once per call.
func (db *DB) RecordAttempts(ctx context.Context, list []AttemptOutcome, retryBase time.Duration) error {
	if len(list) == 0 {
		return nil
	}
	// The attempt rows and the successes' deliveries are written by one
	// statement each, the rows passed as JSON: per statement, the driver
	// costs far more than SQLite's work on a row.
	rows := make([][]any, len(list))
	var wins [][2]int64
	for i, o := range list {
		var status, msg any
		if o.Result.Status != 0 {
			status = o.Result.Status
		}
		if o.Result.Err != "" {
			m := o.Result.Err
			// Defence in depth: the secret is never sent, so it can only
			// appear here by coincidence. A short one would match ordinary
			// words, mangling the message and hinting at the secret.
			if len(o.Claim.Secret) >= 8 {
				m = strings.ReplaceAll(m, o.Claim.Secret, "[secret]")
			}
			if len(m) > maxWebhookAttemptErrorLen {
				m = strings.ToValidUTF8(m[:maxWebhookAttemptErrorLen], "")
			}
			msg = m
		}
		rows[i] = []any{o.Claim.ID, ms(o.Result.At), status, msg, o.Result.Duration.Milliseconds()}
		if o.Result.OK() {
			wins = append(wins, [2]int64{o.Claim.ID, o.Claim.Claim})
		}
	}
	attemptRows, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	winRows, err := json.Marshal(wins)
	if err != nil {
		return err
	}
	return db.batch.do(ctx, func(tx *Tx) error {
		// Deliveries deleted meanwhile get no attempt row and count for
		// nothing.
		ins, err := tx.query(`INSERT INTO webhook_attempts (delivery_id, at, response_status, error, duration_ms)
			SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4 FROM json_each(?) j
			WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = j.value ->> 0) ORDER BY j.key
			RETURNING delivery_id`, string(attemptRows))
		if err != nil {
			return err
		}
		exists := make(map[int64]bool, len(list))
		for ins.Next() {
			var id int64
			if err := ins.Scan(&id); err != nil {
				ins.Close()
				return err
			}
			exists[id] = true
		}
		ins.Close()
		if err := ins.Err(); err != nil {
			return err
		}
		if len(wins) > 0 {
			// A success settles the delivery only while its claim holds.
			if _, err := tx.exec(`UPDATE webhook_deliveries AS d SET status = 'succeeded', attempts = d.attempts + 1,
					next_attempt_at = NULL, claimed_until = NULL
				FROM (SELECT j.value ->> 0 AS id, j.value ->> 1 AS claim FROM json_each(?) j) AS s
				WHERE d.id = s.id AND d.claimed_until = s.claim`, string(winRows)); err != nil {
				return err
			}
		}
		// The webhook's row as the attempts so far leave it: read once,
		// updated in memory in attempt order, written once at the end. The
		// transaction holds the write lock, so nobody changes it meanwhile.
		type tally struct {
			status               string
			consecutive, retries int
			successes, failures  int
		}
		hooks := map[int64]*tally{}
		for _, o := range list {
			c := o.Claim
			if !exists[c.ID] {
				continue
			}
			h := hooks[c.WebhookID]
			if h == nil {
				h = &tally{}
				if err := tx.queryRow(`SELECT status, consecutive_failures, max_retries FROM webhooks WHERE id = ?`, c.WebhookID).
					Scan(&h.status, &h.consecutive, &h.retries); err != nil {
					return err
				}
				hooks[c.WebhookID] = h
			}
			if o.Result.OK() {
				h.consecutive, h.successes = 0, h.successes+1
				continue
			}
			h.consecutive, h.failures = h.consecutive+1, h.failures+1
			if h.consecutive >= WebhookFailureThreshold {
				h.status = WebhookFailed
			}
			var attempts int
			var claim sql.NullInt64
			if err := tx.queryRow(`SELECT attempts, claimed_until FROM webhook_deliveries WHERE id = ?`, c.ID).Scan(&attempts, &claim); err != nil {
				return err
			}
			if !claim.Valid || claim.Int64 != c.Claim {
				// The lease expired and another claim owns the delivery now.
				continue
			}
			attempts++
			if attempts <= h.retries {
				var next any
				if h.status == WebhookActive {
					next = ms(tx.now.Add(RetryDelay(retryBase, attempts)))
				}
				_, err = tx.exec(`UPDATE webhook_deliveries SET attempts = ?, next_attempt_at = ?, claimed_until = NULL WHERE id = ?`,
					attempts, next, c.ID)
			} else {
				_, err = tx.exec(`UPDATE webhook_deliveries SET status = 'failed', attempts = ?, next_attempt_at = NULL, claimed_until = NULL WHERE id = ?`,
					attempts, c.ID)
			}
			if err != nil {
				return err
			}
		}
		for id, h := range hooks {
			if _, err := tx.exec(`UPDATE webhooks SET consecutive_failures = ?, total_successes = total_successes + ?,
				total_failures = total_failures + ?, status = ? WHERE id = ?`,
				h.consecutive, h.successes, h.failures, h.status, id); err != nil {
				return err
			}
			// Parking last also catches the deliveries this call released
			// before the webhook failed, as recording one by one would.
			if h.status == WebhookFailed {
				if err := tx.parkDeliveries(id); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
