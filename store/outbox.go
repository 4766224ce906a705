package store

// The outbox is the webhook delivery queue, from emit to record: a change
// queues its deliveries in its own transaction (emit, SendTestDelivery,
// RedeliverDelivery); the dispatcher claims due ones under a lease
// (ClaimDueDeliveries), sends them with no database access, and records
// each attempt (RecordAttempts), which settles the delivery, schedules its
// retry (RetryDelay) or gives up, and fails the webhook after too many
// failures in a row (parkDeliveries). A shutdown releases unsent claims
// (ReleaseDeliveries); NextDeliveryDue tells the dispatcher how long it may
// sleep.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"service/jsonjs"
)

// emit queues a delivery of event to every ACTIVE webhook of the app that
// subscribes to it, inside the caller's transaction: the change and its
// deliveries commit together or not at all (a transactional outbox).
func (tx *Tx) emit(appID int64, event string, data any) error {
	rows, err := tx.query(`SELECT id, events FROM webhooks WHERE app_id = ? AND status = 'ACTIVE'`, appID)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var kinds string
		if err := rows.Scan(&id, &kinds); err != nil {
			rows.Close()
			return err
		}
		var list []string
		_ = json.Unmarshal([]byte(kinds), &list)
		if slices.Contains(list, event) || slices.Contains(list, "*") {
			ids = append(ids, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return err
	}
	payload, err := jsonjs.Stringify(data)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.exec(`INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?)`,
			id, event, payload, ms(tx.now), ms(tx.now)); err != nil {
			return err
		}
	}
	tx.enqueued = true
	return nil
}

// parkDeliveries unschedules the pending deliveries of a FAILED webhook
// that are not being sent right now: they wait, with no nextAttemptAt, until
// the webhook is re-enabled, and cost the dispatcher nothing meanwhile.
func (tx *Tx) parkDeliveries(hookID int64) error {
	_, err := tx.exec(`UPDATE webhook_deliveries SET next_attempt_at = NULL
		WHERE webhook_id = ? AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= ?)`, hookID, ms(tx.now))
	return err
}

// RedeliverDelivery queues a delivery again under the same id: it becomes
// pending, due now, with a fresh retry budget. A delivery being sent at
// this moment keeps its claim, and that attempt counts as the first of the
// new round.
func (db *DB) RedeliverDelivery(ctx context.Context, appID, webhookID, id int64) (*Delivery, error) {
	err := db.withTx(ctx, func(tx *Tx) error {
		// A FAILED webhook's delivery waits, unscheduled, like its others.
		res, err := tx.exec(`UPDATE webhook_deliveries SET status = 'pending', attempts = 0,
				next_attempt_at = CASE WHEN (SELECT status FROM webhooks WHERE id = ?) = 'ACTIVE' THEN CAST(? AS BIGINT) END
			WHERE id = ? AND webhook_id = ? AND webhook_id IN (SELECT id FROM webhooks WHERE app_id = ?)`,
			webhookID, ms(tx.now), id, webhookID, appID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("delivery")
		}
		tx.enqueued = true
		w, err := tx.findWebhook(appID, webhookID)
		if err != nil {
			return err
		}
		var event string
		if err := tx.queryRow(`SELECT event FROM webhook_deliveries WHERE id = ?`, id).Scan(&event); err != nil {
			return err
		}
		return tx.audit(auditRecord{app: appID, action: "webhook.redelivered", objType: ObjectWebhook, objID: webhookID, objName: w.URL,
			after: deliveryFields{id, event}})
	})
	if err != nil {
		return nil, err
	}
	return db.FindDeliveryByID(ctx, appID, webhookID, id)
}

