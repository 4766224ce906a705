// Package journeys drives simulated visitors through the SDK routes, from
// an anonymous visit to a purchase after signing up, and checks what the
// service must keep true of each person: one variant per campaign, one
// impression, and at most one conversion. The handlers' tests run it
// in process on both stores; cmd's run it across replicas.
package journeys

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
)

// Doer sends one request of journey i and answers the status and body.
// i lets a caller spread journeys, and the steps of one journey, over
// several servers: step is the request's place in its journey.
type Doer func(ctx context.Context, i, step int, method, path, key string, body []byte) (int, []byte, error)

// Config names the campaign the journeys go through, and how many.
type Config struct {
	N, Workers  int
	AppID       int64
	CampaignID  int64
	CampaignKey string // for the OpenFeature sign-ups
	ClientKey   string
	// Prefix makes the run's ids its own.
	Prefix string
	// Goal is the campaign's goal event, View the event of a count metric.
	Goal, View string
}

// Result is what the journeys did, to compare with the analytics.
type Result struct {
	// People is N: every journey is one person, assigned once.
	People int
	// ByVariant counts the people per variant, Converted those of them
	// who purchased (once or more, by any id).
	ByVariant, Converted map[int64]int64
	// Views is the number of View events logged, all after the person's
	// assignment.
	Views int64
	// Requests is the number of requests sent.
	Requests int64
}

type journey struct {
	cfg      *Config
	do       Doer
	i, step  int
	s, u     string
	v        int64 // the person's variant
	requests *atomic.Int64
}

