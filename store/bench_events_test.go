package store

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// eventsBenchDB is a database with one active campaign whose goal is
// "purchase", so every benchmarked event passes the goal lookup.
func eventsBenchDB(b *testing.B) (*DB, int64) {
	b.Helper()
	db, app, _ := mustOpenApp(b, eventsT0)
	db.Now = time.Now // real time: the benchmarks measure real commits
	mustCreateCampaign(b, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})
	return db, app
}

// BenchmarkLogEvent logs events one after another: each waits for its own
// commit, so this is the latency of one event.
func BenchmarkLogEvent(b *testing.B) {
	db, app := eventsBenchDB(b)
	ctx := context.Background()
	meta := []byte(`{"page":"/checkout","amount":12.5}`)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		in := EventInput{EventID: "view", UserID: fmt.Sprint("user-", i), Metadata: meta}
		if _, err := db.LogEvent(ctx, app, &in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogEventParallel logs from many goroutines at once, which the
// group commit folds into shared transactions: this is throughput.
func BenchmarkLogEventParallel(b *testing.B) {
	db, app := eventsBenchDB(b)
	ctx := context.Background()
	meta := []byte(`{"page":"/checkout","amount":12.5}`)
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8) // SDK traffic is many concurrent clients, not GOMAXPROCS
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			in := EventInput{EventID: "view", UserID: fmt.Sprint("user-", n.Add(1)), Metadata: meta}
			if _, err := db.LogEvent(ctx, app, &in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkLogEventParallelMetrics is BenchmarkLogEventParallel with a
// campaign that has metrics: five on other events (OtherEvents), which
// must cost the event path nothing but a map lookup, and a sum metric of
// the logged event for assigned users (Counted), which reads the
// assignment and moves a user's value and the variant's sums; by
// visitors known by sessionId alone (CountedBySession), whose assignment
// is found through the link a session may have to a user.
func BenchmarkLogEventParallelMetrics(b *testing.B) {
	for _, tc := range []struct {
		name    string
		counted bool
		session bool // visitors known by sessionId alone
	}{{"OtherEvents", false, false}, {"Counted", true, false}, {"CountedBySession", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			db, app, _ := mustOpenApp(b, eventsT0)
			db.Now = time.Now // real time: the benchmarks measure real commits
			ctx := context.Background()
			var ids []string
			for i := range 5 {
				ids = append(ids, fmt.Sprint(metricDef(b, db, app, fmt.Sprintf(`{"key":"m%d","name":"M","type":"count","eventId":"other-%d"}`, i, i))))
			}
			event := "view"
			if tc.counted {
				ids = append(ids, fmt.Sprint(metricDef(b, db, app, `{"key":"rev","name":"Revenue","type":"sum","eventId":"view","property":"amount","cap":100}`)))
			}
			c := metricCampaign(b, db, app, `{"secondary":[`+strings.Join(ids, ",")+`]}`)
			const users = 1000
			if tc.counted {
				for i := range users {
					req := VariantRequest{UserID: fmt.Sprint("user-", i)}
					if tc.session {
						req = VariantRequest{SessionID: fmt.Sprint("user-", i)}
					}
					mustAssign(b, db, app, c.ID, req)
				}
			}
			meta := []byte(`{"page":"/checkout","amount":12.5}`)
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					in := EventInput{EventID: event, UserID: fmt.Sprint("user-", n.Add(1)%users), Metadata: meta}
					if tc.session {
						in.SessionID, in.UserID = in.UserID, ""
					}
					if _, err := db.LogEvent(ctx, app, &in); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAnalytics1M reports on a campaign with a million impressions.
// The counters carry the numbers and a million assignment rows sit beside
// them: the report must read the counters, never scan the assignments.
func BenchmarkAnalytics1M(b *testing.B) {
	const users = 1_000_000
	db, app, _ := mustOpenApp(b, eventsT0)
	ctx := context.Background()
	c := mustCreateCampaign(b, db, app, "purchase", []testArm{{50, true, 0, 0}, {50, false, 0, 0}})

	// Built once: b.Loop runs this function body a single time.
	start := time.Now()
	if _, err := db.write.Exec(`UPDATE campaign_variants SET impressions = ?,
		conversions = CASE WHEN is_control THEN 50000 ELSE 52000 END WHERE campaign_id = ?`, users/2, c.ID); err != nil {
		b.Fatal(err)
	}
	tx, err := db.write.Begin()
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at, converted_at) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	at := ms(eventsT0)
	for i := range users {
		var converted any
		if i%10 == 0 {
			converted = at + 1
		}
		if _, err := stmt.Exec(c.ID, fmt.Sprintf("u:user-%07d", i), c.Variants[i%2].ID, at, converted); err != nil {
			b.Fatal(err)
		}
	}
	if err := stmt.Close(); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d assignments in %v", users, time.Since(start).Round(time.Millisecond))

	a, err := db.CampaignAnalytics(ctx, app, c.ID)
	if err != nil {
		b.Fatal(err)
	}
	if a.TotalImpressions != users || a.TotalConversions != 102000 || !a.StatisticalSignificance {
		b.Fatalf("analytics=%+v, want %d impressions, 102000 conversions, significant", a, users)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.CampaignAnalytics(ctx, app, c.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindEvents1M queries an app holding a million events (ten event
// ids, 50,000 users, three events a millisecond), once per filter shape.
func BenchmarkFindEvents1M(b *testing.B) {
	const events = 1_000_000
	db, app, _ := mustOpenApp(b, eventsT0)
	ctx := context.Background()
	tx, err := db.write.Begin()
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO events (app_id, event_id, user_id, ts) VALUES (?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	t0 := ms(eventsT0)
	for i := range events {
		if _, err := stmt.Exec(app, fmt.Sprint("ev", i%10), fmt.Sprint("u", i%50000), t0+int64(i/3)); err != nil {
			b.Fatal(err)
		}
	}
	if err := stmt.Close(); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := db.indexAll(ctx); err != nil {
		b.Fatal(err)
	}
	start := eventsT0.Add(100 * time.Second)
	for _, tc := range []struct {
		name string
		f    EventFilter
	}{
		{"Newest", EventFilter{}},
		{"Before", EventFilter{Before: events / 2}},
		{"EventID", EventFilter{EventID: "ev3"}},
		{"UserID", EventFilter{UserID: "u7"}},
		{"StartDate", EventFilter{Start: &start}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tc.f.Limit = 100
			for b.Loop() {
				if _, err := db.FindEvents(ctx, app, tc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