// deliveryFields are what the audit log says of a delivery queued by hand.
type deliveryFields struct {
	DeliveryID int64  `json:"deliveryId"`
	Event      string `json:"event"`
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
		w, err := tx.findWebhook(appID, webhookID)
		if err != nil {
			return err
		}
		status := w.Status
		payload, err := jsonjs.Stringify(webhookTest{webhookID, WebhookTestMessage, NewTime(tx.now)})
		if err != nil {
			return err
		}
		var next any
		if status == WebhookActive {
			next = ms(tx.now)
		}
		newID, err := tx.insertID(`INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?)`,
			webhookID, EventWebhookTest, payload, ms(tx.now), next)
		if err != nil {
			return err
		}
		id = newID
		tx.enqueued = true
		return tx.audit(auditRecord{app: appID, action: "webhook.test_sent", objType: ObjectWebhook, objID: webhookID, objName: w.URL,
			after: deliveryFields{id, EventWebhookTest}})
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
	ID        int64
	WebhookID int64
	Event     string
	Payload   []byte
	CreatedAt time.Time
	URL       string
	Secret    string
	// PreviousSecret is the secret replaced by a rotation whose grace
	// period had not ended when the delivery was claimed, or "".
	PreviousSecret string
	Headers        map[string]string
	Timeout        time.Duration
	MaxRetries     int
	// Attempt is the 1-based number of this attempt within the current
	// round (since queued or last redelivered).
	Attempt int
	// Claim identifies this claim (it is the lease's expiry in ms), with
	// Holder: RecordAttempt changes the delivery only while it still holds
	// it.
	Claim int64
	// Holder names the process that holds the claim: on PostgreSQL the
	// key of its presence lock, 0 on SQLite.
	Holder int64
	// Live ends once the claim can no longer be recorded because another
	// process may take it back (this process lost its presence session);
	// a send under it is cut short then. On SQLite it never ends.
	Live context.Context
	// SecretErr is why the stored secret could not be decrypted (its key
	// is not configured); Secret is then empty, and the delivery must not
	// be sent unsigned.
	SecretErr error
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
	holder, live, err := db.eng.presence(ctx)
	if err != nil {
		return nil, err
	}
	t := ms(now)
	if err := db.eng.reapClaims(ctx, now, holder); err != nil {
		return nil, err
	}
	count := make(map[int64]int, len(o.InFlight)+1)
	var capped []int64
	for k, v := range o.InFlight {
		count[k] = v
		if v >= o.capOf(k) {
			capped = append(capped, k)
		}
	}
	cands, err := db.dueDeliveries(ctx, t, &o, count, capped)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	order := make(map[int64]int, len(cands))
	for i, c := range cands {
		order[c.id] = i
	}
	var out []*ClaimedDelivery
	claim := func(tx *Tx) error {
		out = out[:0]
		ids, err := tx.db.eng.capClaims(tx, cands, &o, t, holder)
		if err != nil || len(ids) == 0 {
			return err
		}
		// The unindexed columns keep SQLite on the id list rather than the
		// due index, which would walk the whole backlog. Rows gone,
		// claimed, redelivered or disabled since the read are simply not
		// returned, nor, on PostgreSQL, rows another process is claiming
		// at this moment (SKIP LOCKED): it gets them, and this claim goes
		// on without waiting.
		rows, err := tx.query(`UPDATE webhook_deliveries
			SET claimed_until = CAST(? AS BIGINT) + CAST(? AS BIGINT) + (SELECT w.timeout_seconds * 1000 FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id),
				claimed_by = ?
			WHERE id IN (SELECT d.id FROM webhook_deliveries d
					WHERE d.id IN (`+tx.db.eng.jsonIDs()+`) AND `+tx.db.eng.unindexed()+`d.status = 'pending' AND `+tx.db.eng.unindexed()+`d.next_attempt_at <= ?
						AND (d.claimed_until IS NULL OR d.claimed_until <= ?)`+tx.db.eng.skipLocked()+`)
				AND (SELECT w.status FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id) = 'ACTIVE'
			RETURNING id, webhook_id, event, payload, created_at, attempts, claimed_until`,
			t, o.Lease.Milliseconds(), nullID(holder), jsonIDs(ids), t, t)
		if err != nil {
			return err
		}
		byHook := map[int64][]*ClaimedDelivery{}
		for rows.Next() {
			c := &ClaimedDelivery{Holder: holder, Live: live}
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
		// The previous secret is read only while its grace period lasts, so
		// after it the dispatcher cannot sign with it even by mistake.
		rows, err = tx.query(`SELECT id, url, secret, headers, timeout_seconds, max_retries,
				CASE WHEN previous_secret_expires_at > ? THEN previous_secret ELSE '' END
			FROM webhooks WHERE id IN (`+tx.db.eng.jsonIDs()+`)`, ms(tx.now), jsonIDs(hooks))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var url, secret, headers, previous string
			var timeout, retries int
			if err := rows.Scan(&id, &url, &secret, &headers, &timeout, &retries, &previous); err != nil {
				return err
			}
			var h map[string]string
			if err := json.Unmarshal([]byte(headers), &h); err != nil {
				return err
			}
			secret, serr := tx.db.openSecret(secret)
			previous, perr := tx.db.openSecret(previous)
			serr = errors.Join(serr, perr)
			for _, c := range byHook[id] {
				c.URL, c.Secret, c.PreviousSecret, c.SecretErr, c.Headers, c.MaxRetries = url, secret, previous, serr, h, retries
				c.Timeout = time.Duration(timeout) * time.Second
			}
		}
		return rows.Err()
	}
	if err := db.eng.runClaim(ctx, claim); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *ClaimedDelivery) int { return order[a.ID] - order[b.ID] })
	return out, nil
}

