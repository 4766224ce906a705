// Package webhooks signs and sends the deliveries the store queues in its
// outbox.
package webhooks

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"service/netpolicy"
	"service/store"
)

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
	// Client sends the requests (default NewPolicyClient(Policy)).
	Client *http.Client
	// Policy is the network policy of the default Client.
	Policy netpolicy.Policy
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

// releaseTimeout bounds the release of claims at shutdown or when shed; it
// runs after Run's context may have ended.
const releaseTimeout = 5 * time.Second

// Run sends deliveries until ctx ends. On shutdown it cancels the sends in
// flight and releases their claims and those not yet sent, so the next
// start sends them at once.
//
// Each turn of its loop sheds the claims a hanging webhook cannot use,
// hands ready deliveries to the workers, claims more in the background
// when there is room, and then waits for one thing to happen: a send
// finished, a claim came back (or failed, and it backs off), a wake-up, the
// poll timer, or the tick that notices sends turning slow.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.init()
	l := d.newLoop(ctx)
	stop := l.start()
	defer stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	l.timer = timer
	// A send turns "hung" by merely lasting longer than fast, which no
	// event reports: this tick lets the loop notice, shed what it claimed
	// ahead for that webhook, and serve the others.
	tick := time.NewTicker(l.fast)
	defer tick.Stop()
	for {
		l.shed()
		l.dispatch()
		l.claim()
		select {
		case <-ctx.Done():
			l.shutdown()
			return nil
		case f := <-l.finished:
			l.done(f)
			l.want = true
		case r := <-l.claims:
			l.received(r)
		case <-d.wake:
			l.want = true
		case <-timer.C:
			l.want, l.blocked = true, false
		case <-tick.C:
		}
	}
}

// loop is the state of one Run. Only Run's goroutine touches it. Claimed
// deliveries wait in ready, in due order, until a worker and their
// webhook's cap allow a send. Only a webhook that answers fast has more
// claimed than it may send: the others' claims would wait out their leases.
type loop struct {
	d   *Dispatcher
	ctx context.Context

	workers     int // Workers
	base, top   int // a webhook's cap: PerWebhook, at most Workers
	outstanding int // sender goroutines, so sends that may exist at once
	fast        time.Duration
	poll        time.Duration
	lease       time.Duration

	jobs     chan *store.ClaimedDelivery
	finished chan sent
	claims   chan claimed
	timer    *time.Timer

	hooks    map[int64]*hookState
	ready    []*store.ClaimedDelivery
	busy     int  // sends handed to workers and not finished
	claiming bool // a claim is running in the background
	want     bool // something may be due: claim when there is room
	blocked  bool // backing off after a failed claim
	failures int  // claims failed in a row
}

// claimed is what a background claim returns: the deliveries it got, out
// of limit asked for, and when the next retry is due if it got fewer.
type claimed struct {
	list  []*store.ClaimedDelivery
	limit int
	next  time.Time
	ok    bool
	err   error
}

