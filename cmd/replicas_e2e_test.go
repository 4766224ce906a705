package cmd_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"service/internal/pgtest"
)

// The replica tests run several `service serve` on one database, as a
// deployment behind a load balancer does: in the PostgreSQL run on one
// PostgreSQL database, else on one SQLite file.

// replicaEnv is a database with one app, its keys, and the replicas
// serving it.
type replicaEnv struct {
	t             *testing.T
	db            string
	app           string
	admin, client string
	rs            []*e2eServer
}

func newReplicaEnv(t *testing.T) *replicaEnv {
	t.Helper()
	db := cliDB(t)
	app := strconv.FormatInt(e2eNum(e2eCLI(t, "apps", "create", "--db", db, "--name", "replicas", "--plan", "enterprise"), "id"), 10)
	admin, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", app, "--role", "admin")["key"].(string)
	client, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", app, "--role", "client")["key"].(string)
	return &replicaEnv{t: t, db: db, app: app, admin: admin, client: client}
}

// start starts n more replicas with flags.
func (e *replicaEnv) start(n int, flags ...string) {
	e.t.Helper()
	for range n {
		e.rs = append(e.rs, e2eServe(e.t, append([]string{"--db", e.db}, flags...)...))
	}
}

// alive returns the replicas that were not killed.
func (e *replicaEnv) alive() []*e2eServer {
	var out []*e2eServer
	for _, s := range e.rs {
		if s.cmd.ProcessState == nil {
			out = append(out, s)
		}
	}
	return out
}

// leadingSince reports whether s leads the scheduled work by its log, and
// since when.
func leadingSince(s *e2eServer) (bool, time.Time) {
	leading, since := false, time.Time{}
	for _, l := range s.Logs() {
		switch l["msg"] {
		case "leading the scheduled work":
			leading = true
			since, _ = time.Parse(time.RFC3339Nano, fmt.Sprint(l["time"]))
		case "lost the leadership of the scheduled work; waiting to lead again", "released the leadership of the scheduled work":
			leading = false
		}
	}
	return leading, since
}

// leaders waits until the live replicas' leadership settles (one leader
// on PostgreSQL, every replica on SQLite) and returns the leaders.
func (e *replicaEnv) leaders() []*e2eServer {
	e.t.Helper()
	var out []*e2eServer
	e2eWait(e.t, 30*time.Second, "the replicas' leadership", func() bool {
		out = out[:0]
		live := e.alive()
		for _, s := range live {
			if ok, _ := leadingSince(s); ok {
				out = append(out, s)
			}
		}
		if pgtest.Selected() {
			return len(out) == 1
		}
		return len(out) == len(live)
	})
	return out
}

// hookReceiver records the webhook deliveries it is sent.
type hookReceiver struct {
	url string
	mu  sync.Mutex
	got []hookHit
}

