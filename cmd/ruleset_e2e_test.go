package cmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// The ruleset stream across replicas (in the PostgreSQL run on one
// PostgreSQL database, else on one SQLite file): a change made on one
// replica reaches the streams of another, a replica killed under 100
// streams sends its clients to the others with their Last-Event-ID, and a
// SIGTERM ends the streams it holds at once.

// sseClient follows the ruleset stream as EventSource does: on any
// failure it connects again, to the next replica of its list, with the
// id of the last event it got as Last-Event-ID.
type sseClient struct {
	bases []string // the replicas' /v1 addresses, tried in turn
	path  string   // the stream's path and query, key included
	mu    sync.Mutex
	last  string    // the last event id
	at    time.Time // when it came
	seen  chan string
	// connects counts the connections made, reconnections included.
	connects int
}

func newSSEClient(bases []string, path string) *sseClient {
	return &sseClient{bases: bases, path: path, seen: make(chan string, 64)}
}

// run follows the stream until ctx ends, starting at replica first.
func (c *sseClient) run(ctx context.Context, first int) {
	for i := first; ctx.Err() == nil; i++ {
		c.follow(ctx, c.bases[i%len(c.bases)])
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // the server asks for 1 s; tests are in a hurry
		}
	}
}

// follow reads one connection until it ends.
func (c *sseClient) follow(ctx context.Context, base string) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+c.path, nil)
	if err != nil {
		return
	}
	c.mu.Lock()
	if c.last != "" {
		req.Header.Set("Last-Event-ID", c.last)
	}
	c.connects++
	c.mu.Unlock()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return
	}
	sc := bufio.NewScanner(res.Body)
	var id, event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "ruleset" && data == `{"version":"`+id+`"}` {
				c.mu.Lock()
				c.last, c.at = id, time.Now()
				c.mu.Unlock()
				select {
				case c.seen <- id:
				default:
				}
			}
			id, event, data = "", "", ""
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "event: "):
			event = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		}
	}
}

// lastID returns the last event id and when it came.
func (c *sseClient) lastID() (string, time.Time, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.at, c.connects
}

// rulesetVersion reads the ruleset's version from a replica.
func rulesetVersion(t *testing.T, s *e2eServer, app, key string) string {
	t.Helper()
	v, _ := s.call(t, http.StatusOK, "GET", "/apps-external/"+app+"/ruleset", key, nil)["version"].(string)
	if v == "" {
		t.Fatal("ruleset without a version")
	}
	return v
}

func TestRulesetStreamE2EReplicas(t *testing.T) {
	env := newReplicaEnv(t)
	env.start(3, "--stream-heartbeat", "100ms")
	a, b, c := env.rs[0], env.rs[1], env.rs[2]
	path := "/apps-external/" + env.app + "/ruleset/stream?key=" + env.client
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	t.Run("ChangeOnAnotherReplica", func(t *testing.T) {
		cl := newSSEClient([]string{b.base}, path)
		go cl.run(ctx, 0)
		v0 := rulesetVersion(t, a, env.app, env.client)
		select {
		case v := <-cl.seen:
			if v != v0 {
				t.Fatalf("first event %s, want the current version %s", v, v0)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event on connection")
		}
		for i := range 3 {
			env.campaign(a, fmt.Sprintf("stream %d", i), time.Now().Add(time.Hour), nil)
			changed := time.Now()
			want := rulesetVersion(t, a, env.app, env.client)
			deadline := time.After(10 * time.Second)
			for got := ""; got != want; {
				select {
				case got = <-cl.seen:
				case <-deadline:
					t.Fatalf("change %d: the stream on another replica did not send %s", i, want)
				}
			}
			// The bound: a change reaches every replica's streams
			// within a second (PostgreSQL's NOTIFY, SQLite's 100 ms
			// watcher; the fallback checks are slower).
			if took := time.Since(changed); took > time.Second {
				t.Errorf("change %d reached the other replica's stream after %s", i, took)
			} else {
				t.Logf("change %d reached the other replica's stream after %s", i, took.Round(time.Millisecond))
			}
		}
	})

	t.Run("KilledReplica", func(t *testing.T) {
		const n = 100
		v1 := rulesetVersion(t, c, env.app, env.client)
		clients := make([]*sseClient, n)
		for i := range clients {
			// Each starts on c and falls back to a, then b.
			clients[i] = newSSEClient([]string{c.base, a.base, b.base}, path)
			go clients[i].run(ctx, 0)
		}
		e2eWait(t, 30*time.Second, "every client holds the current version from the doomed replica", func() bool {
			for _, cl := range clients {
				if last, _, _ := cl.lastID(); last != v1 {
					return false
				}
			}
			return true
		})
		c.kill()
		// A change while the clients are away: they come back with an
		// older Last-Event-ID and get the current version at once.
		env.campaign(a, "after the crash", time.Now().Add(time.Hour), nil)
		v2 := rulesetVersion(t, a, env.app, env.client)
		e2eWait(t, 30*time.Second, "every client reconnected elsewhere and got the current version", func() bool {
			for _, cl := range clients {
				if last, _, _ := cl.lastID(); last != v2 {
					return false
				}
			}
			return true
		})
		for i, cl := range clients {
			if _, _, connects := cl.lastID(); connects < 2 {
				t.Errorf("client %d connected %d times", i, connects)
			}
		}
	})

	t.Run("RefusedKey", func(t *testing.T) {
		res, err := http.Get(a.base + "/apps-external/" + env.app + "/ruleset/stream?key=sk_c_nope")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		if res.StatusCode != http.StatusUnauthorized || json.NewDecoder(res.Body).Decode(&body) != nil || body.Error.Code != "UNAUTHORIZED" {
			t.Errorf("a wrong key: %d %+v, want 401 UNAUTHORIZED", res.StatusCode, body)
		}
	})

	t.Run("SIGTERM", func(t *testing.T) {
		cl := newSSEClient([]string{b.base}, path)
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		ended := make(chan struct{})
		go func() { cl.follow(sctx, b.base); close(ended) }()
		select {
		case <-cl.seen:
		case <-time.After(10 * time.Second):
			t.Fatal("no event on connection")
		}
		code, _, err := b.term(60 * time.Second)
		if err != nil || code != 0 {
			t.Fatalf("exit %d, %v", code, err)
		}
		<-ended
		// http.Server.Shutdown waits for every answer to end; a stream
		// left open would have held it until --shutdown-timeout, and it
		// would have said so.
		for _, l := range b.Logs() {
			if l["msg"] == "http shutdown" {
				t.Errorf("shutdown waited for the streams: %v", l)
			}
		}
	})
}