// newLoop resolves the Dispatcher's defaults.
func (d *Dispatcher) newLoop(ctx context.Context) *loop {
	l := &loop{d: d, ctx: ctx, workers: d.Workers, base: d.PerWebhook, fast: d.FastResponse,
		poll: d.Poll, lease: d.Lease, hooks: map[int64]*hookState{}, claims: make(chan claimed, 1), want: true}
	if l.workers <= 0 {
		l.workers = 8
	}
	if l.base <= 0 {
		l.base = 2
	}
	l.base = min(l.base, l.workers)
	l.top = max(l.workers, l.base)
	if l.fast <= 0 {
		l.fast = 250 * time.Millisecond
	}
	if l.poll <= 0 {
		l.poll = time.Second
	}
	if l.lease <= 0 {
		l.lease = 10 * time.Second
	}
	if d.Client == nil {
		d.Client = NewPolicyClient(d.Policy)
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	// There are more sender goroutines than Workers: sends to a webhook
	// that hangs go on waiting out their timeouts in the spare ones while
	// the others are served (see working). At most outstanding sends exist
	// at once, so no channel buffer can fill: handing a job over or
	// reporting one done never blocks.
	l.outstanding = 4 * l.workers
	l.jobs = make(chan *store.ClaimedDelivery, l.outstanding)
	l.finished = make(chan sent, l.outstanding)
	return l
}

// start starts the senders and the recorder; the function it returns
// stops them once the sends in flight have ended and their attempts are
// recorded.
func (l *loop) start() (stop func()) {
	d := l.d
	results := make(chan store.AttemptOutcome, l.outstanding)
	var wg, rec sync.WaitGroup
	// Attempts made before shutdown are recorded after ctx ends: dropping
	// them would only send them again.
	rec.Go(func() { d.record(context.WithoutCancel(l.ctx), results) })
	for range l.outstanding {
		wg.Go(func() {
			for c := range l.jobs {
				d.deliver(l.ctx, c, l.lease, l.fast, l.finished, results)
			}
		})
	}
	return func() {
		close(l.jobs)
		wg.Wait()
		close(results)
		rec.Wait()
	}
}

func (l *loop) state(h int64) *hookState {
	st := l.hooks[h]
	if st == nil {
		st = &hookState{cap: l.base, sending: map[int64]time.Time{}}
		l.hooks[h] = st
	}
	return st
}

// hung reports a send outstanding for longer than fast: a fast receiver
// that starts hanging gets no more workers.
func (l *loop) hung(st *hookState, now time.Time) bool {
	for _, start := range st.sending {
		if now.Sub(start) > l.fast {
			return true
		}
	}
	return false
}

func (l *loop) capOf(st *hookState, now time.Time) int {
	if st.cap > l.base && l.hung(st, now) {
		return l.base
	}
	return st.cap
}

// working counts the sends that occupy a worker's share. A webhook that has
// started hanging counts for no more than PerWebhook: its other sends are
// only waiting out their timeouts, and must not keep the other webhooks
// from being served meanwhile.
func (l *loop) working(now time.Time) int {
	n := 0
	for _, st := range l.hooks {
		if k := len(st.sending); k > l.base && l.hung(st, now) {
			n += l.base
		} else {
			n += k
		}
	}
	return n
}

// shed releases the deliveries claimed ahead for a fast webhook that has
// started hanging, down to what PerWebhook allows: they would wait out its
// timeouts, and hold room that other webhooks need.
func (l *loop) shed() {
	now := time.Now()
	var drop []*store.ClaimedDelivery
	l.ready = slices.DeleteFunc(l.ready, func(c *store.ClaimedDelivery) bool {
		st := l.hooks[c.WebhookID]
		if st.queued+len(st.sending) <= l.base || !l.hung(st, now) {
			return false
		}
		st.queued--
		st.fast = false
		drop = append(drop, c)
		return true
	})
	l.d.release(l.ctx, drop)
}

// dispatch hands ready deliveries to the workers, in due order, while a
// worker is free and the delivery's webhook is under its cap.
func (l *loop) dispatch() {
	now := time.Now()
	for l.busy < l.outstanding && l.working(now) < l.workers {
		i := slices.IndexFunc(l.ready, func(c *store.ClaimedDelivery) bool {
			st := l.hooks[c.WebhookID]
			return len(st.sending) < l.capOf(st, now)
		})
		if i < 0 {
			return
		}
		c := l.ready[i]
		l.ready = slices.Delete(l.ready, i, i+1)
		st := l.hooks[c.WebhookID]
		st.queued--
		st.sending[c.ID] = now
		l.busy++
		l.jobs <- c
	}
}

// done accounts for a finished send: a fast answer raises its webhook's
// cap by one, a slow one or none brings it back to PerWebhook.
func (l *loop) done(f sent) {
	l.busy--
	st := l.hooks[f.hook]
	delete(st.sending, f.id)
	switch {
	case f.speed > 0:
		st.cap, st.fast = min(st.cap+1, l.top), true
	case f.speed < 0:
		st.cap, st.fast = l.base, false
	}
	if len(st.sending) == 0 && st.queued == 0 && st.cap == l.base && !st.fast {
		delete(l.hooks, f.hook)
	}
}

// claim starts a claim in the background when something may be due and
// there is room for it; its answer arrives on l.claims.
func (l *loop) claim() {
	// Claims of a few deliveries cost nearly as much as large ones: top up
	// only once two workers' worth of room is free, or nothing is left to
	// send.
	room := ahead*l.workers - l.busy - len(l.ready)
	if l.claiming || !l.want || l.blocked || room <= 0 || (room < 2*l.workers && len(l.ready) > 0) {
		return
	}
	l.claiming, l.want = true, false
	now := time.Now()
	o := store.ClaimOptions{Limit: room, PerWebhook: l.base, Lease: l.lease,
		InFlight: make(map[int64]int, len(l.hooks)), Caps: map[int64]int{}}
	for h, st := range l.hooks {
		o.InFlight[h] = len(st.sending) + st.queued
		if st.fast && !l.hung(st, now) {
			o.Caps[h] = ahead * st.cap
		}
	}
	db, ctx := l.d.DB, l.ctx
	go func() {
		r := claimed{limit: room}
		r.list, r.err = db.ClaimDueDeliveries(ctx, now, o)
		if r.err == nil && len(r.list) < room {
			r.next, r.ok, r.err = db.NextDeliveryDue(ctx, now)
		}
		l.claims <- r
	}()
}

// received queues what a claim returned and sets the timer: to the next
// retry due or the poll, whichever is sooner, or to the back-off after a
// failure.
func (l *loop) received(r claimed) {
	l.claiming = false
	for _, c := range r.list {
		l.state(c.WebhookID).queued++
		l.ready = append(l.ready, c)
	}
	if r.err != nil {
		if l.ctx.Err() == nil {
			l.backOff(r.err)
		}
		return
	}
	l.failures = 0
	if len(r.list) == r.limit {
		l.want = true // more may be due at once
	}
	wait := l.poll
	if r.ok {
		wait = min(wait, max(time.Until(r.next), time.Millisecond))
	}
	l.timer.Reset(wait)
}

// backOff stops claiming while the database keeps failing: the wait grows
// by one poll per failure, up to a minute.
func (l *loop) backOff(err error) {
	l.failures++
	wait := min(time.Duration(l.failures)*l.poll, time.Minute)
	l.d.Log.Error("webhook dispatch", "err", err, "retryIn", wait)
	l.blocked = true
	l.timer.Reset(wait)
}

// shutdown waits for a claim under way and releases every claim not yet
// handed to a worker.
func (l *loop) shutdown() {
	if l.claiming {
		r := <-l.claims
		l.ready = append(l.ready, r.list...)
	}
	l.d.release(l.ctx, l.ready)
}

// deliver makes one attempt and hands its result to the recorder. A send
// cut short by shutdown is not an attempt: its claim is released instead,
// as is a claim whose lease no longer covers a whole attempt.
func (d *Dispatcher) deliver(ctx context.Context, c *store.ClaimedDelivery, lease, fast time.Duration,
	finished chan<- sent, results chan<- store.AttemptOutcome) {
	if time.Until(c.LeaseExpiry()) < c.Timeout+lease/2 {
		finished <- sent{hook: c.WebhookID, id: c.ID}
		d.release(ctx, []*store.ClaimedDelivery{c})
		return
	}
	if c.SecretErr != nil {
		// Never sent unsigned: the claim lapses after its lease and the
		// delivery is tried again, by when the key may be configured.
		d.Log.Error("webhook secret cannot be decrypted; delivery held", "webhook", c.WebhookID,
			"delivery", c.ID, "err", c.SecretErr)
		finished <- sent{hook: c.WebhookID, id: c.ID}
		return
	}
	sctx := ctx
	if c.Live != nil && c.Live.Done() != nil {
		// Once the claim may be taken back by another process, this send
		// stops: the delivery is another's to send.
		if c.Live.Err() != nil {
			finished <- sent{hook: c.WebhookID, id: c.ID}
			return
		}
		var cancel context.CancelFunc
		sctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(c.Live, cancel)()
	}
	res := d.send(sctx, c)
	speed := -1
	if res.Status != 0 && res.Duration < fast {
		speed = 1
	}
	finished <- sent{c.WebhookID, c.ID, speed}
	if sctx.Err() != nil && !res.OK() {
		d.release(ctx, []*store.ClaimedDelivery{c})
		return
	}
	results <- store.AttemptOutcome{Claim: c, Result: res}
}

// release gives up claims without an attempt. It runs when ctx may have
// ended (shutdown), so it outlives ctx, for at most releaseTimeout.
func (d *Dispatcher) release(ctx context.Context, list []*store.ClaimedDelivery) {
	if len(list) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := d.DB.ReleaseDeliveries(rctx, list); err != nil {
		d.Log.Warn("webhook release", "deliveries", len(list), "first", list[0].ID, "err", err)
	}
}

// record stores the attempts the workers made, as many at a time as are
// waiting, until results is closed.
func (d *Dispatcher) record(ctx context.Context, results <-chan store.AttemptOutcome) {
	const most = 128
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
				"attempt", c.Attempt, "status", res.Status, "err", res.Err, "duration_ms", float64(res.Duration.Microseconds())/1000)
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
