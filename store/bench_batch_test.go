package store

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The group-commit benchmarks: 64 concurrent callers, as many as the load
// test's connections, write through the batcher under GOMAXPROCS=1 and 2.
// Besides ns/op they report req/commit (how many requests one commit
// carried), µs/user or µs/event (wall time per write) and cpu-µs/user or
// cpu-µs/event (the process's CPU time per write, steadier on a busy
// machine). On SQLite they also report wpages/commit: what the process
// wrote to files (the WAL and the checkpoints' copies) per commit, in
// 4 KiB pages. It moves by a few percent from run to run where CPU time
// moves by ten, so a statement that makes every commit write one more
// page shows in it. The gather=off
// cases commit whatever is queued without yielding first, so one run shows
// what gathering is worth on this machine at this moment.

const benchCallers = 64

// benchBatch runs op b.N times from benchCallers goroutines under procs
// scheduler threads and reports the batcher's requests per commit and the
// wall time per operation under unit.
func benchBatch(b *testing.B, db *DB, procs int, unit string, op func(i int64) error, finish ...func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	c0, o0 := db.batch.stats()
	cpu0 := cpuTime()
	w0, wrote := writtenBytes()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range benchCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// What the writes leave to finish counts as theirs.
	for _, f := range finish {
		f()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	c1, o1 := db.batch.stats()
	if c1 > c0 {
		b.ReportMetric(float64(o1-o0)/float64(c1-c0), "req/commit")
	}
	b.ReportMetric(float64(elapsed.Microseconds())/float64(b.N), unit)
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-"+unit)
	// PostgreSQL's writes are its server's, not this process's.
	if w1, ok := writtenBytes(); ok && wrote && c1 > c0 && !IsPostgresURL(db.path) {
		b.ReportMetric(float64(w1-w0)/4096/float64(c1-c0), "wpages/commit")
	}
}

// writtenBytes is what the process has written through write system
// calls so far (wchar in /proc/self/io), where Linux tells it.
func writtenBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// cpuTime is the process's CPU time so far (user and system): on a busy
// machine it measures the work per operation where wall time measures the
// neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCases runs fn for GOMAXPROCS 1 and 2, with and without gathering.
func benchCases(b *testing.B, fn func(b *testing.B, procs int, gather bool)) {
	for _, procs := range []int{1, 2} {
		for _, gather := range []bool{false, true} {
			b.Run(fmt.Sprintf("procs=%d/gather=%s", procs, map[bool]string{false: "off", true: "on"}[gather]), func(b *testing.B) {
				fn(b, procs, gather)
			})
		}
	}
}

// BenchmarkBatchNewUsers: each operation is a new user's first variant
// request on an active two-variant campaign (user, assignment, impression).
func BenchmarkBatchNewUsers(b *testing.B) {
	benchCases(b, func(b *testing.B, procs int, gather bool) {
		db, app := eventsBenchDB(b)
		db.batch.noGather = !gather
		c := mustCreateCampaign(b, db, app, "signup", []testArm{{alloc: 50, control: true}, {alloc: 50}})
		benchNewUsers(b, db, app, c.ID, procs)
	})
}

// benchNewUsers measures new users' first variant requests in a campaign.
func benchNewUsers(b *testing.B, db *DB, app, campaign int64, procs int) {
	ctx := context.Background()
	var buf sync.Pool
	benchBatch(b, db, procs, "µs/user", func(i int64) error {
		dst, _ := buf.Get().([]byte)
		req := VariantRequest{UserID: fmt.Sprint("new-", i)}
		dst, err := db.Variant(ctx, app, campaign, &req, dst[:0])
		buf.Put(dst)
		return err
	})
}

// BenchmarkBatchNewUsersRoundRobin is BenchmarkBatchNewUsers on a round
// robin campaign that already holds 100,000 assignments: a commit looks up
// its users' stored answers, and that must not cost the campaign's size.
func BenchmarkBatchNewUsersRoundRobin(b *testing.B) {
	benchCases(b, func(b *testing.B, procs int, gather bool) {
		db, app := eventsBenchDB(b)
		db.batch.noGather = !gather
		c := metricCampaign(b, db, app, `{}`)
		fillAtScale(b, db, 100000, "assignments", `INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at)
			SELECT ?, 'u:old-' || i, ?, 0 FROM n`, c.ID, c.Variants[0].ID)
		benchNewUsers(b, db, app, c.ID, procs)
	})
}

// BenchmarkBatchEvents: each operation logs an event with metadata for one
// of 2,000 users (event row, user sighting); conversions are left out, as
// a user converts once and is then answered from memory.
func BenchmarkBatchEvents(b *testing.B) {
	benchEvents(b, func(i int64) EventInput { return EventInput{UserID: fmt.Sprint("u-", i%2000)} })
}

// BenchmarkBatchSessionEvents: BenchmarkBatchEvents for 2,000 visitors
// known only by a sessionId (make load's identities_events): on SQLite
// such events are indexed by session in event_users' sorted runs.
func BenchmarkBatchSessionEvents(b *testing.B) {
	benchEvents(b, func(i int64) EventInput { return EventInput{SessionID: fmt.Sprint("s-", i%2000)} })
}

// benchEvents logs a view with metadata for each operation, by the key
// that by gives it.
func benchEvents(b *testing.B, by func(i int64) EventInput) {
	benchCases(b, func(b *testing.B, procs int, gather bool) {
		db, app := eventsBenchDB(b)
		db.batch.noGather = !gather
		ctx := context.Background()
		meta := []byte(`{"amount":12}`)
		benchBatch(b, db, procs, "µs/event", func(i int64) error {
			in := by(i)
			in.EventID, in.Metadata = "view", meta
			_, err := db.LogEvent(ctx, app, &in)
			return err
		})
	})
}

// BenchmarkBatchMetricEvents: the events of make load's metrics workload.
// A campaign measures five metrics (two counts, a capped sum, a windowed
// conversion, a capped sum to decrease) over 2,000 assigned users, and
// each operation logs one of four events that move one or two of them;
// an order also converts the goal.
func BenchmarkBatchMetricEvents(b *testing.B) {
	benchCases(b, func(b *testing.B, procs int, gather bool) {
		db, app := eventsBenchDB(b)
		db.batch.noGather = !gather
		ids := []string{
			fmt.Sprint(metricDef(b, db, app, `{"key":"views","name":"Page views","type":"count","eventId":"page_view"}`)),
			fmt.Sprint(metricDef(b, db, app, `{"key":"revenue","name":"Revenue","type":"sum","eventId":"order","property":"revenue","cap":500}`)),
			fmt.Sprint(metricDef(b, db, app, `{"key":"orders-7d","name":"Ordered","type":"conversion","eventId":"order","windowHours":168}`)),
			fmt.Sprint(metricDef(b, db, app, `{"key":"carts","name":"Carts","type":"count","eventId":"add_to_cart","windowHours":24}`)),
			fmt.Sprint(metricDef(b, db, app, `{"key":"latency","name":"Page time","type":"sum","eventId":"page_view","property":"ms","direction":"decrease","cap":10000}`)),
		}
		c := metricCampaign(b, db, app, `{"secondary":[`+strings.Join(ids[:3], ",")+`],"guardrails":[`+strings.Join(ids[3:], ",")+`]}`)
		const users = 2000
		for i := range users {
			mustAssign(b, db, app, c.ID, VariantRequest{UserID: fmt.Sprint("m-", i)})
		}
		ctx := context.Background()
		events := [4]string{"page_view", "add_to_cart", "page_view", "order"}
		metas := [4]string{`{"ms":%d}`, `{"n":%d}`, `{"ms":%d}`, `{"revenue":%d}`}
		// The leader's applier runs beside the events, and what it left is
		// applied before the clock stops: the values' writes are the
		// events' cost.
		applier, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(MetricMovesEvery)
			defer t.Stop()
			for {
				select {
				case <-applier.Done():
					return
				case <-t.C:
					if err := db.ApplyMetricMovesPaced(applier); err != nil && applier.Err() == nil {
						b.Error(err)
					}
				}
			}
		}()
		benchBatch(b, db, procs, "µs/event", func(i int64) error {
			in := EventInput{EventID: events[i%4], UserID: fmt.Sprint("m-", i%users), Metadata: fmt.Appendf(nil, metas[i%4], i%1000)}
			_, err := db.LogEvent(ctx, app, &in)
			return err
		}, func() {
			stop()
			<-done
			applyMoves(b, db)
		})
	})
}
