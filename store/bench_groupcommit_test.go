package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/assign"
)

// BenchmarkGroupCommit: each operation is n writes of one kind submitted
// together, as n concurrent requests submit them, and waited for; the
// batcher folds them into as few commits as it can. It reports
// req/commit (what one commit carried), µs/item and allocs/item (per
// write: n=1 is one write's latency, n=64 the cost of a write in a full
// group commit). The kinds are the SDK's writes:
//
//	Events        an event of a user (event row, user sighting)
//	Conversions   a goal event of an assigned user who has not converted
//	              (of 20,000: run it with -benchtime=100x or less, past
//	              which users convert again and memory answers them)
//	MetricEvents  an event of an assigned user that moves one or two of a
//	              campaign's five metrics (values and sums)
//	NewUsers      a new user's first assignment and impression
//	Exposures     the same, recorded as an exposure of the hash's variant
//	NewLinks      a new pair of userId and sessionId: the user's first
//	              assignment and impression, and the session's link
//
// Run it on PostgreSQL as the other store benchmarks (SERVICE_TEST_STORE).
func BenchmarkGroupCommit(b *testing.B) {
	ctx := context.Background()
	kinds := []struct {
		name string
		// setup makes the database and returns it, one write, and a
		// check of what the writes left, given how many were made.
		setup func(b *testing.B) (db *DB, op func(i int64) error, check func(b *testing.B, writes int64))
	}{
		{"Events", func(b *testing.B) (*DB, func(int64) error, func(*testing.B, int64)) {
			db, app := eventsBenchDB(b)
			meta := []byte(`{"amount":12}`)
			return db, func(i int64) error {
				in := EventInput{EventID: "view", UserID: fmt.Sprint("u-", i%2000), Metadata: meta}
				return eventLogged(db.LogEvent(ctx, app, &in))
			}, eventsCheck(db, app)
		}},
		{"Conversions", func(b *testing.B) (*DB, func(int64) error, func(*testing.B, int64)) {
			db, app := eventsBenchDB(b)
			c := mustCreateCampaign(b, db, app, "buy", []testArm{{alloc: 50, control: true}, {alloc: 50}})
			const users = 20000
			parallel(b, users, func(i int) error {
				_, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("c-", i)}, nil)
				return err
			})
			return db, func(i int64) error {
					in := EventInput{EventID: "buy", UserID: fmt.Sprint("c-", i%users)}
					return eventLogged(db.LogEvent(ctx, app, &in))
				}, func(b *testing.B, writes int64) {
					if n := countRows(b, db, `SELECT SUM(conversions) FROM campaign_variants WHERE campaign_id = ?`, c.ID); n != min(writes, users) {
						b.Fatalf("%d conversions, want %d", n, min(writes, users))
					}
				}
		}},
		{"MetricEvents", func(b *testing.B) (*DB, func(int64) error, func(*testing.B, int64)) {
			db, app, _ := mustOpenApp(b, eventsT0)
			db.Now = time.Now // real time: the benchmarks measure real commits
			ids := []int64{
				metricDef(b, db, app, `{"key":"views","name":"Page views","type":"count","eventId":"page_view"}`),
				metricDef(b, db, app, `{"key":"revenue","name":"Revenue","type":"sum","eventId":"order","property":"revenue","cap":500}`),
				metricDef(b, db, app, `{"key":"orders-7d","name":"Ordered within a week","type":"conversion","eventId":"order","windowHours":168}`),
				metricDef(b, db, app, `{"key":"carts","name":"Added to cart","type":"count","eventId":"add_to_cart","windowHours":24}`),
				metricDef(b, db, app, `{"key":"latency","name":"Page time","type":"sum","eventId":"page_view","property":"ms","direction":"decrease","cap":10000}`),
			}
			c := metricCampaign(b, db, app, fmt.Sprintf(`{"secondary":[%d,%d,%d],"guardrails":[%d,%d]}`, ids[0], ids[1], ids[2], ids[3], ids[4]))
			const users = 1000
			parallel(b, users, func(i int) error {
				_, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("m-", i)}, nil)
				return err
			})
			events := []struct {
				id   string
				meta string
			}{{"page_view", `{"ms":%d}`}, {"add_to_cart", `{"n":%d}`}, {"page_view", `{"ms":%d}`}, {"order", `{"revenue":%d}`}}
			check := eventsCheck(db, app)
			return db, func(i int64) error {
					ev := events[i%4]
					in := EventInput{EventID: ev.id, UserID: fmt.Sprint("m-", i%users), Metadata: fmt.Appendf(nil, ev.meta, i%1000)}
					return eventLogged(db.LogEvent(ctx, app, &in))
				}, func(b *testing.B, writes int64) {
					check(b, writes)
					// Every metric moved: each has values of users.
					applyMoves(b, db)
					for _, id := range ids {
						if n := countRows(b, db, `SELECT COUNT(*) FROM metric_values WHERE metric_id = ?`, id); n == 0 {
							b.Fatalf("metric %d has no values after %d events", id, writes)
						}
					}
				}
		}},
		{"NewUsers", func(b *testing.B) (*DB, func(int64) error, func(*testing.B, int64)) {
			db, app := eventsBenchDB(b)
			c := mustCreateCampaign(b, db, app, "signup", []testArm{{alloc: 50, control: true}, {alloc: 50}})
			return db, func(i int64) error {
				return impressionRecorded(db.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("new-", i)}, nil))
			}, impressionsCheck(db, c.ID)
		}},
		{"Exposures", func(b *testing.B) (*DB, func(int64) error, func(*testing.B, int64)) {
			db, app := eventsBenchDB(b)
			c := mustCreateCampaign(b, db, app, "signup", []testArm{{alloc: 50, control: true}, {alloc: 50}})
			weights := []float64{50, 50}
			return db, func(i int64) error {
				user := fmt.Sprint("x-", i)
				x := Exposure{CampaignID: c.ID, VariantID: c.Variants[assign.Pick(assign.Bucket(c.ID, user), weights)].ID, UserID: user}
				reason, err := db.Expose(ctx, app, &x)
				if err == nil && reason != "" {
					err = fmt.Errorf("exposure of %s refused: %s", user, reason)
				}
				return err
			}, impressionsCheck(db, c.ID)
		}},
		{"NewLinks", func(b *testing.B) (*DB, func(int64) error, func(*testing.B, int64)) {
			db, app := eventsBenchDB(b)
			c := mustCreateCampaign(b, db, app, "signup", []testArm{{alloc: 50, control: true}, {alloc: 50}})
			impressions := impressionsCheck(db, c.ID)
			return db, func(i int64) error {
					return impressionRecorded(db.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("lu-", i), SessionID: fmt.Sprint("ls-", i)}, nil))
				}, func(b *testing.B, writes int64) {
					impressions(b, writes)
					if n := countRows(b, db, `SELECT COUNT(*) FROM session_links`); n != writes {
						b.Fatalf("%d session links, want %d", n, writes)
					}
				}
		}},
	}
	for _, kind := range kinds {
		b.Run(kind.name, func(b *testing.B) {
			db, op, check := kind.setup(b)
			var seq atomic.Int64
			for _, n := range []int{1, 16, 64} {
				b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
					benchGroupCommit(b, db, n, &seq, op)
				})
			}
			check(b, seq.Load())
		})
	}
}