// dueCandidate is a delivery dueDeliveries found claimable.
type dueCandidate struct{ id, hook int64 }

// duePageRows is the most rows one read of the due index returns. The
// statement carries it as a literal (duePage) because a bound LIMIT makes
// SQLite plan the statement anew at every run; rows are stepped only while
// needed, so a large page costs nothing when the first rows suffice.
const duePageRows = 512

var duePage = strconv.Itoa(duePageRows)

// dueDeliveries picks up to o.Limit claimable deliveries in due order, at
// most o.capOf(hook) for each webhook (count holds those in flight
// already). It reads the due index in pages that leave out webhooks at
// their cap, so a large backlog of a slow receiver is skipped inside SQLite
// rather than row by row here, and continues after the last row seen when
// a webhook fills up mid-page.
func (db *DB) dueDeliveries(ctx context.Context, t int64, o *ClaimOptions, count map[int64]int, capped []int64) ([]dueCandidate, error) {
	var ids []dueCandidate
	afterAt, afterID := int64(-1<<63), int64(0)
	for len(ids) < o.Limit {
		rows, err := db.reader(ctx).query(`SELECT d.id, d.webhook_id, d.next_attempt_at FROM webhook_deliveries d
			JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.next_attempt_at, d.id) > (?, ?)
				AND (d.claimed_until IS NULL OR d.claimed_until <= ?) AND w.status = 'ACTIVE'
				AND d.webhook_id NOT IN (`+db.eng.jsonIDs()+`)
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
			ids = append(ids, dueCandidate{id, hook})
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
			if _, err := tx.exec(`UPDATE webhook_deliveries SET claimed_until = NULL, claimed_by = NULL
				WHERE id = ? AND claimed_until = ? AND COALESCE(claimed_by, 0) = ?`, c.ID, c.Claim, c.Holder); err != nil {
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
//
// Blocked marks an attempt the network policy refused before any
// connection: it settles the delivery as failed at once, with no retry, and
// does not count against the webhook, whose receiver was never asked.
type AttemptResult struct {
	At       time.Time
	Duration time.Duration
	Status   int
	Err      string
	Blocked  bool
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
	var wins [][3]int64
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
			for _, secret := range []string{o.Claim.Secret, o.Claim.PreviousSecret} {
				if len(secret) >= 8 {
					m = strings.ReplaceAll(m, secret, "[secret]")
				}
			}
			if len(m) > maxWebhookAttemptErrorLen {
				m = strings.ToValidUTF8(m[:maxWebhookAttemptErrorLen], "")
			}
			msg = m
		}
		rows[i] = []any{o.Claim.ID, ms(o.Result.At), status, msg, o.Result.Duration.Milliseconds()}
		if o.Result.OK() {
			wins = append(wins, [3]int64{o.Claim.ID, o.Claim.Claim, o.Claim.Holder})
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
			SELECT CAST(j.value ->> 0 AS BIGINT), CAST(j.value ->> 1 AS BIGINT), CAST(j.value ->> 2 AS BIGINT), j.value ->> 3, CAST(j.value ->> 4 AS BIGINT)
			FROM `+tx.db.eng.jsonEach()+`
			WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = CAST(j.value ->> 0 AS BIGINT)) ORDER BY j.key
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
					next_attempt_at = NULL, claimed_until = NULL, claimed_by = NULL
				FROM (SELECT CAST(j.value ->> 0 AS BIGINT) AS id, CAST(j.value ->> 1 AS BIGINT) AS claim, CAST(j.value ->> 2 AS BIGINT) AS holder FROM `+tx.db.eng.jsonEach()+`) AS s
				WHERE d.id = s.id AND d.claimed_until = s.claim AND COALESCE(d.claimed_by, 0) = s.holder`, string(winRows)); err != nil {
				return err
			}
		}
		// What this call's attempts do to each webhook's counters, in
		// attempt order: successes and failures to add; the run of
		// failures in a row, either added to the stored one or, after a
		// success, replacing it; and the longest run that began after a
		// success, which fails the webhook if it reached the threshold
		// even though a later success ended it.
		type tally struct {
			successes, failures int
			reset               bool
			run, pre, peak      int
		}
		hooks := map[int64]*tally{}
		var order []int64
		for _, o := range list {
			c := o.Claim
			if !exists[c.ID] {
				continue
			}
			h := hooks[c.WebhookID]
			if h == nil {
				h = &tally{}
				hooks[c.WebhookID] = h
				order = append(order, c.WebhookID)
			}
			switch {
			case o.Result.OK():
				h.successes, h.reset, h.run = h.successes+1, true, 0
			case !o.Result.Blocked:
				h.failures, h.run = h.failures+1, h.run+1
				if h.reset {
					h.peak = max(h.peak, h.run)
				} else {
					h.pre = h.run
				}
			}
		}
		// Each webhook is updated by one statement that adds to what is
		// stored, never writes back what was read: attempts recorded by
		// other processes at the same time all count. Rows are taken in id
		// order, so two recorders cannot deadlock.
		slices.Sort(order)
		type state struct {
			status  string
			retries int
		}
		after := make(map[int64]state, len(order))
		for _, id := range order {
			h := hooks[id]
			var st state
			if err := tx.queryRow(`UPDATE webhooks SET
					consecutive_failures = CASE WHEN ? THEN 0 ELSE consecutive_failures END + ?,
					total_successes = total_successes + ?, total_failures = total_failures + ?,
					status = CASE WHEN consecutive_failures + CAST(? AS BIGINT) >= CAST(? AS BIGINT) OR CAST(? AS BIGINT) >= CAST(? AS BIGINT) THEN 'FAILED' ELSE status END
				WHERE id = ? RETURNING status, max_retries`,
				h.reset, h.run, h.successes, h.failures, h.pre, WebhookFailureThreshold, h.peak, WebhookFailureThreshold, id).Scan(&st.status, &st.retries); err != nil {
				return err
			}
			after[id] = st
		}
		for _, o := range list {
			c := o.Claim
			if !exists[c.ID] || o.Result.OK() {
				continue
			}
			st := after[c.WebhookID]
			// Counted only while the claim holds: once its lease expired,
			// or its holder's session ended, another claim owns the
			// delivery.
			var attempts int
			err := tx.queryRow(`UPDATE webhook_deliveries SET attempts = attempts + 1
				WHERE id = ? AND claimed_until = ? AND COALESCE(claimed_by, 0) = ? RETURNING attempts`,
				c.ID, c.Claim, c.Holder).Scan(&attempts)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			// A blocked attempt would be blocked again: no retry. A FAILED
			// webhook's retry waits, unscheduled, until it is re-enabled.
			if attempts <= st.retries && !o.Result.Blocked {
				var next any
				if st.status == WebhookActive {
					next = ms(tx.now.Add(RetryDelay(retryBase, attempts)))
				}
				_, err = tx.exec(`UPDATE webhook_deliveries SET next_attempt_at = ?, claimed_until = NULL, claimed_by = NULL WHERE id = ?`, next, c.ID)
			} else {
				_, err = tx.exec(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, claimed_until = NULL, claimed_by = NULL WHERE id = ?`, c.ID)
			}
			if err != nil {
				return err
			}
		}
		for _, id := range order {
			// Parking last also catches the deliveries this call released
			// before the webhook failed, as recording one by one would.
			if after[id].status == WebhookFailed {
				if err := tx.parkDeliveries(id); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
