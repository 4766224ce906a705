package cmd_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"service/internal/pgtest"
)

// TestReplicasE2ERateLimit: three replicas on one database, and a free
// app's admin requests (limit 60 a minute), each on a new connection to
// the next replica. On PostgreSQL the replicas count them together:
// exactly 60 are answered, X-RateLimit-Remaining counts 59 to 0 across the
// replicas, and then every replica answers 429. On SQLite each process
// counts its own (as documented): each replica answers 60, its
// Remaining counting down on its own, then 429.
func TestReplicasE2ERateLimit(t *testing.T) {
	e := newReplicaEnv(t)
	app := strconv.FormatInt(e2eNum(e2eCLI(t, "apps", "create", "--db", e.db, "--name", "free", "--plan", "free"), "id"), 10)
	admin, _ := e2eCLI(t, "keys", "create", "--db", e.db, "--app", app, "--role", "admin")["key"].(string)
	e.start(3)
	c := newRRClient(e.rs)
	path := "/apps/" + app + "/content"

	// The window is the wall-clock minute, and the requests take well
	// under a second: with 15 s of the minute left, they stay in it.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 15*time.Second {
		time.Sleep(left + 50*time.Millisecond)
	}
	minute := time.Now().Unix() / 60

	shared := pgtest.Selected()
	allowed := 60
	if !shared {
		allowed = 60 * len(e.rs)
	}
	header := func(a rrAnswer, name string) int {
		t.Helper()
		n, err := strconv.Atoi(a.header.Get(name))
		if err != nil {
			t.Fatalf("replica %d: %s=%q: %v", a.replica, name, a.header.Get(name), err)
		}
		return n
	}
	for i := range allowed {
		a := c.do(t, "GET", path, admin, nil)
		if a.status != http.StatusOK {
			t.Fatalf("request %d on replica %d: %d %v", i+1, a.replica, a.status, a.body)
		}
		want := 59 - i
		if !shared {
			want = 59 - i/len(e.rs)
		}
		if limit, remaining := header(a, "X-RateLimit-Limit"), header(a, "X-RateLimit-Remaining"); limit != 60 || remaining != want {
			t.Fatalf("request %d on replica %d: limit=%d remaining=%d, want 60, %d", i+1, a.replica, limit, remaining, want)
		}
	}
	for range 2 {
		for i := range e.rs {
			a := c.to(t, i, "GET", path, admin, nil)
			if a.status != http.StatusTooManyRequests {
				t.Fatalf("replica %d over the limit: %d %v", i, a.status, a.body)
			}
			if env, _ := a.body["error"].(map[string]any); env["code"] != "RATE_LIMIT_EXCEEDED" {
				t.Fatalf("replica %d over the limit: body %v", i, a.body)
			}
			if remaining, reset, retry := header(a, "X-RateLimit-Remaining"), header(a, "X-RateLimit-Reset"), header(a, "Retry-After"); remaining != 0 || retry != reset || reset < 1 || reset > 60 {
				t.Fatalf("replica %d over the limit: remaining=%d reset=%d Retry-After=%d", i, remaining, reset, retry)
			}
		}
	}
	if now := time.Now().Unix() / 60; now != minute {
		t.Fatalf("the requests took past the minute they started in")
	}
}
