package store

import (
	"encoding/json"
	"slices"
	"strings"

	"service/jsonjs"
)

// Webhook event kinds.
const (
	EventCampaignStarted   = "campaign.started"
	EventCampaignPaused    = "campaign.paused"
	EventCampaignCompleted = "campaign.completed"
	EventWinnerDeclared    = "campaign.winner_declared"
	EventContentPublished  = "content.published"
	EventContentUnpublish  = "content.unpublished"
	EventFormSubmitted     = "form.submitted"
	EventWebhookTest       = "webhook.test"
)

// EventKinds lists the kinds a webhook can subscribe to.
var EventKinds = []string{EventCampaignStarted, EventCampaignPaused, EventCampaignCompleted,
	EventWinnerDeclared, EventContentPublished, EventContentUnpublish, EventFormSubmitted}

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

// emit queues a delivery of event to every ACTIVE webhook of the app that
// subscribes to it, inside the caller's transaction: the change and its
// deliveries commit together or not at all (a transactional outbox).
func (tx *Tx) emit(appID int64, event string, data any) error {
	rows, err := tx.Query(`SELECT id, events FROM webhooks WHERE app_id = ? AND status = 'ACTIVE'`, appID)
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
		if _, err := tx.Exec(`INSERT INTO webhook_deliveries (webhook_id, event, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?)`,
			id, event, payload, ms(tx.now), ms(tx.now)); err != nil {
			return err
		}
	}
	tx.enqueued = true
	return nil
}
