package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"service/store"
)

// eventBatchItem is one event's answer in a batch: the single route's
// answer when it was stored (or was a duplicate), else the error it would
// have had, with field paths that name the event (events[3].eventId).
type eventBatchItem struct {
	Success   bool         `json:"success"`
	ID        int64        `json:"id,omitempty"`
	EventID   string       `json:"eventId,omitempty"`
	Timestamp *store.Time  `json:"timestamp,omitempty"`
	Duplicate bool         `json:"duplicate,omitempty"`
	Error     *errorFields `json:"error,omitempty"`
}

type eventBatchAnswer struct {
	Data     []eventBatchItem `json:"data"`
	Accepted int              `json:"accepted"`
	Rejected int              `json:"rejected"`
}

// handleEventBatch logs up to store.MaxEventBatch events in one
// transaction. An invalid event is answered with its error in its place and
// does not stop the valid ones: a client that drops what is refused (4xx is
// never retried) would otherwise lose a whole batch to one bad event.
func (s *Server) handleEventBatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Events json.RawMessage `json:"events"`
	}
	if !decodeJSON(w, r, &body) {
		return
	}
	var raws []json.RawMessage
	if t := bytes.TrimSpace(body.Events); len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &raws) != nil {
		fieldError(w, "events", "must be an array of events")
		return
	}
	if len(raws) == 0 {
		fieldError(w, "events", "must contain at least one event")
		return
	}
	if len(raws) > store.MaxEventBatch {
		fieldError(w, "events", "must contain at most "+strconv.Itoa(store.MaxEventBatch)+" events")
		return
	}
	items := make([]eventBatchItem, len(raws))
	var valid []*store.EventInput
	var at []int // index in items of each valid event
	for i, raw := range raws {
		in, fields := decodeBatchEvent(raw, "events["+strconv.Itoa(i)+"]")
		if fields != nil {
			items[i].Error = &errorFields{"INVALID_REQUEST", "event has invalid fields", map[string]any{"fields": fields}}
			continue
		}
		valid, at = append(valid, in), append(at, i)
	}
	res, err := s.DB.LogEvents(r.Context(), appID(r), valid)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := eventBatchAnswer{Data: items, Rejected: len(raws) - len(valid), Accepted: len(valid)}
	for j, rs := range res {
		ts := rs.Timestamp
		items[at[j]] = eventBatchItem{Success: true, ID: rs.ID, EventID: rs.EventID, Timestamp: &ts, Duplicate: rs.Duplicate}
	}
	writeJSON(w, http.StatusOK, out)
}

// decodeBatchEvent decodes and validates one event of a batch; on failure
// it returns the bad fields under prefix.
func decodeBatchEvent(raw json.RawMessage, prefix string) (*store.EventInput, map[string]any) {
	in := &store.EventInput{}
	// The single event route's decoder, so both name the same bad fields.
	if fields := decodeItem(raw, prefix, in, "an event object"); fields != nil {
		return nil, fields
	}
	return in, nil
}

// decodeItem decodes one object of a batch into dst and validates it; on
// failure it returns the bad fields under prefix, what naming the object
// expected when no field is to blame.
func decodeItem(raw json.RawMessage, prefix string, dst interface{ Validate() error }, what string) map[string]any {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return map[string]any{prefix: "must be an object"}
	}
	if msg, bad := decodeFields(raw, dst, true); msg != "" {
		fields := map[string]any{}
		for k, v := range bad {
			fields[prefix+"."+k] = v
		}
		if len(fields) == 0 {
			fields[prefix] = "must be " + what
		}
		return fields
	}
	if err := dst.Validate(); err != nil {
		fields := map[string]any{}
		var e *store.Error
		if errors.As(err, &e) {
			if f, ok := e.Details["fields"].(map[string]any); ok {
				for k, v := range f {
					fields[prefix+"."+k] = v
				}
			}
		}
		if len(fields) == 0 {
			fields[prefix] = err.Error()
		}
		return fields
	}
	return nil
}