// Run sends the N journeys over Workers goroutines and returns what they
// did. It fails on the first answer that is not 2xx or that shows a
// person a second variant, or a second impression.
func Run(ctx context.Context, cfg Config, do Doer) (*Result, error) {
	res := &Result{People: cfg.N, ByVariant: map[int64]int64{}, Converted: map[int64]int64{}}
	var mu sync.Mutex
	var requests atomic.Int64
	next := atomic.Int64{}
	errs := make(chan error, cfg.Workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.N || ctx.Err() != nil {
					return
				}
				j := &journey{cfg: &cfg, do: do, i: i, s: fmt.Sprintf("%s-s-%d", cfg.Prefix, i), u: fmt.Sprintf("%s-u-%d", cfg.Prefix, i), requests: &requests}
				views, bought, err := j.run(ctx)
				if err != nil {
					errs <- fmt.Errorf("journey %d: %w", i, err)
					cancel()
					return
				}
				mu.Lock()
				res.ByVariant[j.v]++
				if bought {
					res.Converted[j.v]++
				}
				res.Views += views
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	res.Requests = requests.Load()
	if err := <-errs; err != nil {
		return res, err
	}
	return res, ctx.Err()
}

// run walks one visitor: an anonymous visit (variant, views, perhaps a
// purchase), a sign-up by one of the routes that link, more views by
// both ids or the userId alone, a purchase or not (perhaps twice, perhaps
// by the session alone, as a queue sent late would), and a last visit
// signed out. It answers the views logged and whether the person bought.
func (j *journey) run(ctx context.Context) (views int64, bought bool, err error) {
	i := j.i
	// The anonymous visit assigns the session, with the impression.
	v, recorded, err := j.variant(ctx, map[string]any{"sessionId": j.s})
	if err != nil {
		return 0, false, err
	}
	if !recorded {
		return 0, false, fmt.Errorf("first visit: impressionRecorded=false")
	}
	j.v = v
	anon := int64(i % 3)
	if i%5 == 0 && anon > 0 {
		batch := make([]map[string]any, anon)
		for k := range batch {
			batch[k] = map[string]any{"eventId": j.cfg.View, "sessionId": j.s}
		}
		if err := j.post(ctx, fmt.Sprintf("/v1/apps/%d/events/batch", j.cfg.AppID), map[string]any{"events": batch}, nil); err != nil {
			return 0, false, err
		}
	} else {
		for range anon {
			if err := j.event(ctx, j.cfg.View, j.s, ""); err != nil {
				return 0, false, err
			}
		}
	}
	views += anon
	if i%7 == 0 {
		if err := j.event(ctx, j.cfg.Goal, j.s, ""); err != nil {
			return 0, false, err
		}
		bought = true
	}
	// The sign-up: identify, or the first request naming both ids.
	both := map[string]any{"userId": j.u, "sessionId": j.s}
	switch i % 8 {
	case 0, 1, 4, 5:
		var p struct{ UserID string }
		if err := j.post(ctx, fmt.Sprintf("/v1/apps-external/%d/identify", j.cfg.AppID), map[string]any{"userId": j.u, "sessionId": j.s, "attributes": map[string]any{"plan": "free"}}, &p); err != nil {
			return 0, false, err
		}
	case 2, 6:
		if err := j.sameVariant(ctx, "sign-up by the variant route", both); err != nil {
			return 0, false, err
		}
	case 3:
		var out struct {
			Data []struct{ CampaignID, VariantID int64 }
		}
		if err := j.post(ctx, fmt.Sprintf("/v1/apps-external/%d/variants", j.cfg.AppID), both, &out); err != nil {
			return 0, false, err
		}
		found := false
		for _, a := range out.Data {
			if a.CampaignID == j.cfg.CampaignID {
				found = a.VariantID == j.v
			}
		}
		if !found {
			return 0, false, fmt.Errorf("sign-up by the variants route: %+v, want variant %d", out.Data, j.v)
		}
	case 7:
		var out struct {
			Metadata struct{ VariantID int64 }
		}
		body := map[string]any{"context": map[string]any{"targetingKey": j.u, "sessionId": j.s}}
		if err := j.post(ctx, "/ofrep/v1/evaluate/flags/"+j.cfg.CampaignKey, body, &out); err != nil {
			return 0, false, err
		}
		if out.Metadata.VariantID != j.v {
			return 0, false, fmt.Errorf("sign-up by OpenFeature: variant %d, want %d", out.Metadata.VariantID, j.v)
		}
	}
	// Signed in: the user's own requests see the session's variant.
	if err := j.sameVariant(ctx, "signed in", map[string]any{"userId": j.u}); err != nil {
		return 0, false, err
	}
	signed := 1 + int64(i%2)
	for k := range signed {
		session := j.s
		if k == 1 {
			session = "" // the userId alone
		}
		if err := j.event(ctx, j.cfg.View, session, j.u); err != nil {
			return 0, false, err
		}
	}
	views += signed
	buys := 0
	switch {
	case i%3 == 0:
		buys = 1 + i%2 // some buy twice: once counted
	case i%11 == 2:
		// A purchase by the session alone after the link (a queue sent
		// late): the user's.
		if err := j.event(ctx, j.cfg.Goal, j.s, ""); err != nil {
			return 0, false, err
		}
		bought = true
	}
	for range buys {
		if err := j.event(ctx, j.cfg.Goal, j.s, j.u); err != nil {
			return 0, false, err
		}
		bought = true
	}
	// Signed out, on the same device: the session's variant, no impression.
	if err := j.sameVariant(ctx, "signed out", map[string]any{"sessionId": j.s}); err != nil {
		return 0, false, err
	}
	return views, bought, nil
}

// sameVariant asks the variant route and fails unless it answers the
// person's variant without an impression.
func (j *journey) sameVariant(ctx context.Context, what string, body map[string]any) error {
	v, recorded, err := j.variant(ctx, body)
	if err != nil {
		return err
	}
	if v != j.v || recorded {
		return fmt.Errorf("%s: variant %d (impressionRecorded %v), want %d without an impression", what, v, recorded, j.v)
	}
	return nil
}

func (j *journey) variant(ctx context.Context, body map[string]any) (int64, bool, error) {
	var out struct {
		VariantID          *int64
		ImpressionRecorded bool
	}
	err := j.post(ctx, fmt.Sprintf("/v1/apps-external/%d/campaigns/%d/variant", j.cfg.AppID, j.cfg.CampaignID), body, &out)
	if err == nil && out.VariantID == nil {
		err = fmt.Errorf("not assigned")
	}
	if err != nil {
		return 0, false, err
	}
	return *out.VariantID, out.ImpressionRecorded, nil
}

func (j *journey) event(ctx context.Context, eventID, session, user string) error {
	body := map[string]any{"eventId": eventID}
	if session != "" {
		body["sessionId"] = session
	}
	if user != "" {
		body["userId"] = user
	}
	return j.post(ctx, fmt.Sprintf("/v1/apps/%d/events", j.cfg.AppID), body, nil)
}

// post sends body and decodes a 2xx answer into out (when not nil).
func (j *journey) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	step := j.step
	j.step++
	j.requests.Add(1)
	status, answer, err := j.do(ctx, j.i, step, "POST", path, j.cfg.ClientKey, b)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("POST %s %s: %d %s", path, b, status, answer)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("POST %s: %w: %s", path, err, answer)
		}
	}
	return nil
}
