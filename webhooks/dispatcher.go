// Package webhooks signs and sends the deliveries the store queues in its
// outbox.
package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"service/store"
)

// UserAgent identifies deliveries to receivers.
const UserAgent = "Service-Webhooks/1.0"

// maxResponseBody caps how much of a receiver's answer is read: only the
// status matters, and a huge or endless body must not hold a worker.
const maxResponseBody = 64 << 10

// Dispatcher sends pending deliveries: it claims due ones with a lease,
// posts them from a bounded pool of workers, and records each attempt.
// Retry k of a delivery waits RetryBase * 2^(k-1).
//
// Claims, sends and records form a pipeline: the next batch is claimed
// while the current one is sent, and the attempts of many sends are
// recorded together.
//
// Pending deliveries of a FAILED webhook stay pending, unscheduled, until
// the webhook is re-enabled; they are then sent at once with their
// remaining retries.
//
// Delivery is at least once: a send whose result could not be recorded
// (crash, database error) is sent again, with the same X-Service-Delivery-ID,
// once its claim's lease expires.
type Dispatcher struct {
	DB        *store.DB
	RetryBase time.Duration
	// Workers bounds concurrent sends (default 8); sends to a webhook that
	// has started hanging count for at most PerWebhook of them.
	Workers int
	// PerWebhook bounds concurrent sends to one webhook (default 2) until
	// it proves fast, so a hanging receiver holds at most that many
	// workers. A webhook whose attempts answer within FastResponse gains
	// one more send per such answer, up to Workers; a slow answer, a
	// failure without an answer, or a send outstanding for longer than
	// FastResponse brings it back to PerWebhook.
	PerWebhook int
	// FastResponse is the answer time under which a webhook counts as fast
	// (default 250ms).
	FastResponse time.Duration
	// Client sends the requests (default NewClient()).
	Client *http.Client
	Log    *slog.Logger
	// Poll is the longest sleep between looks at the outbox (default 1s),
	// a safety net for deliveries queued by another process.
	Poll time.Duration
	// Lease is how long a claim outlives the webhook's timeout (default
	// 10s): a send that dies with the process is retried after it. A
	// claimed delivery still waiting for a worker when less than its
	// timeout plus half of Lease remains is released rather than sent.
	Lease time.Duration
	// Observe, when set, is told the outcome of every recorded attempt:
	// "success" (a 2xx answer) or "failure".
	Observe func(outcome string)

	once sync.Once
	wake chan struct{}
}

func (d *Dispatcher) init() {
	d.once.Do(func() { d.wake = make(chan struct{}, 1) })
}

