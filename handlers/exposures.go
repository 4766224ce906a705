package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"service/store"
)

// exposureItem is the answer for one exposure of a call.
type exposureItem struct {
	Index    int    `json:"index"`
	Recorded bool   `json:"recorded"`
	Reason   string `json:"reason,omitempty"`
	// Fields names the bad fields of an invalid exposure.
	Fields map[string]any `json:"fields,omitempty"`
}

// exposureWorkers bounds the exposures of one call evaluated at once: a
// new user's assignment waits for a group commit, and exposures waiting
// together share one.
const exposureWorkers = 8

// handleExposures records what a local evaluator showed. The call as a
// whole is refused (400) only when it is not a list of 1 to 100
// exposures; each exposure is then judged on its own, and the answer says
// per exposure whether it was recorded, and if not why. A database
// failure answers 503 for the call: the exposures recorded before it
// stay, and sending the call again records each once, as assignments are
// sticky.
func (s *Server) handleExposures(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Exposures json.RawMessage `json:"exposures"`
	}
	if !decodeJSON(w, r, &body) {
		return
	}
	var raws []json.RawMessage
	if t := bytes.TrimSpace(body.Exposures); len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &raws) != nil {
		fieldError(w, "exposures", "must be an array of exposures")
		return
	}
	if len(raws) == 0 {
		fieldError(w, "exposures", "must contain at least one exposure")
		return
	}
	if len(raws) > store.MaxExposures {
		fieldError(w, "exposures", "must contain at most "+strconv.Itoa(store.MaxExposures)+" exposures")
		return
	}
	items := make([]exposureItem, len(raws))
	xs := make([]*store.Exposure, len(raws))
	for i, raw := range raws {
		items[i].Index = i
		x, fields := decodeExposure(raw, "exposures["+strconv.Itoa(i)+"]")
		if fields != nil {
			items[i].Reason, items[i].Fields = store.ReasonInvalid, fields
			continue
		}
		xs[i] = x
	}
	app := appID(r)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error
		next    = make(chan int)
	)
	for range min(exposureWorkers, len(raws)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				reason, err := s.DB.Expose(r.Context(), app, xs[i])
				if err != nil {
					mu.Lock()
					failure = errors.Join(failure, err)
					mu.Unlock()
					continue
				}
				items[i].Recorded, items[i].Reason = reason == "", reason
			}
		}()
	}
	for i, x := range xs {
		if x != nil {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	if failure != nil {
		s.writeError(w, r, firstError(failure))
		return
	}
	var id string
	if info := infoOf(r); info != nil {
		id = info.id
	}
	writeJSON(w, http.StatusOK, struct {
		Data      []exposureItem `json:"data"`
		RequestID string         `json:"requestId"`
	}{items, id})
}

// firstError unwraps a joined error to its first: the store's errors
// are mapped to statuses one at a time.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if es := j.Unwrap(); len(es) > 0 {
			return es[0]
		}
	}
	return err
}

// decodeExposure decodes and validates one exposure of a call; on failure
// it returns the bad fields under prefix.
func decodeExposure(raw json.RawMessage, prefix string) (*store.Exposure, map[string]any) {
	x := &store.Exposure{}
	if fields := decodeItem(raw, prefix, x, "an exposure object"); fields != nil {
		return nil, fields
	}
	return x, nil
}
