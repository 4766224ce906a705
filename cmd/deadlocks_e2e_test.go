package cmd_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/pgtest"
	"service/store"
)

// TestReplicasE2ENoDeadlocks: three replicas on one database take the mix
// that made their group commits wait for each other's locks: each new
// user's first variant request sent to two replicas at once, on a
// round-robin campaign and on a weighted one, and goal events, every
// replica's batches holding all three at once. In the PostgreSQL run the
// mix runs for 15 s, and PostgreSQL detects no deadlock: its own count of
// them (pg_stat_database) is the measure, not the requests' latencies,
// which say as much about how busy the machine is (they are logged).
// In either run every request is answered once and correctly: no error,
// one variant per user and campaign, one impression per user, round robin
// splitting its users evenly, one conversion per user.
func TestReplicasE2ENoDeadlocks(t *testing.T) {
	e := newReplicaEnv(t)
	e.start(3)
	end := time.Now().Add(24 * time.Hour)
	rr := e.campaign(e.rs[0], "Round robin", end, map[string]any{"assignmentType": "round_robin", "goalEventId": "buy"})
	weighted := e.campaign(e.rs[0], "Weighted", end, map[string]any{"goalEventId": "buy"})

	// SQLite has one writer at a time: a short run checks the answers.
	run := 2 * time.Second
	var deadlocks func() int64
	var raw *sql.DB
	if pgtest.Selected() {
		run = 15 * time.Second
		var err error
		if raw, err = store.OpenSQL(e.db); err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		raw.SetMaxOpenConns(1) // the one session not the replicas'
		deadlocks = func() int64 {
			var n int64
			if err := raw.QueryRow(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	var before int64
	if deadlocks != nil {
		before = deadlocks()
	}

	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  []string // the first few
		wrong     int
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		wrong++
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	send := func(replica int, path string, body any) (int, map[string]any) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", e.rs[replica].base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+e.client)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			fail("POST %s on replica %d: %v", path, replica, err)
			return 0, nil
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		mu.Lock()
		latencies = append(latencies, took)
		mu.Unlock()
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m
	}
	// twice sends the same request to two replicas at once, as a page
	// that fires twice or a retry through a load balancer does.
	twice := func(r *rand.Rand, path string, body any) [2]map[string]any {
		first := r.IntN(len(e.rs))
		replicas := [2]int{first, (first + 1 + r.IntN(len(e.rs)-1)) % len(e.rs)}
		var out [2]map[string]any
		var status [2]int
		var wg sync.WaitGroup
		for i, replica := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status[i], out[i] = send(replica, path, body)
			}()
		}
		wg.Wait()
		for i, s := range status {
			if s != http.StatusOK && s != http.StatusCreated && s != 0 {
				fail("POST %s %v on replica %d: %d %v", path, body, replicas[i], s, out[i])
			}
		}
		return out
	}

	campaigns := []int64{rr, weighted}
	var users atomic.Int64
	var perVariant sync.Map // variant id -> *atomic.Int64
	deadline := time.Now().Add(run)
	var wg sync.WaitGroup
	const workers, pace = 6, 100 * time.Millisecond // 60 new users a second
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			// goal sends the user's goal event to two replicas at once,
			// without a logId, as a page that fires twice does: two events,
			// one conversion in each campaign.
			goal := func(r *rand.Rand, user string) {
				for _, a := range twice(r, "/apps/"+e.app+"/events", map[string]any{"eventId": "buy", "userId": user}) {
					if a != nil && (e2eNum(a, "id") == 0 || a["duplicate"] == true) {
						fail("event of %s: %v", user, a)
					}
				}
			}
			var last string // assigned in the previous round
			for next := time.Now(); next.Before(deadline) && time.Now().Before(deadline); next = next.Add(pace) {
				// At a steady pace, below what the replicas can take: the
				// latencies are then the requests', not a queue's.
				time.Sleep(time.Until(next))
				user := fmt.Sprint("user-", users.Add(1))
				// Both campaigns at once, each on two replicas at once,
				// and the previous user's goal.
				var inner sync.WaitGroup
				for _, id := range campaigns {
					inner.Add(1)
					rc := rand.New(rand.NewPCG(r.Uint64(), r.Uint64())) // a rand.Rand is not safe for concurrent use
					go func() {
						defer inner.Done()
						path := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", e.app, id)
						as := twice(rc, path, map[string]any{"userId": user})
						if as[0] == nil || as[1] == nil {
							return
						}
						v0, v1 := e2eNum(as[0], "variantId"), e2eNum(as[1], "variantId")
						if v0 == 0 || v0 != v1 {
							fail("campaign %d user %s: variants %v and %v", id, user, as[0], as[1])
						}
						if (as[0]["impressionRecorded"] == true) == (as[1]["impressionRecorded"] == true) {
							fail("campaign %d user %s: impressionRecorded %v and %v, want one true", id, user, as[0]["impressionRecorded"], as[1]["impressionRecorded"])
						}
						n, _ := perVariant.LoadOrStore(v0, new(atomic.Int64))
						n.(*atomic.Int64).Add(1)
					}()
				}
				if last != "" {
					goal(r, last)
				}
				inner.Wait()
				last = user
			}
			goal(r, last)
		}()
	}
	wg.Wait()
	total := users.Load()

	// Stopped, each replica's database sessions end, and report their
	// statistics as they do.
	for _, s := range e.rs {
		if _, _, err := s.term(30 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(latencies)
	p99 := quantile(latencies, 0.99)
	var after int64
	if deadlocks != nil {
		e2eWait(t, 10*time.Second, "the replicas' sessions to end", func() bool {
			var n int
			_ = raw.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
			return n == 0
		})
		after = deadlocks()
	}
	t.Logf("%v: %d users, %d requests, median %v, p99 %v, max %v, deadlocks %d", run, total, len(latencies),
		latencies[len(latencies)/2].Round(time.Millisecond), p99.Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond), after-before)
	if len(failures) > 0 {
		t.Fatalf("%d requests answered wrong, the first: %v", wrong, failures)
	}
	if after != before {
		t.Fatalf("PostgreSQL detected %d deadlocks, want 0", after-before)
	}

	// What was stored: one impression and one conversion per user in each
	// campaign, round robin alternating its variants.
	e.start(1)
	s := e.rs[len(e.rs)-1]
	for _, id := range campaigns {
		an := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d/analytics", id), e.admin, nil)
		if got := e2eNum(an, "totalImpressions"); got != total {
			t.Errorf("campaign %d: totalImpressions=%d, want %d", id, got, total)
		}
		if got := e2eNum(an, "totalConversions"); got != total {
			t.Errorf("campaign %d: totalConversions=%d, want %d", id, got, total)
		}
		if id != rr {
			continue
		}
		vs, _ := an["variants"].([]any)
		var split []int64
		for _, v := range vs {
			vm, _ := v.(map[string]any)
			split = append(split, e2eNum(vm, "impressions"))
			answered := int64(0)
			if n, ok := perVariant.Load(e2eNum(vm, "variantId")); ok {
				answered = n.(*atomic.Int64).Load()
			}
			if answered != e2eNum(vm, "impressions") {
				t.Errorf("round robin variant %v: %d users answered it, %d impressions", vm["variantId"], answered, e2eNum(vm, "impressions"))
			}
		}
		if len(split) != 2 || split[0]-split[1] > 1 || split[1]-split[0] > 1 {
			t.Errorf("round robin split its %d users %v, want evenly", total, split)
		}
	}
}