// benchGroupCommit runs b.N operations of n concurrent calls of op, each
// with the next number of seq, on db.
func benchGroupCommit(b *testing.B, db *DB, n int, seq *atomic.Int64, op func(i int64) error) {
	errs := make([]error, n)
	var before, after runtime.MemStats
	c0, o0 := db.batch.stats()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for j := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[j] = op(seq.Add(1))
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	if c1, o1 := db.batch.stats(); c1 > c0 {
		b.ReportMetric(float64(o1-o0)/float64(c1-c0), "req/commit")
	}
	items := float64(b.N * n)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/items, "µs/item")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/items, "allocs/item")
}

// parallel runs fn(0) … fn(n-1) from 64 goroutines, so that setup writes
// share group commits.
func parallel(b *testing.B, n int, fn func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// eventLogged is LogEvent's error, or one for an answer that is not a
// new stored event.
func eventLogged(res *EventResult, err error) error {
	if err == nil && (!res.Success || res.ID == 0 || res.Duplicate) {
		err = fmt.Errorf("event not logged: %+v", res)
	}
	return err
}

// impressionRecorded is Variant's error, or one for an answer that is not
// a new user's first impression.
func impressionRecorded(answer []byte, err error) error {
	if err == nil && !strings.HasSuffix(string(answer), `"impressionRecorded":true}`) {
		err = fmt.Errorf("not a first impression: %s", answer)
	}
	return err
}

// eventsCheck fails unless the app holds as many events as were written.
func eventsCheck(db *DB, app int64) func(*testing.B, int64) {
	return func(b *testing.B, writes int64) {
		if n := countRows(b, db, `SELECT COUNT(*) FROM events WHERE app_id = ?`, app); n != writes {
			b.Fatalf("%d events stored, want %d", n, writes)
		}
	}
}

// impressionsCheck fails unless the campaign counts one impression per
// write.
func impressionsCheck(db *DB, campaign int64) func(*testing.B, int64) {
	return func(b *testing.B, writes int64) {
		if n := countRows(b, db, `SELECT SUM(impressions) FROM campaign_variants WHERE campaign_id = ?`, campaign); n != writes {
			b.Fatalf("%d impressions, want %d", n, writes)
		}
	}
}