// Wake makes Run look at the outbox now. It never blocks, so it can serve
// as store.DB.Notify, called after every commit that queued deliveries. Set
// DB.Notify = d.Wake before the database is shared with other goroutines.
func (d *Dispatcher) Wake() {
	d.init()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// NewClient returns the HTTP client deliveries use: every phase has a
// timeout on the transport (the per-webhook timeout comes from the request
// context), and redirects are not followed, so a 3xx is a failed attempt
// and a receiver cannot bounce the signed payload to another host.
func NewClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  time.Duration(store.MaxWebhookTimeout) * time.Second,
			ExpectContinueTimeout:  time.Second,
			MaxIdleConns:           100,
			MaxIdleConnsPerHost:    8,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
			ForceAttemptHTTP2:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// sent reports the end of a send to Run's loop.
type sent struct {
	hook, id int64
	// speed is +1 for a fast answer, -1 for a slow one or none, 0 for a
	// send that did not happen.
	speed int
}

// hookState is Run's view of one webhook: its current cap, whether its
// last answer was fast, its sends in progress by start time, and its
// claims waiting for a worker.
type hookState struct {
	cap     int
	fast    bool
	sending map[int64]time.Time
	queued  int
}

// ahead is how many sends' worth of deliveries of a fast webhook, and in
// all, are claimed ahead of the workers, so that they never wait for a
// claim: a claim costs about as much as several sends to a fast receiver,
// and large ones cost little more than small ones.
const ahead = 8

// Run sends deliveries until ctx ends. On shutdown it cancels the sends in
// flight and releases their claims and those not yet sent, so the next
// start sends them at once.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.init()
	workers := d.Workers
	if workers <= 0 {
		workers = 8
	}
	base := d.PerWebhook
	if base <= 0 {
		base = 2
	}
	base = min(base, workers)
	top := max(workers, base)
	fast := d.FastResponse
	if fast <= 0 {
		fast = 250 * time.Millisecond
	}
	poll := d.Poll
	if poll <= 0 {
		poll = time.Second
	}
	lease := d.Lease
	if lease <= 0 {
		lease = 10 * time.Second
	}
	if d.Client == nil {
		d.Client = NewClient()
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}

	// There are more sender goroutines than Workers: sends to a webhook
	// that hangs go on waiting out their timeouts in the spare ones while
	// the others are served (see working below). At most outstanding sends
	// exist at once, so no channel buffer can fill: handing a job over or
	// reporting one done never blocks.
	outstanding := 4 * workers
	jobs := make(chan *store.ClaimedDelivery, outstanding)
	finished := make(chan sent, outstanding)
	results := make(chan store.AttemptOutcome, outstanding)
	var wg, rec sync.WaitGroup
	rec.Go(func() { d.record(results) })
	for range outstanding {
		wg.Go(func() {
			for c := range jobs {
				d.deliver(ctx, c, lease, fast, finished, results)
			}
		})
	}
	defer func() {
		close(jobs)
		wg.Wait()
		close(results)
		rec.Wait()
	}()

	// Only this goroutine touches the state below. Claimed deliveries wait
	// in ready, in due order, until a worker and their webhook's cap allow
	// a send. Only a webhook that answers fast has more claimed than it
	// may send: the others' claims would wait out their leases.
	hooks := map[int64]*hookState{}
	var ready []*store.ClaimedDelivery
	busy := 0
	state := func(h int64) *hookState {
		st := hooks[h]
		if st == nil {
			st = &hookState{cap: base, sending: map[int64]time.Time{}}
			hooks[h] = st
		}
		return st
	}
	// hung reports a send outstanding for longer than fast: a fast
	// receiver that starts hanging gets no more workers.
	hung := func(st *hookState, now time.Time) bool {
		for _, start := range st.sending {
			if now.Sub(start) > fast {
				return true
			}
		}
		return false
	}
	capOf := func(st *hookState, now time.Time) int {
		if st.cap > base && hung(st, now) {
			return base
		}
		return st.cap
	}
	// shed releases the deliveries claimed ahead for a fast webhook that
	// has started hanging, down to what PerWebhook allows: they would wait
	// out its timeouts, and hold room that other webhooks need.
	shed := func() {
		now := time.Now()
		var drop []*store.ClaimedDelivery
		ready = slices.DeleteFunc(ready, func(c *store.ClaimedDelivery) bool {
			st := hooks[c.WebhookID]
			if st.queued+len(st.sending) <= base || !hung(st, now) {
				return false
			}
			st.queued--
			st.fast = false
			drop = append(drop, c)
			return true
		})
		if len(drop) == 0 {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := d.DB.ReleaseDeliveries(rctx, drop); err != nil {
			d.Log.Warn("webhook release", "deliveries", len(drop), "err", err)
		}
	}
	// working counts the sends that occupy a worker's share. A webhook
	// that has started hanging counts for no more than PerWebhook: its
	// other sends are only waiting out their timeouts, and must not keep
	// the other webhooks from being served meanwhile.
	working := func(now time.Time) int {
		n := 0
		for _, st := range hooks {
			if k := len(st.sending); k > base && hung(st, now) {
				n += base
			} else {
				n += k
			}
		}
		return n
	}
	dispatch := func() {
		now := time.Now()
		for busy < outstanding && working(now) < workers {
			i := slices.IndexFunc(ready, func(c *store.ClaimedDelivery) bool {
				st := hooks[c.WebhookID]
				return len(st.sending) < capOf(st, now)
			})
			if i < 0 {
				return
			}
			c := ready[i]
			ready = slices.Delete(ready, i, i+1)
			st := hooks[c.WebhookID]
			st.queued--
			st.sending[c.ID] = now
			busy++
			jobs <- c
		}
	}
	done := func(f sent) {
		busy--
		st := hooks[f.hook]
		delete(st.sending, f.id)
		switch {
		case f.speed > 0:
			st.cap, st.fast = min(st.cap+1, top), true
		case f.speed < 0:
			st.cap, st.fast = base, false
		}
		if len(st.sending) == 0 && st.queued == 0 && st.cap == base && !st.fast {
			delete(hooks, f.hook)
		}
	}

	type claimed struct {
		list  []*store.ClaimedDelivery
		limit int
		next  time.Time
		ok    bool
		err   error
	}
	claims := make(chan claimed, 1)
	claiming, want, blocked := false, true, false
	failures := 0
	claim := func() {
		// Claims of a few deliveries cost nearly as much as large ones:
		// top up only once two workers' worth of room is free, or nothing
		// is left to send.
		room := ahead*workers - busy - len(ready)
		if claiming || !want || blocked || room <= 0 || (room < 2*workers && len(ready) > 0) {
			return
		}
		claiming, want = true, false
		now := time.Now()
		o := store.ClaimOptions{Limit: room, PerWebhook: base, Lease: lease,
			InFlight: make(map[int64]int, len(hooks)), Caps: map[int64]int{}}
		for h, st := range hooks {
			o.InFlight[h] = len(st.sending) + st.queued
			if st.fast && !hung(st, now) {
				o.Caps[h] = ahead * st.cap
			}
		}
		go func() {
			r := claimed{limit: room}
			r.list, r.err = d.DB.ClaimDueDeliveries(ctx, now, o)
			if r.err == nil && len(r.list) < room {
				r.next, r.ok, r.err = d.DB.NextDeliveryDue(ctx, now)
			}
			claims <- r
		}()
	}

	timer := time.NewTimer(0)
	defer timer.Stop()
	// A send turns "hung" by merely lasting longer than fast, which no
	// event reports: this tick lets the loop notice, shed what it claimed
	// ahead for that webhook, and serve the others.
	tick := time.NewTicker(fast)
	defer tick.Stop()
	for {
		shed()
		dispatch()
		claim()
		select {
		case <-ctx.Done():
			if claiming {
				r := <-claims
				ready = append(ready, r.list...)
			}
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := d.DB.ReleaseDeliveries(rctx, ready); err != nil {
				d.Log.Warn("webhook release", "deliveries", len(ready), "err", err)
			}
			return nil
		case f := <-finished:
			done(f)
			want = true
		case r := <-claims:
			claiming = false
			for _, c := range r.list {
				state(c.WebhookID).queued++
				ready = append(ready, c)
			}
			if r.err != nil {
				if ctx.Err() != nil {
					continue
				}
				failures++
				// Back off while the database keeps failing, up to a minute.
				wait := min(time.Duration(failures)*poll, time.Minute)
				d.Log.Error("webhook dispatch", "err", r.err, "retryIn", wait)
				blocked = true
				timer.Reset(wait)
				continue
			}
			failures = 0
			if len(r.list) == r.limit {
				want = true // more may be due at once
			}
			wait := poll
			if r.ok {
				wait = min(wait, max(time.Until(r.next), time.Millisecond))
			}
			timer.Reset(wait)
		case <-d.wake:
			want = true
		case <-timer.C:
			want, blocked = true, false
		case <-tick.C:
		}
	}
}

// deliver makes one attempt and hands its result to the recorder. A send
// cut short by shutdown is not an attempt: its claim is released instead,
// as is a claim whose lease no longer covers a whole attempt.
func (d *Dispatcher) deliver(ctx context.Context, c *store.ClaimedDelivery, lease, fast time.Duration,
	finished chan<- sent, results chan<- store.AttemptOutcome) {
	if time.Until(c.LeaseExpiry()) < c.Timeout+lease/2 {
		finished <- sent{hook: c.WebhookID, id: c.ID}
		d.release(ctx, c)
		return
	}
	res := d.send(ctx, c)
	speed := -1
	if res.Status != 0 && res.Duration < fast {
		speed = 1
	}
	finished <- sent{c.WebhookID, c.ID, speed}
	if ctx.Err() != nil && !res.OK() {
		d.release(ctx, c)
		return
	}
	results <- store.AttemptOutcome{Claim: c, Result: res}
}

func (d *Dispatcher) release(ctx context.Context, c *store.ClaimedDelivery) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := d.DB.ReleaseDelivery(rctx, c); err != nil {
		d.Log.Warn("webhook release", "delivery", c.ID, "err", err)
	}
}