type hookHit struct {
	event, deliveryID string
	data              map[string]any
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	h := &hookReceiver{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Data map[string]any `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		h.mu.Lock()
		h.got = append(h.got, hookHit{r.Header.Get("X-Service-Event"), r.Header.Get("X-Service-Delivery-ID"), env.Data})
		h.mu.Unlock()
	})}
	ln := listenLocal(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	h.url = "http://" + ln.Addr().String() + "/hook"
	return h
}

// of returns the deliveries of event about campaign id.
func (h *hookReceiver) of(event string, id int64) []hookHit {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookHit
	for _, g := range h.got {
		if f, _ := g.data["campaignId"].(float64); g.event == event && int64(f) == id {
			out = append(out, g)
		}
	}
	return out
}

// campaign creates an active campaign of two published blocks through s,
// ending at end.
func (e *replicaEnv) campaign(s *e2eServer, name string, end time.Time, extra map[string]any) int64 {
	e.t.Helper()
	var variants []any
	for _, v := range []string{"Control", "Treatment"} {
		cv := s.call(e.t, http.StatusCreated, "POST", "/apps/"+e.app+"/content", e.admin, map[string]any{
			"name": name + " " + v, "status": "published", "items": []any{map[string]any{"type": "text", "content": v}}})
		variants = append(variants, map[string]any{"contentViewId": e2eNum(cv, "id"), "name": v})
	}
	body := map[string]any{"name": name, "status": "active", "endDate": end.UTC().Format(time.RFC3339Nano), "variants": variants}
	for k, v := range extra {
		body[k] = v
	}
	return e2eNum(s.call(e.t, http.StatusCreated, "POST", "/apps/"+e.app+"/campaigns", e.admin, body), "id")
}

// completedOnce waits for campaign id's campaign.completed delivery, makes
// sure no second one follows, and returns when the campaign completed.
func completedOnce(t *testing.T, h *hookReceiver, id int64) time.Time {
	t.Helper()
	e2eWait(t, 30*time.Second, fmt.Sprintf("campaign %d's campaign.completed", id), func() bool {
		return len(h.of("campaign.completed", id)) > 0
	})
	// Longer than the dispatchers' poll and the scheduler's tick: a second
	// completion or a second send would arrive meanwhile.
	time.Sleep(2 * time.Second)
	hits := h.of("campaign.completed", id)
	if len(hits) != 1 {
		t.Fatalf("campaign %d: %d campaign.completed deliveries, want 1: %v", id, len(hits), hits)
	}
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(hits[0].data["completedAt"]))
	if err != nil {
		t.Fatalf("completedAt: %v", err)
	}
	return at
}

// TestReplicasE2ELeader: three replicas on one database run the scheduled
// work on one leader. kill -9 of the leader hands over within 3 s, and a
// campaign whose end date passes during the takeover completes once, with
// one campaign.completed. Then every replica is killed and restarted: a
// campaign that ended meanwhile completes within 3 s of the first healthy
// replica, although the scheduler's interval is an hour, because a new
// leader runs it at once.
func TestReplicasE2ELeader(t *testing.T) {
	e := newReplicaEnv(t)
	hooks := newHookReceiver(t)
	e.start(3, "--scheduler-interval", "1s", "--webhook-retry-base", "100ms")
	leader := e.leaders()[0]
	e.rs[0].call(t, http.StatusCreated, "POST", "/apps/"+e.app+"/webhooks", e.admin, map[string]any{
		"url": hooks.url, "events": []string{"campaign.completed"}})

	end := time.Now().Add(2 * time.Second)
	first := e.campaign(leader, "Takeover", end, nil)
	killed := time.Now()
	leader.kill()
	if pgtest.Selected() {
		_, since := leadingSince(e.leaders()[0])
		if took := since.Sub(killed); took > 3*time.Second {
			t.Fatalf("a survivor took over %v after the kill, want within 3s", took)
		} else {
			t.Logf("a survivor took over %v after the kill", took.Round(time.Millisecond))
		}
	}
	at := completedOnce(t, hooks, first)
	if late := at.Sub(end); late < 0 || late > 3*time.Second {
		t.Fatalf("completed %v after its end date, want within 3s", late)
	}
	t.Logf("the first campaign completed %v after its end date", at.Sub(end).Round(time.Millisecond))
	if got := e.alive()[0].call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d", first), e.admin, nil)["status"]; got != "completed" {
		t.Fatalf("status=%v, want completed", got)
	}

	// Every replica dies before the second campaign ends; they come back
	// after it ended.
	end = time.Now().Add(2 * time.Second)
	second := e.campaign(e.alive()[0], "Restart", end, nil)
	for _, s := range e.alive() {
		s.kill()
	}
	time.Sleep(time.Until(end.Add(100 * time.Millisecond)))
	e.start(1, "--scheduler-interval", "1h", "--webhook-retry-base", "100ms")
	healthy := time.Now()
	e.start(2, "--scheduler-interval", "1h", "--webhook-retry-base", "100ms")
	at = completedOnce(t, hooks, second)
	if late := at.Sub(healthy); late > 3*time.Second {
		t.Fatalf("completed %v after the first replica was healthy, want within 3s", late)
	}
	t.Logf("the second campaign completed %v after the first replica was healthy", at.Sub(healthy).Round(time.Millisecond))
	e.leaders()
	if n := len(hooks.of("campaign.completed", first)); n != 1 {
		t.Fatalf("%d campaign.completed for the first campaign after the restart, want 1", n)
	}
}
