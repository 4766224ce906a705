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
	// Workers bounds concurrent sends (default 8).
	Workers int
	// PerWebhook bounds concurrent sends to one webhook (default 2), so a
	// hanging receiver holds at most that many workers.
	PerWebhook int
	// Client sends the requests (default NewClient()).
	Client *http.Client
	Log    *slog.Logger
	// Poll is the longest sleep between looks at the outbox (default 1s),
	// a safety net for deliveries queued by another process.
	Poll time.Duration
	// Lease is how long a claim outlives the webhook's timeout (default
	// 10s): a send that dies with the process is retried after it.
	Lease time.Duration

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

// Run sends deliveries until ctx ends. On shutdown it cancels the sends in
// flight and releases their claims, so the next start sends them at once.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.init()
	workers := d.Workers
	if workers <= 0 {
		workers = 8
	}
	perHook := d.PerWebhook
	if perHook <= 0 {
		perHook = 2
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

	// At most workers jobs are outstanding, so neither channel's buffer can
	// fill: handing a job over or reporting one done never blocks.
	jobs := make(chan *store.ClaimedDelivery, workers)
	finished := make(chan int64, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range jobs {
				d.deliver(ctx, c)
				finished <- c.WebhookID
			}
		})
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()

	// Only this goroutine touches the in-flight counts.
	busy, inFlight := 0, map[int64]int{}
	done := func(hook int64) {
		busy--
		if inFlight[hook]--; inFlight[hook] <= 0 {
			delete(inFlight, hook)
		}
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	failures := 0
	for {
		for drained := false; !drained; {
			select {
			case hook := <-finished:
				done(hook)
			default:
				drained = true
			}
		}
		wait := poll
		if busy < workers {
			now := time.Now()
			claimed, err := d.DB.ClaimDueDeliveries(ctx, now, store.ClaimOptions{
				Limit: workers - busy, PerWebhook: perHook, InFlight: inFlight, Lease: lease})
			for _, c := range claimed {
				busy++
				inFlight[c.WebhookID]++
				jobs <- c
			}
			if err == nil {
				var next time.Time
				var ok bool
				next, ok, err = d.DB.NextDeliveryDue(ctx, now)
				if ok && next.Sub(now) < wait {
					wait = max(next.Sub(now), time.Millisecond)
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				failures++
				// Back off while the database keeps failing, up to a minute.
				wait = min(time.Duration(failures)*poll, time.Minute)
				d.Log.Error("webhook dispatch", "err", err, "retryIn", wait)
			} else {
				failures = 0
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case hook := <-finished:
			done(hook)
		case <-d.wake:
		case <-timer.C:
		}
	}
}

// deliver makes one attempt and records it. A send cut short by shutdown
// is not an attempt: its claim is released instead.
func (d *Dispatcher) deliver(ctx context.Context, c *store.ClaimedDelivery) {
	res := d.send(ctx, c)
	if ctx.Err() != nil && !res.OK() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := d.DB.ReleaseDelivery(rctx, c); err != nil {
			d.Log.Warn("webhook release", "delivery", c.ID, "err", err)
		}
		return
	}
	if err := d.DB.RecordAttempt(context.WithoutCancel(ctx), c, res, d.RetryBase); err != nil {
		// The claim lapses and the delivery is sent again: at least once.
		d.Log.Error("webhook record attempt", "delivery", c.ID, "err", err)
		return
	}
	lvl := slog.LevelDebug
	if !res.OK() {
		lvl = slog.LevelWarn
	}
	d.Log.Log(ctx, lvl, "webhook attempt", "webhook", c.WebhookID, "delivery", c.ID, "event", c.Event,
		"attempt", c.Attempt, "status", res.Status, "err", res.Err, "duration", res.Duration)
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
