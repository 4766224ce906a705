package cmd_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"service/internal/journeys"
	"service/internal/pgtest"
	"service/store"
)

// TestReplicasE2EJourneys sends visitors' journeys from an anonymous
// visit to a purchase after signing up (journeys.Run) through three
// replicas on one database, each request of a journey to the next replica:
// the visit, the sign-up and the purchase of one person are served by
// different processes, whose memories know nothing of each other. Every
// person must see one variant, and the campaign's analytics must count
// impressions equal to people and conversions equal to the people who
// purchased.
func TestReplicasE2EJourneys(t *testing.T) {
	e := newReplicaEnv(t)
	e.start(3)
	// A count metric on every view: the replicas' appliers share the
	// journal of its moves, and links move a session's values between
	// processes' passes.
	views := e2eNum(e.rs[0].call(t, http.StatusCreated, "POST", "/apps/"+e.app+"/metrics", e.admin,
		map[string]any{"key": "views", "name": "Views", "type": "count", "eventId": "view"}), "id")
	id := e.campaign(e.rs[0], "Journeys", time.Now().Add(24*time.Hour), map[string]any{"key": "journeys", "goalEventId": "buy",
		"metrics": map[string]any{"secondary": []any{views}}})
	app, _ := strconv.ParseInt(e.app, 10, 64)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	do := func(ctx context.Context, i, step int, method, path, key string, body []byte) (int, []byte, error) {
		s := e.rs[(i+step)%len(e.rs)]
		req, err := http.NewRequestWithContext(ctx, method, s.root()+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, err
	}
	// On PostgreSQL, the deadlocks the run cost (each one its victim's
	// deadlock_timeout), for the log: they are answered, not failures.
	deadlocks := func() int64 { return 0 }
	if pgtest.Selected() {
		raw, err := store.OpenSQL(e.db)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		deadlocks = func() int64 {
			var n int64
			if err := raw.QueryRow(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	before := deadlocks()
	start := time.Now()
	res, err := journeys.Run(context.Background(), journeys.Config{N: replicaJourneys, Workers: 48, AppID: app, CampaignID: id,
		CampaignKey: "journeys", ClientKey: e.client, Prefix: "r", Goal: "buy", View: "view"}, do)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d journeys, %d requests over %d replicas in %v, %d deadlocks", res.People, res.Requests, len(e.rs), time.Since(start).Round(time.Millisecond), deadlocks()-before)
	ana := e.rs[2].call(t, http.StatusOK, "GET", "/campaigns/"+strconv.FormatInt(id, 10)+"/analytics", e.admin, nil)
	var people, converted, want int64
	for _, v := range ana["variants"].([]any) {
		vm := v.(map[string]any)
		vid := e2eNum(vm, "variantId")
		if got, want := e2eNum(vm, "impressions"), res.ByVariant[vid]; got != want {
			t.Errorf("variant %d: impressions %d, want %d people", vid, got, want)
		}
		if got, want := e2eNum(vm, "conversions"), res.Converted[vid]; got != want {
			t.Errorf("variant %d: conversions %d, want %d converting people", vid, got, want)
		}
		people += e2eNum(vm, "impressions")
		converted += e2eNum(vm, "conversions")
		want += res.Converted[vid]
	}
	if people != int64(res.People) || converted != want {
		t.Errorf("impressions %d, conversions %d; want %d people, %d converting", people, converted, res.People, want)
	}
	// The views metric holds every person once and every view once.
	var total int64
	for _, m := range ana["metrics"].([]any) {
		for _, v := range m.(map[string]any)["variants"].([]any) {
			vm := v.(map[string]any)
			total += e2eNum(vm, "total")
			if got, want := e2eNum(vm, "users"), res.ByVariant[e2eNum(vm, "variantId")]; got != want {
				t.Errorf("views metric, variant %d: users %d, want %d", e2eNum(vm, "variantId"), got, want)
			}
		}
	}
	if total != res.Views || res.Views == 0 {
		t.Errorf("views metric total %d, want the %d views logged", total, res.Views)
	}
}

// replicaJourneys is how many journeys the replicas test sends: half the
// in-process test's 10,000, which check the same rules on each store in
// process, since here every request crosses a socket and three servers
// share the machine's cores (10,000 took 33 s on PostgreSQL on a busy
// two-core machine).
const replicaJourneys = 5000
