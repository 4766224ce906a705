package webhooks_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/store"
	"service/webhooks"
)

func TestDispatchNewClientDoesNotFollowRedirects(t *testing.T) {
	var followed atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Add(1) }))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusFound))
	defer redirect.Close()
	resp, err := webhooks.NewClient().Post(redirect.URL, "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusFound; got != want || followed.Load() != 0 {
		t.Fatalf("status=%d (want %d), followed %d times", got, want, followed.Load())
	}
}

func TestDispatchShutdownReleasesClaims(t *testing.T) {
	e := e2eNew(t)
	hang := e2eHang(t)
	d := &webhooks.Dispatcher{DB: e.DB, RetryBase: time.Hour, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e.DB.Notify = d.Wake
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	hook := e.hook(map[string]any{"url": hang.URL, "timeoutSeconds": 120})
	e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)
	e2eEventually(t, e2ePatience, "request in flight", func() bool { return hang.Peak() == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Not an attempt, and claimable at once by the next process.
	if d := e.deliveries(hook)[0]; d["status"] != "pending" || e2eNum(d, "attemptCount") != 0 {
		t.Fatalf("delivery=%v", d)
	}
	claimed, err := e.DB.ClaimDueDeliveries(context.Background(), time.Now(), store.ClaimOptions{Limit: 10, PerWebhook: 1, Lease: time.Second})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d after shutdown: %v", len(claimed), err)
	}
}

// dispatchPercentile returns the p-th percentile (0..1) of ds.
func dispatchPercentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// dispatchCreateLatencies times n content creates through the store; each
// publishes, so each queues deliveries and wakes the dispatcher.
func dispatchCreateLatencies(t testing.TB, e *e2eEnv, n int) []time.Duration {
	t.Helper()
	ctx := context.Background()
	name, pub := "block", store.ContentPublished
	out := make([]time.Duration, n)
	for i := range out {
		start := time.Now()
		if _, err := e.DB.CreateContent(ctx, e.App, store.ContentInput{Name: &name, Status: &pub}); err != nil {
			t.Fatal(err)
		}
		out[i] = time.Since(start)
	}
	return out
}

// dispatchBacklog queues n deliveries to a webhook.
func dispatchBacklog(t testing.TB, e *e2eEnv, hook int64, n int) {
	t.Helper()
	for range n {
		if _, err := e.DB.SendTestDelivery(context.Background(), e.App, hook); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDispatchWriteLatencyWithHangingBacklog(t *testing.T) {
	e := e2eNew(t)
	hang := e2eHang(t)
	e.start(time.Hour, nil)
	hook := e.hook(map[string]any{"url": hang.URL, "timeoutSeconds": 120})

	const n = 200
	before := dispatchCreateLatencies(t, e, n)
	dispatchBacklog(t, e, hook, 1000)
	e2eEventually(t, e2ePatience, "hanging receiver busy", func() bool { return hang.Peak() == 2 })
	during := dispatchCreateLatencies(t, e, n)

	b50, b95 := dispatchPercentile(before, .5), dispatchPercentile(before, .95)
	d50, d95 := dispatchPercentile(during, .5), dispatchPercentile(during, .95)
	t.Logf("content create: p50 %s p95 %s with no backlog; p50 %s p95 %s with 1,000+ deliveries pending to a hanging receiver",
		b50, b95, d50, d95)
	// The claim is a read on the reader pool, so the backlog may cost a
	// little CPU but never the writer lock; a write that waited on the
	// hanging sends would take their 120 s timeout. The bound is loose
	// because the machine's load can change between the two samples.
	if d50 > 10*b50+250*time.Millisecond {
		t.Fatalf("writes slowed down by the backlog: p50 %s -> %s, p95 %s -> %s", b50, d50, b95, d95)
	}
	if got := hang.Peak(); got != 2 {
		t.Fatalf("hanging receiver holds %d requests, want 2", got)
	}
}

// BenchmarkDispatchWriteLatency measures a content create (which publishes
// and so queues a delivery) with an idle outbox and with 1,000 deliveries
// pending to a hanging receiver.
func BenchmarkDispatchWriteLatency(b *testing.B) {
	for _, backlog := range []int{0, 1000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) {
			e := e2eNew(b)
			hang := e2eHang(b)
			e.start(time.Hour, nil)
			hook := e.hook(map[string]any{"url": hang.URL, "timeoutSeconds": 120})
			dispatchBacklog(b, e, hook, backlog)
			ctx := context.Background()
			name, pub := "block", store.ContentPublished
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.DB.CreateContent(ctx, e.App, store.ContentInput{Name: &name, Status: &pub}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// dispatchSink is a receiver that counts requests and says when it has
// seen target of them.
type dispatchSink struct {
	srv    *httptest.Server
	count  atomic.Int64
	target atomic.Int64
	done   chan struct{}
}

func dispatchNewSink(b *testing.B, delay time.Duration) *dispatchSink {
	s := &dispatchSink{done: make(chan struct{}, 1)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if delay > 0 {
			time.Sleep(delay)
		}
		w.WriteHeader(http.StatusNoContent)
		if s.count.Add(1) == s.target.Load() {
			s.done <- struct{}{}
		}
	}))
	b.Cleanup(s.srv.Close)
	return s
}

func (s *dispatchSink) expect(n int) {
	s.count.Store(0)
	s.target.Store(int64(n))
}

// BenchmarkDispatchVsBare compares deliveries per second through the
// dispatcher (claim, sign, POST, record, all durable) with a bare loop of
// the same signed POSTs on the same client, in the same run. The receiver
// answers at once (the dispatcher's own cost) or after 2 ms (a receiver on
// a network, where that cost hides behind the round trip).
func BenchmarkDispatchVsBare(b *testing.B) {
	for _, tc := range []struct {
		per   int
		delay time.Duration
	}{{1, 0}, {2, 0}, {8, 0}, {1, 2 * time.Millisecond}, {2, 2 * time.Millisecond}} {
		batch := 1000
		if tc.delay > 0 {
			batch = 200
		}
		per := tc.per
		b.Run(fmt.Sprintf("perWebhook=%d/receiver=%s", per, tc.delay), func(b *testing.B) {
			sink := dispatchNewSink(b, tc.delay)
			client := webhooks.NewClient()
			payload := []byte(`{"webhookId":1,"message":"bench","sentAt":"2030-01-01T00:00:00.000Z"}`)
			body := webhooks.Envelope(store.EventWebhookTest, time.Now(), payload)
			sig := webhooks.Sign("secret", payload)
			var bare, disp time.Duration
			for b.Loop() {
				sink.expect(batch)
				start := time.Now()
				for i := range batch {
					req, _ := http.NewRequest(http.MethodPost, sink.srv.URL, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("User-Agent", webhooks.UserAgent)
					req.Header.Set("X-Service-Event", store.EventWebhookTest)
					req.Header.Set("X-Service-Delivery-ID", strconv.Itoa(i))
					req.Header.Set("X-Service-Signature", sig)
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
					resp.Body.Close()
				}
				bare += time.Since(start)
				<-sink.done

				b.StopTimer()
				e := e2eNew(b)
				hook := e.hook(map[string]any{"url": sink.srv.URL, "secret": "secret"})
				dispatchBacklog(b, e, hook, batch)
				sink.expect(batch)
				d := &webhooks.Dispatcher{DB: e.DB, RetryBase: time.Hour, PerWebhook: per, Client: client,
					Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
				e.DB.Notify = d.Wake
				ctx, cancel := context.WithCancel(context.Background())
				stopped := make(chan error, 1)
				b.StartTimer()
				start = time.Now()
				go func() { stopped <- d.Run(ctx) }()
				<-sink.done
				// Wait until every attempt is recorded, not just sent.
				for {
					if list, _, err := e.DB.FindDeliveries(context.Background(), e.App, hook, store.DeliveryPending, store.ListOptions{Limit: 1, Page: 1}); err != nil {
						b.Fatal(err)
					} else if len(list) == 0 {
						break
					}
					time.Sleep(time.Millisecond)
				}
				disp += time.Since(start)
				b.StopTimer()
				cancel()
				<-stopped
				b.StartTimer()
			}
			bareRate := float64(b.N*batch) / bare.Seconds()
			dispRate := float64(b.N*batch) / disp.Seconds()
			b.ReportMetric(bareRate, "bare-deliveries/s")
			b.ReportMetric(dispRate, "dispatch-deliveries/s")
			b.ReportMetric(dispRate/bareRate, "ratio")
		})
	}
}

// dispatchPeakReceiver answers after delay, or hangs once hang is set; it
// records the delivery ids it answered and the most requests it held at
// once. Only upper bounds on that peak are asserted: they are the
// dispatcher's promise, whereas how many sends happen to overlap at an
// instant depends on the machine's load.
type dispatchPeakReceiver struct {
	srv     *httptest.Server
	holding atomic.Int64
	peak    atomic.Int64
	hang    atomic.Bool
	mu      sync.Mutex
	served  map[string]int
}

func dispatchPeak(t *testing.T, delay time.Duration) *dispatchPeakReceiver {
	t.Helper()
	r := &dispatchPeakReceiver{served: map[string]int{}}
	release := make(chan struct{})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Read to the end, so the server notices when the client gives up.
		_, _ = io.Copy(io.Discard, req.Body)
		n := r.holding.Add(1)
		defer r.holding.Add(-1)
		for p := r.peak.Load(); n > p && !r.peak.CompareAndSwap(p, n); p = r.peak.Load() {
		}
		if r.hang.Load() {
			select {
			case <-release:
			case <-req.Context().Done():
			}
			return
		}
		time.Sleep(delay)
		r.mu.Lock()
		r.served[req.Header.Get("X-Service-Delivery-ID")]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		close(release)
		r.srv.Close()
	})
	return r
}

// count returns how many distinct deliveries were answered.
func (r *dispatchPeakReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.served)
}

// dispatchExactlyOnce waits until every delivery of hook is recorded as
// succeeded, then checks that each of the n arrived exactly once at the
// receiver whose per-delivery counts served returns.
func dispatchExactlyOnce(t *testing.T, e *e2eEnv, hook int64, n int, served func() map[string]int) {
	t.Helper()
	e2eEventually(t, e2ePatience, fmt.Sprintf("%d deliveries succeeded", n), func() bool {
		list, _, err := e.DB.FindDeliveries(context.Background(), e.App, hook, store.DeliveryPending, store.ListOptions{Limit: 1, Page: 1})
		return err == nil && len(list) == 0
	})
	got := served()
	if len(got) != n {
		t.Fatalf("%d distinct deliveries arrived, want %d", len(got), n)
	}
	for id, k := range got {
		if k != 1 {
			t.Fatalf("delivery %s arrived %d times, want once", id, k)
		}
	}
}

func (r *dispatchPeakReceiver) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.served)
}

func TestDispatchAdaptivePerWebhookCap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		// maxPeak bounds the receiver's concurrent requests: Workers for a
		// receiver that answers within FastResponse, PerWebhook for one
		// that never does.
		maxPeak int64
	}{
		{"FastReceiverMayUseThePool", 2 * time.Millisecond, 4},
		{"SlowReceiverKeepsPerWebhook", 60 * time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e2eNew(t)
			rcv := dispatchPeak(t, tc.delay)
			e.start(time.Hour, func(d *webhooks.Dispatcher) {
				d.Workers, d.PerWebhook, d.FastResponse = 4, 1, 50*time.Millisecond
			})
			hook := e.hook(map[string]any{"url": rcv.srv.URL})
			const n = 40
			dispatchBacklog(t, e, hook, n)
			dispatchExactlyOnce(t, e, hook, n, rcv.snapshot)
			if got := rcv.peak.Load(); got > tc.maxPeak {
				t.Fatalf("peak concurrency %d, want at most %d", got, tc.maxPeak)
			}
		})
	}
}

