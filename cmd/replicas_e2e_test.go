package cmd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// leaders waits until the live replicas' leadership settles on one
// leader, on either store, and returns it (alone in the slice).
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
		return len(out) == 1
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
	_, since := leadingSince(e.leaders()[0])
	if took := since.Sub(killed); took > 3*time.Second {
		t.Fatalf("a survivor took over %v after the kill, want within 3s", took)
	} else {
		t.Logf("a survivor took over %v after the kill", took.Round(time.Millisecond))
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

// rrClient sends each request on a new connection to the next replica, as
// a load balancer without affinity does.
type rrClient struct {
	rs   []*e2eServer
	next int
	http *http.Client
}

func newRRClient(rs []*e2eServer) *rrClient {
	return &rrClient{rs: rs, http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
}

// rrAnswer is one answer and the replica that gave it.
type rrAnswer struct {
	replica int
	status  int
	header  http.Header
	body    map[string]any
}

// to sends a request to replica i on a new connection.
func (c *rrClient) to(t *testing.T, i int, method, path, key string, body any, header ...string) rrAnswer {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, c.rs[i].base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	for j := 0; j+1 < len(header); j += 2 {
		req.Header.Set(header[j], header[j+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return rrAnswer{i, resp.StatusCode, resp.Header, m}
}

// do sends a request to the next replica.
func (c *rrClient) do(t *testing.T, method, path, key string, body any, header ...string) rrAnswer {
	t.Helper()
	i := c.next
	c.next = (c.next + 1) % len(c.rs)
	return c.to(t, i, method, path, key, body, header...)
}

// TestReplicasE2EReadYourWrites: three replicas on one database. After an
// admin change made through one replica, or by a CLI command, each other
// replica's next answers reflect it, each request on a new connection to
// the next replica: campaign status, content, a revoked key, allowed
// origins, the rate limit and webhooks. The promise is 100 ms; the test
// allows a loaded machine ten times that, and logs what it saw.
func TestReplicasE2EReadYourWrites(t *testing.T) {
	e := newReplicaEnv(t)
	e.start(3)
	c := newRRClient(e.rs)
	// A second client key, to revoke.
	spare := e2eCLI(t, "keys", "create", "--db", e.db, "--app", e.app, "--role", "client")
	spareKey, _ := spare["key"].(string)
	spareID := strconv.FormatInt(e2eNum(spare, "id"), 10)

	end := time.Now().Add(24 * time.Hour)
	id := e.campaign(e.rs[0], "Shared", end, nil)
	variant := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", e.app, id)
	// Every replica caches the campaign, and a returning user, first.
	returning := map[string]any{"userId": "returning"}
	var block int64 // the returning user's block
	for i := range e.rs {
		a := c.to(t, i, "POST", variant, e.client, returning)
		if a.status != http.StatusOK || a.body["variantId"] == nil {
			t.Fatalf("replica %d before any change: %d %v", i, a.status, a.body)
		}
		block = e2eNum(a.body, "contentViewId")
	}

	var delays []time.Duration
	firstTry, checks := 0, 0
	// seen waits until every replica but the one at skip answers as want
	// says, asking each in turn on a new connection, and records how long
	// after the change each did.
	seen := func(what string, skip int, ask func(i int) rrAnswer, want func(rrAnswer) bool) {
		t.Helper()
		changed := time.Now()
		for i := range e.rs {
			if i == skip {
				continue
			}
			checks++
			tries := 0
			for {
				tries++
				a := ask(i)
				if want(a) {
					d := time.Since(changed)
					delays = append(delays, d)
					if tries == 1 {
						firstTry++
					}
					if d > time.Second {
						t.Fatalf("%s: replica %d answered the change %v after it, want within 1s", what, i, d)
					}
					break
				}
				if time.Since(changed) > 10*time.Second {
					t.Fatalf("%s: replica %d still answers %d %v", what, i, a.status, a.body)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
	}
	user := 0
	newUser := func() map[string]any {
		user++
		return map[string]any{"userId": fmt.Sprint("new-", user)}
	}

	for round := range 3 {
		at := round % len(e.rs)
		// Paused on one replica: the others stop assigning, new users and
		// the returning one alike.
		if a := c.to(t, at, "PATCH", fmt.Sprintf("/campaigns/%d/status", id), e.admin, map[string]any{"status": "paused"}); a.status != http.StatusOK {
			t.Fatalf("pause: %d %v", a.status, a.body)
		}
		seen("pause", at, func(i int) rrAnswer { return c.to(t, i, "POST", variant, e.client, newUser()) },
			func(a rrAnswer) bool { return a.status == http.StatusOK && a.body["variantId"] == nil })
		seen("pause (returning user)", at, func(i int) rrAnswer { return c.to(t, i, "POST", variant, e.client, returning) },
			func(a rrAnswer) bool { return a.status == http.StatusOK && a.body["variantId"] == nil })
		if a := c.to(t, at, "PATCH", fmt.Sprintf("/campaigns/%d/status", id), e.admin, map[string]any{"status": "active"}); a.status != http.StatusOK {
			t.Fatalf("resume: %d %v", a.status, a.body)
		}
		seen("resume", at, func(i int) rrAnswer { return c.to(t, i, "POST", variant, e.client, newUser()) },
			func(a rrAnswer) bool { return a.status == http.StatusOK && a.body["variantId"] != nil })

		// Content edited on one replica: the others show the new items,
		// to the returning user whose answer they keep in memory too.
		text := fmt.Sprint("edited ", round)
		if a := c.to(t, at, "PATCH", fmt.Sprintf("/content/%d", block), e.admin, map[string]any{
			"items": []any{map[string]any{"type": "text", "content": text}}}); a.status != http.StatusOK {
			t.Fatalf("edit content: %d %v", a.status, a.body)
		}
		showsText := func(a rrAnswer) bool {
			if a.status != http.StatusOK || e2eNum(a.body, "contentViewId") != block {
				t.Fatalf("the returning user's answer changed: %d %v", a.status, a.body)
			}
			cv, _ := a.body["contentView"].(map[string]any)
			items, _ := cv["items"].([]any)
			return len(items) == 1 && items[0].(map[string]any)["content"] == text
		}
		seen("content edit", at, func(i int) rrAnswer { return c.to(t, i, "POST", variant, e.client, returning) }, showsText)
	}

	// CLI commands are processes of their own, beside every replica.
	e2eCLI(t, "apps", "update", "--db", e.db, "--id", e.app, "--rate-limit", "777")
	seen("apps update --rate-limit", -1, func(i int) rrAnswer { return c.to(t, i, "POST", variant, e.client, newUser()) },
		func(a rrAnswer) bool { return a.header.Get("X-RateLimit-Limit") == "77700" }) // SDK traffic gets 100 times the limit
	e2eCLI(t, "apps", "update", "--db", e.db, "--id", e.app, "--allowed-origins", "https://shop.example")
	seen("apps update --allowed-origins", -1, func(i int) rrAnswer {
		return c.to(t, i, "POST", variant, e.client, newUser(), "Origin", "https://other.example")
	}, func(a rrAnswer) bool { return a.header.Get("Access-Control-Allow-Origin") == "" })
	if a := c.do(t, "POST", variant, spareKey, newUser()); a.status != http.StatusOK {
		t.Fatalf("the spare key before its revocation: %d", a.status)
	}
	e2eCLI(t, "keys", "revoke", "--db", e.db, "--id", spareID)
	seen("keys revoke", -1, func(i int) rrAnswer { return c.to(t, i, "POST", variant, spareKey, newUser()) },
		func(a rrAnswer) bool { return a.status == http.StatusUnauthorized })

	// A webhook moved to another receiver on one replica: an event on the
	// next goes to the new receiver.
	oldHooks, newHooks := newHookReceiver(t), newHookReceiver(t)
	hook := e2eNum(c.to(t, 0, "POST", "/apps/"+e.app+"/webhooks", e.admin, map[string]any{
		"url": oldHooks.url, "events": []string{"campaign.paused"}}).body, "id")
	if a := c.to(t, 1, "PATCH", fmt.Sprintf("/webhooks/%d", hook), e.admin, map[string]any{"url": newHooks.url}); a.status != http.StatusOK {
		t.Fatalf("move the webhook: %d %v", a.status, a.body)
	}
	if a := c.to(t, 2, "PATCH", fmt.Sprintf("/campaigns/%d/status", id), e.admin, map[string]any{"status": "paused"}); a.status != http.StatusOK {
		t.Fatalf("pause: %d %v", a.status, a.body)
	}
	e2eWait(t, 30*time.Second, "the webhook's new receiver", func() bool { return len(newHooks.of("campaign.paused", id)) == 1 })
	if n := len(oldHooks.of("campaign.paused", id)); n != 0 {
		t.Fatalf("the old receiver got %d deliveries", n)
	}

	slices.Sort(delays)
	t.Logf("%d checks, %d answered the change on the first request; delay median %v, max %v",
		checks, firstTry, delays[len(delays)/2].Round(time.Microsecond), delays[len(delays)-1].Round(time.Microsecond))
}

// allAtOnce sends one request per replica at the same moment, each on a
// new connection, and returns the answers in replica order.
func (c *rrClient) allAtOnce(t *testing.T, method, path, key string, body any) []rrAnswer {
	t.Helper()
	out := make([]rrAnswer, len(c.rs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range c.rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = c.to(t, i, method, path, key, body)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// TestReplicasE2EFirstRequestsAndEvents: three replicas on one database.
// The same new user asked for on every replica at once gets one variant,
// the same in every answer, and one impression, for weighted and
// round-robin campaigns, round robin splitting its users exactly; the
// same logId sent to every replica at once is stored once, and every
// answer describes that event. No answer is an error.
func TestReplicasE2EFirstRequestsAndEvents(t *testing.T) {
	e := newReplicaEnv(t)
	e.start(3)
	c := newRRClient(e.rs)
	end := time.Now().Add(24 * time.Hour)
	const users = 40
	for _, assignment := range []string{"weighted", "round_robin"} {
		id := e.campaign(e.rs[0], assignment, end, map[string]any{"assignmentType": assignment, "goalEventId": "buy"})
		variant := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", e.app, id)
		perVariant := map[int64]int{}
		for u := range users {
			as := c.allAtOnce(t, "POST", variant, e.client, map[string]any{"userId": fmt.Sprintf("%s-%d", assignment, u)})
			recorded := 0
			for _, a := range as {
				if a.status != http.StatusOK || a.body["variantId"] == nil {
					t.Fatalf("%s user %d on replica %d: %d %v", assignment, u, a.replica, a.status, a.body)
				}
				if e2eNum(a.body, "variantId") != e2eNum(as[0].body, "variantId") {
					t.Fatalf("%s user %d: replicas answered variants %v and %v", assignment, u, as[0].body["variantId"], a.body["variantId"])
				}
				if a.body["impressionRecorded"] == true {
					recorded++
				}
			}
			if recorded != 1 {
				t.Fatalf("%s user %d: %d answers recorded an impression, want 1", assignment, u, recorded)
			}
			perVariant[e2eNum(as[0].body, "variantId")]++
		}
		an := c.do(t, "GET", fmt.Sprintf("/campaigns/%d/analytics", id), e.admin, nil)
		if got := e2eNum(an.body, "totalImpressions"); got != users {
			t.Fatalf("%s: totalImpressions=%d, want %d", assignment, got, users)
		}
		if assignment == "round_robin" {
			for v, n := range perVariant {
				if n != users/2 {
					t.Fatalf("round robin: variant %d got %d of %d users: %v", v, n, users, perVariant)
				}
			}
		}

		// The same logId on every replica at once: one event, one
		// conversion, every answer naming it.
		for u := range users {
			as := c.allAtOnce(t, "POST", "/apps/"+e.app+"/events", e.client, map[string]any{
				"eventId": "buy", "userId": fmt.Sprintf("%s-%d", assignment, u), "logId": fmt.Sprintf("%s-log-%d", assignment, u)})
			dups := 0
			for _, a := range as {
				if a.status != http.StatusCreated && a.status != http.StatusOK {
					t.Fatalf("logId %d on replica %d: %d %v", u, a.replica, a.status, a.body)
				}
				if e2eNum(a.body, "id") != e2eNum(as[0].body, "id") || a.body["timestamp"] != as[0].body["timestamp"] || a.body["eventId"] != "buy" {
					t.Fatalf("logId %d: answers %v and %v describe different events", u, as[0].body, a.body)
				}
				if a.body["duplicate"] == true {
					dups++
				}
			}
			if dups != len(as)-1 {
				t.Fatalf("logId %d: %d answers marked duplicate, want %d", u, dups, len(as)-1)
			}
		}
		an = c.do(t, "GET", fmt.Sprintf("/campaigns/%d/analytics", id), e.admin, nil)
		if got := e2eNum(an.body, "totalConversions"); got != users {
			t.Fatalf("%s: totalConversions=%d, want %d", assignment, got, users)
		}
	}
	list := c.do(t, "GET", "/apps/"+e.app+"/events?limit=1000", e.admin, nil)
	if n := len(list.body["data"].([]any)); n != 2*users {
		t.Fatalf("%d events stored, want %d", n, 2*users)
	}
}

// healthLB stands for a load balancer that follows /healthz: it asks every
// replica's /healthz every 50 ms, and sends each request on a new
// connection to the next replica whose last answer was 200. A request
// whose connection is refused goes to the next replica, since it never
// reached one; any other failure is the client's.
type healthLB struct {
	mu      sync.Mutex
	roots   []string
	healthy []bool
	next    int
	http    *http.Client
	stop    chan struct{}
	done    chan struct{}
}

func newHealthLB(t *testing.T, rs []*e2eServer) *healthLB {
	lb := &healthLB{http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		stop: make(chan struct{}), done: make(chan struct{})}
	for _, s := range rs {
		lb.roots = append(lb.roots, s.root())
		lb.healthy = append(lb.healthy, false)
	}
	go lb.poll()
	t.Cleanup(lb.close)
	return lb
}

func (lb *healthLB) close() {
	select {
	case <-lb.stop:
	default:
		close(lb.stop)
		<-lb.done
	}
}

func (lb *healthLB) poll() {
	defer close(lb.done)
	for {
		lb.mu.Lock()
		roots := append([]string(nil), lb.roots...)
		lb.mu.Unlock()
		for i, root := range roots {
			ok := false
			if resp, err := lb.http.Get(root + "/healthz"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ok = resp.StatusCode == http.StatusOK
			}
			lb.mu.Lock()
			if lb.roots[i] == root {
				lb.healthy[i] = ok
			}
			lb.mu.Unlock()
		}
		select {
		case <-lb.stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// replace puts a new replica in slot i; it gets requests once its
// /healthz answers 200.
func (lb *healthLB) replace(i int, s *e2eServer) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.roots[i], lb.healthy[i] = s.root(), false
}

func (lb *healthLB) isHealthy(i int) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.healthy[i]
}

// pick returns the next healthy replica's root, or "".
func (lb *healthLB) pick() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for range lb.roots {
		i := lb.next
		lb.next = (lb.next + 1) % len(lb.roots)
		if lb.healthy[i] {
			return lb.roots[i]
		}
	}
	return ""
}

// do sends a request under /v1 and returns the status and decoded body.
func (lb *healthLB) do(method, path, key string, body any) (int, map[string]any, error) {
	b, _ := json.Marshal(body)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		root := lb.pick()
		if root == "" {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		req, err := http.NewRequest(method, root+"/v1"+path, strings.NewReader(string(b)))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := lb.http.Do(req)
		if errors.Is(err, syscall.ECONNREFUSED) {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m, nil
	}
	return 0, nil, fmt.Errorf("no replica took %s %s for 30s", method, path)
}

// TestReplicasE2ERollingRestart: three replicas under load, restarted one
// after the other with SIGTERM behind a load balancer that follows
// /healthz. A draining replica answers /healthz 503 and /livez 200, exits
// cleanly within its drain timeout and gives the leadership back; the
// client, which retries only refused connections, sees no failed request,
// and every event and first assignment it was answered is stored.
func TestReplicasE2ERollingRestart(t *testing.T) {
	e := newReplicaEnv(t)
	flags := []string{"--drain-delay", "2s", "--shutdown-timeout", "10s"}
	e.start(3, flags...)
	id := e.campaign(e.rs[0], "Rolling", time.Now().Add(24*time.Hour), nil)
	variant := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", e.app, id)
	lb := newHealthLB(t, e.rs)
	e2eWait(t, 30*time.Second, "every replica healthy", func() bool {
		return lb.isHealthy(0) && lb.isHealthy(1) && lb.isHealthy(2)
	})

	type assigned struct {
		user    string
		variant int64
	}
	var (
		mu       sync.Mutex
		failures []string
		logged   []string
		users    []assigned
		done     = make(chan struct{})
		wg       sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				user, logID := fmt.Sprintf("w%d-u%d", w, n), fmt.Sprintf("w%d-l%d", w, n)
				code, m, err := lb.do("POST", variant, e.client, map[string]any{"userId": user})
				if err != nil || code != http.StatusOK || m["variantId"] == nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("variant %s: %d %v %v", user, code, m, err))
					mu.Unlock()
					continue
				}
				v := e2eNum(m, "variantId")
				code, m, err = lb.do("POST", "/apps/"+e.app+"/events", e.client, map[string]any{"eventId": "view", "userId": user, "logId": logID})
				mu.Lock()
				users = append(users, assigned{user, v})
				if err != nil || code != http.StatusCreated {
					failures = append(failures, fmt.Sprintf("event %s: %d %v %v", logID, code, m, err))
				} else {
					logged = append(logged, logID)
				}
				mu.Unlock()
			}
		}()
	}
	progress := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(logged)
	}
	e2eWait(t, 30*time.Second, "load to flow", func() bool { return progress() >= 50 })

	for i := range e.rs {
		old := e.rs[i]
		wasLeader, _ := leadingSince(old)
		exited := make(chan struct{})
		var code int
		var took time.Duration
		var termErr error
		go func() {
			defer close(exited)
			code, took, termErr = old.term(30 * time.Second)
		}()
		// While it drains: not ready, still alive.
		sawDraining := false
		for !sawDraining {
			resp, err := e2eHTTP.Get(old.root() + "/healthz")
			if err != nil {
				t.Fatalf("replica %d: /healthz refused before it answered 503 while draining: %v", i, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				live, err := e2eHTTP.Get(old.root() + "/livez")
				if err != nil {
					t.Fatalf("replica %d: /livez while draining: %v", i, err)
				}
				live.Body.Close()
				if live.StatusCode != http.StatusOK {
					t.Fatalf("replica %d: /livez=%d while draining, want 200", i, live.StatusCode)
				}
				sawDraining = true
			}
		}
		<-exited
		if termErr != nil {
			t.Fatalf("replica %d: %v", i, termErr)
		}
		if code != 0 || took > 10*time.Second {
			t.Fatalf("replica %d: exit %d after %v, want 0 within the 10s drain timeout", i, code, took)
		}
		if wasLeader {
			released := false
			for _, l := range old.Logs() {
				released = released || l["msg"] == "released the leadership of the scheduled work"
			}
			if !released {
				t.Fatalf("replica %d led and exited without releasing the leadership", i)
			}
		}
		before := progress()
		e.rs[i] = e2eServe(t, append([]string{"--db", e.db}, flags...)...)
		lb.replace(i, e.rs[i])
		e2eWait(t, 30*time.Second, "the restarted replica healthy", func() bool { return lb.isHealthy(i) })
		e2eWait(t, 30*time.Second, "load to flow after the restart", func() bool { return progress() >= before+50 })
	}
	close(done)
	wg.Wait()
	e.leaders()
	if len(failures) > 0 {
		t.Fatalf("%d failed requests during the rolling restart, the first: %s", len(failures), failures[0])
	}
	t.Logf("%d events and %d first assignments acknowledged during the rolling restart, none failed", len(logged), len(users))

	// Every acknowledged write is stored: the events are duplicates now,
	// and the users returning get their variant without a new impression.
	for _, l := range logged {
		code, m, err := lb.do("POST", "/apps/"+e.app+"/events", e.client, map[string]any{"eventId": "view", "logId": l, "sessionId": "s"})
		if err != nil || code != http.StatusCreated || m["duplicate"] != true {
			t.Fatalf("acknowledged event %s: %d %v %v, want a duplicate", l, code, m, err)
		}
	}
	for _, u := range users {
		code, m, err := lb.do("POST", variant, e.client, map[string]any{"userId": u.user})
		if err != nil || code != http.StatusOK || e2eNum(m, "variantId") != u.variant || m["impressionRecorded"] != false {
			t.Fatalf("acknowledged user %s: %d %v %v, want variant %d again", u.user, code, m, err, u.variant)
		}
	}
	an := e.alive()[0].call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d/analytics", id), e.admin, nil)
	if got := e2eNum(an, "totalImpressions"); got != int64(len(users)) {
		t.Fatalf("totalImpressions=%d, want %d", got, len(users))
	}
}

// slowReceiver answers each delivery after its hold (which the test may
// change at any time), unless the sender goes away first. It records, per
// delivery id, how often it arrived, whether two sends of one delivery
// ever overlapped, and the most sends in flight at once.
type slowReceiver struct {
	url  string
	port int          // the port it listens on
	hold atomic.Int64 // nanoseconds

	mu       sync.Mutex
	inFlight map[string]bool
	from     map[string]int // the sender's port of each delivery in flight
	now, max int
	arrivals map[string][]time.Time
	cut      map[string]time.Time // deliveries whose sender went away, and when
	overlaps []string
}

func newSlowReceiver(t *testing.T, hold time.Duration) *slowReceiver {
	t.Helper()
	h := &slowReceiver{inFlight: map[string]bool{}, from: map[string]int{}, arrivals: map[string][]time.Time{}, cut: map[string]time.Time{}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read to the end: only then does the server watch the connection
		// and end r's context when the sender goes away.
		_, _ = io.Copy(io.Discard, r.Body)
		id := r.Header.Get("X-Service-Delivery-ID")
		h.mu.Lock()
		if h.inFlight[id] {
			h.overlaps = append(h.overlaps, id)
		}
		h.inFlight[id] = true
		if _, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			h.from[id], _ = strconv.Atoi(port)
		}
		h.now++
		h.max = max(h.max, h.now)
		h.arrivals[id] = append(h.arrivals[id], time.Now())
		h.mu.Unlock()
		timer := time.NewTimer(time.Duration(h.hold.Load()))
		defer timer.Stop()
		ok := true
		select {
		case <-timer.C:
		case <-r.Context().Done():
			ok = false
		}
		h.mu.Lock()
		delete(h.inFlight, id)
		delete(h.from, id)
		h.now--
		if !ok {
			h.cut[id] = time.Now()
		}
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	h.hold.Store(int64(hold))
	ln := listenLocal(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	h.url = "http://" + ln.Addr().String() + "/hook"
	h.port = ln.Addr().(*net.TCPAddr).Port
	return h
}

// socketOwner returns the pid of the process whose TCP connection goes
// from local port port to peer port peer on the loopback, or 0: it finds
// the socket's inode in /proc/net/tcp (and tcp6), then the process holding
// it among the open files in /proc. Both ports count: the kernel gives one
// ephemeral port to several connections when their peers differ (a
// replica's to PostgreSQL and another's to the receiver), and a closed
// connection lingers in TIME_WAIT with no inode.
func socketOwner(t *testing.T, port, peer int) int {
	t.Helper()
	inode := ""
	local, remote := fmt.Sprintf(":%04X", port), fmt.Sprintf(":%04X", peer)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		raw, err := os.ReadFile(table)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 9 && strings.HasSuffix(f[1], local) && strings.HasSuffix(f[2], remote) && f[9] != "0" {
				inode = f[9]
			}
		}
	}
	if inode == "" {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		if target, err := os.Readlink(fd); err == nil && target == "socket:["+inode+"]" {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	return 0
}

// inFlightIDs returns the deliveries being received now.
func (h *slowReceiver) inFlightIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id := range h.inFlight {
		out = append(out, id)
	}
	return out
}

// arrivedAfter returns when delivery id first arrived after t, if it did.
func (h *slowReceiver) arrivedAfter(id string, t time.Time) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, at := range h.arrivals[id] {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// TestReplicasE2EWebhooks: three replicas dispatch one webhook's
// deliveries to a slow receiver. Each delivery arrives, never two sends of
// one at once, and the per-webhook cap (2) holds across the replicas on
// PostgreSQL. kill -9 of a replica mid-send: its deliveries in flight are
// sent again, with the same delivery id, within 3 s. Then every replica
// is killed mid-send and restarted: the delivery in flight arrives again
// within 15 s of the restart. On SQLite (several processes on one file)
// the test ends after the first kill: there a dead process's claims lapse
// with their lease, as the store's tests show.
func TestReplicasE2EWebhooks(t *testing.T) {
	e := newReplicaEnv(t)
	// Sends are held 4 s (under the webhook's 5 s timeout) until a replica
	// has been killed mid-send, so that the test finds one in flight
	// however slow the machine; then 400 ms, slow enough that the cap
	// stays at its base of 2.
	recv := newSlowReceiver(t, 4*time.Second)
	flags := []string{"--webhook-retry-base", "100ms"}
	e.start(3, flags...)
	hook := e2eNum(e.rs[0].call(t, http.StatusCreated, "POST", "/apps/"+e.app+"/webhooks", e.admin, map[string]any{
		"url": recv.url, "events": []string{"campaign.completed"}, "timeoutSeconds": 5}), "id")
	path := fmt.Sprintf("/webhooks/%d/test", hook)
	var ids []string
	rr := newRRClient(e.rs)
	for range 24 {
		a := rr.do(t, "POST", path, e.admin, nil)
		if a.status != http.StatusAccepted {
			t.Fatalf("test delivery: %d %v", a.status, a.body)
		}
		ids = append(ids, strconv.FormatInt(e2eNum(a.body, "id"), 10))
	}

	// kill -9 a replica in the middle of a send: the one whose socket
	// carries a delivery the receiver is answering.
	var victim *e2eServer
	deadline := time.Now().Add(30 * time.Second)
	e2eWait(t, time.Hour, "a send under way", func() bool {
		if time.Now().After(deadline) {
			recv.mu.Lock()
			defer recv.mu.Unlock()
			t.Fatalf("no send under way by a replica within 30s: %d deliveries arrived, in flight from ports %v", len(recv.arrivals), recv.from)
		}
		recv.mu.Lock()
		ports := slices.Collect(maps.Values(recv.from))
		recv.mu.Unlock()
		for _, port := range ports {
			if pid := socketOwner(t, port, recv.port); pid != 0 {
				for _, s := range e.rs {
					if s.cmd.Process.Pid == pid {
						victim = s
						return true
					}
				}
			}
		}
		return false
	})
	killed := time.Now()
	kills := []time.Time{killed}
	victim.kill()
	recv.hold.Store(int64(400 * time.Millisecond))
	var cut []string
	e2eWait(t, 5*time.Second, "the receiver to see the send cut", func() bool {
		recv.mu.Lock()
		defer recv.mu.Unlock()
		for id, at := range recv.cut {
			if !at.Before(killed) && !slices.Contains(cut, id) {
				cut = append(cut, id)
			}
		}
		return len(cut) > 0
	})
	if pgtest.Selected() {
		for _, id := range cut {
			e2eWait(t, 10*time.Second, "delivery "+id+" sent again", func() bool { _, ok := recv.arrivedAfter(id, killed); return ok })
			at, _ := recv.arrivedAfter(id, killed)
			if took := at.Sub(killed); took > 3*time.Second {
				t.Fatalf("delivery %s was sent again %v after its replica was killed, want within 3s", id, took)
			} else {
				t.Logf("delivery %s cut by kill -9 was sent again %v later", id, took.Round(time.Millisecond))
			}
		}
	} else {
		// SQLite has no presence: a dead process's claims lapse with their
		// lease (the webhook's timeout + 10 s), which the store's tests
		// show. Here the others go on with the rest.
		ids = slices.DeleteFunc(ids, func(id string) bool { return slices.Contains(cut, id) })
	}
	e2eWait(t, 60*time.Second, "every delivery", func() bool {
		for _, id := range ids {
			if _, ok := recv.arrivedAfter(id, time.Time{}); !ok {
				return false
			}
		}
		return true
	})

	recv.mu.Lock()
	overlaps := append([]string(nil), recv.overlaps...)
	recv.mu.Unlock()
	if len(overlaps) > 0 {
		t.Fatalf("deliveries sent twice at once: %v", overlaps)
	}
	if !pgtest.Selected() {
		return
	}

	// Every replica dies mid-send, and comes back.
	last := e.alive()[0].call(t, http.StatusAccepted, "POST", path, e.admin, nil)
	id := strconv.FormatInt(e2eNum(last, "id"), 10)
	e2eWait(t, 30*time.Second, "delivery "+id+" in flight", func() bool { return slices.Contains(recv.inFlightIDs(), id) })
	kills = append(kills, time.Now())
	for _, s := range e.alive() {
		s.kill()
	}
	e.start(1, flags...)
	healthy := time.Now()
	e.start(2, flags...)
	wait := 15 * time.Second
	e2eWait(t, wait+5*time.Second, "delivery "+id+" after the restart", func() bool { _, ok := recv.arrivedAfter(id, healthy); return ok })
	at, _ := recv.arrivedAfter(id, healthy)
	if took := at.Sub(healthy); took > wait {
		t.Fatalf("the delivery in flight at the crash arrived %v after the restart, want within %v", took, wait)
	} else {
		t.Logf("the delivery in flight when every replica was killed arrived %v after the first was healthy", took.Round(time.Millisecond))
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.overlaps) > 0 {
		t.Fatalf("deliveries sent twice at once: %v", recv.overlaps)
	}
	// Only a send cut short is made again, or one answered just before a
	// kill, which its sender could not record (delivery is at least once).
	for id, at := range recv.arrivals {
		if _, cut := recv.cut[id]; cut || len(at) == 1 {
			continue
		}
		if !slices.ContainsFunc(kills, func(k time.Time) bool { return at[0].Before(k) && k.Sub(at[0]) < 2*time.Second }) {
			t.Errorf("delivery %s arrived %d times though never cut nor answered just before a kill", id, len(at))
		}
	}
	if pgtest.Selected() && recv.max > 2 {
		t.Fatalf("%d sends to the webhook at once across the replicas, want at most its cap 2", recv.max)
	}
	t.Logf("at most %d sends at once", recv.max)
}