// record stores the attempts the workers made, as many at a time as are
// waiting, until results is closed.
func (d *Dispatcher) record(results <-chan store.AttemptOutcome) {
	const most = 128
	ctx := context.Background()
	batch := make([]store.AttemptOutcome, 0, most)
	for o := range results {
		batch = append(batch[:0], o)
	fill:
		for len(batch) < most {
			select {
			case o, ok := <-results:
				if !ok {
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		failed := make([]error, len(batch))
		if err := d.DB.RecordAttempts(ctx, batch, d.RetryBase); err != nil {
			// Alone, one bad attempt cannot lose its neighbours' records.
			for i := range batch {
				failed[i] = d.DB.RecordAttempts(ctx, batch[i:i+1], d.RetryBase)
			}
		}
		retry := false
		for i, o := range batch {
			c, res := o.Claim, o.Result
			if err := failed[i]; err != nil {
				// The claim lapses and the delivery is sent again: at least once.
				d.Log.Error("webhook record attempt", "delivery", c.ID, "err", err)
				continue
			}
			lvl := slog.LevelDebug
			if !res.OK() {
				lvl, retry = slog.LevelWarn, true
			}
			d.observe(res.OK())
			d.Log.Log(ctx, lvl, "webhook attempt", "webhook", c.WebhookID, "delivery", c.ID, "event", c.Event,
				"attempt", c.Attempt, "status", res.Status, "err", res.Err, "duration", res.Duration)
		}
		if retry {
			// A retry may now be due sooner than Run's timer.
			d.Wake()
		}
	}
}

func (d *Dispatcher) observe(ok bool) {
	if d.Observe == nil {
		return
	}
	if ok {
		d.Observe("success")
	} else {
		d.Observe("failure")
	}
}

// send posts the signed envelope once. No database work happens here.
func (d *Dispatcher) send(ctx context.Context, c *store.ClaimedDelivery) store.AttemptResult {
	start := time.Now()
	res := store.AttemptResult{At: start}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	body := Envelope(c.Event, c.CreatedAt, c.Payload)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		res.Err = "invalid request: " + describe(err)
		return res
	}
	// Custom headers first: the service's own are set after them and so
	// always win (validation already refuses overriding names).
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set("X-Service-Event", c.Event)
	h.Set("X-Service-Delivery-ID", strconv.FormatInt(c.ID, 10))
	if c.Secret != "" {
		h.Set("X-Service-Signature", Sign(c.Secret, c.Payload))
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		res.Duration = time.Since(start)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.Err = fmt.Sprintf("timeout after %s", c.Timeout)
		} else {
			res.Err = describe(err)
		}
		return res
	}
	// Drained (up to the cap) so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	resp.Body.Close()
	res.Duration = time.Since(start)
	res.Status = resp.StatusCode
	return res
}

// describe keeps the cause of a transport error without the URL around it,
// which may carry credentials in its user info or query.
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