// A fast receiver that starts hanging keeps the sends it holds until its
// timeout, but they do not count against the other webhooks' workers: the
// deliveries claimed ahead for it are released, and another webhook is
// served while it hangs. The hanging receiver's timeout outlasts the test,
// so "while it hangs" needs no timing window.
func TestDispatchFastReceiverThatHangsFallsBack(t *testing.T) {
	e := e2eNew(t)
	rcv := dispatchPeak(t, time.Millisecond)
	other := e2eListen(t, nil)
	e.start(time.Hour, func(d *webhooks.Dispatcher) {
		d.Workers, d.PerWebhook, d.FastResponse = 4, 1, 50*time.Millisecond
	})
	hook := e.hook(map[string]any{"url": rcv.srv.URL, "timeoutSeconds": 120})
	dispatchBacklog(t, e, hook, 20)
	dispatchExactlyOnce(t, e, hook, 20, rcv.snapshot)
	rcv.hang.Store(true)
	dispatchBacklog(t, e, hook, 200)
	e2eEventually(t, e2ePatience, "receiver hanging", func() bool { return rcv.holding.Load() > 0 })
	otherHook := e.hook(map[string]any{"url": other.URL})
	dispatchBacklog(t, e, otherHook, 5)
	other.wait(t, 5, e2ePatience)
	dispatchExactlyOnce(t, e, otherHook, 5, func() map[string]int {
		m := map[string]int{}
		for _, h := range other.Hits() {
			m[h.Header.Get("X-Service-Delivery-ID")]++
		}
		return m
	})
	if got := rcv.peak.Load(); got > 4 {
		t.Fatalf("the hanging receiver held %d requests at once, want at most Workers (4)", got)
	}
	// None of the hanging sends was answered, so none counts as served.
	if got := rcv.count(); got != 20 {
		t.Fatalf("the hanging receiver answered %d deliveries, want the 20 from before it hung", got)
	}
}
