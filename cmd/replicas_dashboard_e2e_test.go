package cmd_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The dashboard on several replicas of one database: what a person meets
// when a load balancer sends each of their requests to another replica.

// dashBrowser is a cookie-keeping client of the dashboard that does not
// follow redirects. Cookies are kept per host, not per port, so one
// browser carries its cookies to every replica on 127.0.0.1, as it would
// to one name behind a load balancer.
type dashBrowser struct{ c *http.Client }

func newDashBrowser() *dashBrowser {
	jar, _ := cookiejar.New(nil)
	return &dashBrowser{&http.Client{Jar: jar, Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type dashPage struct {
	status int
	header http.Header
	body   string
}

// do sends a GET, or a POST of form when it is not nil, to s.
func (b *dashBrowser) do(t *testing.T, s *e2eServer, path string, form url.Values) dashPage {
	t.Helper()
	var resp *http.Response
	var err error
	if form == nil {
		resp, err = b.c.Get(s.root() + path)
	} else {
		resp, err = b.c.PostForm(s.root()+path, form)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return dashPage{resp.StatusCode, resp.Header, string(raw)}
}

var dashCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfIn(t *testing.T, p dashPage) string {
	t.Helper()
	m := dashCSRF.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token in the page (%d):\n%s", p.status, p.body)
	}
	return m[1]
}

// signIn signs in on s from a new browser, as a person does: the form,
// then the post.
func signIn(t *testing.T, s *e2eServer, email, password string) dashPage {
	t.Helper()
	b := newDashBrowser()
	form := b.do(t, s, "/signin", nil)
	return b.do(t, s, "/signin", url.Values{"csrf": {csrfIn(t, form)}, "email": {email}, "password": {password}})
}

// setupLinks returns the setup links s logged so far.
func setupLinks(s *e2eServer) []string {
	var out []string
	for _, l := range s.Logs() {
		if u, ok := l["setupURL"].(string); ok {
			out = append(out, u)
		}
	}
	return out
}

// setupToken waits for s to log its setup link and returns the link's
// token.
func setupToken(t *testing.T, s *e2eServer) string {
	t.Helper()
	e2eWait(t, 30*time.Second, "the setup link", func() bool { return len(setupLinks(s)) > 0 })
	links := setupLinks(s)
	if len(links) != 1 {
		t.Fatalf("%d setup links logged, want 1: %v", len(links), links)
	}
	u, err := url.Parse(links[0])
	if err != nil || u.Path != "/setup" || u.Query().Get("token") == "" {
		t.Fatalf("setup link %q: %v", links[0], err)
	}
	if want := strings.TrimPrefix(s.root(), "http://"); u.Host != want {
		t.Fatalf("setup link %q names %s, want the replica's own address %s", links[0], u.Host, want)
	}
	return u.Query().Get("token")
}

// TestReplicasE2ESetupLink: replicas on one database without a dashboard
// user. The first to boot logs a setup link; every replica booting after
// it logs the same one (each with its own address), which stays good on
// every replica until the first user is created through it, on another
// replica than the one that logged it. Replicas booting after that log no
// link, and the link is refused everywhere.
func TestReplicasE2ESetupLink(t *testing.T) {
	e := newReplicaEnv(t)
	e.start(1)
	token := setupToken(t, e.rs[0])
	e.start(2)
	for i, s := range e.rs[1:] {
		if got := setupToken(t, s); got != token {
			t.Fatalf("replica %d logged the token %q, the first replica %q", i+1, got, token)
		}
	}
	// A replica restarted meanwhile prints it again.
	e.rs[0].kill()
	e.rs[0] = e2eServe(t, "--db", e.db)
	if got := setupToken(t, e.rs[0]); got != token {
		t.Fatalf("the restarted replica logged the token %q, before %q", got, token)
	}
	for i, s := range e.rs {
		p := newDashBrowser().do(t, s, "/setup?token="+url.QueryEscape(token), nil)
		if p.status != http.StatusOK || !strings.Contains(p.body, `action="/setup"`) {
			t.Fatalf("replica %d: GET /setup with the link's token: %d\n%s", i, p.status, p.body)
		}
	}

	// The form from one replica, posted to another, as a balancer may.
	b := newDashBrowser()
	form := b.do(t, e.rs[2], "/setup?token="+url.QueryEscape(token), nil)
	p := b.do(t, e.rs[1], "/setup", url.Values{"csrf": {csrfIn(t, form)}, "token": {token},
		"email": {"ann@example.com"}, "password": {"a long enough password"}, "confirm": {"a long enough password"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/apps" {
		t.Fatalf("POST /setup: %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	for i, s := range e.rs {
		if p := b.do(t, s, "/apps", nil); p.status != http.StatusOK {
			t.Fatalf("replica %d: /apps signed in after the setup: %d", i, p.status)
		}
		if p := newDashBrowser().do(t, s, "/setup?token="+url.QueryEscape(token), nil); p.status != http.StatusNotFound {
			t.Fatalf("replica %d: the used link answers %d, want 404", i, p.status)
		}
	}

	// A replica booting now has no link to print. Its setup step runs
	// after it starts serving, so it is stopped once it answers, and its
	// log read to the end: an interrupted step would have logged an error.
	later := e2eServe(t, "--db", e.db)
	if p := newDashBrowser().do(t, later, "/signin", nil); p.status != http.StatusOK {
		t.Fatalf("the later replica's /signin: %d", p.status)
	}
	time.Sleep(time.Second)
	if code, _, err := later.term(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("the later replica: exit %d, %v", code, err)
	}
	for _, l := range later.Logs() {
		if l["setupURL"] != nil || l["msg"] == "dashboard setup link" {
			t.Fatalf("a replica booting after the setup logged %v", l)
		}
	}
}

// TestReplicasE2ESignInThrottle: failed sign-ins sent round robin to three
// replicas on one database lock the account on every one of them once
// their sum reaches the limit, although no replica saw that many; the
// lockout holds on a replica started afterwards, and after every replica
// was restarted.
func TestReplicasE2ESignInThrottle(t *testing.T) {
	e := newReplicaEnv(t)
	const email, password = "ann@example.com", "a long enough password"
	if _, stderr, ok := usersRun(t, password+"\n", "users", "create", "--db", e.db, "--email", email); !ok {
		t.Fatalf("users create: %s", stderr)
	}
	e.start(3)
	const limit = 5 // failures of one email within 15 minutes
	for i := range limit {
		s := e.rs[i%len(e.rs)]
		p := signIn(t, s, email, "wrong password")
		if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Wrong email or password.") {
			t.Fatalf("failure %d on replica %d: %d, want 401", i+1, i%len(e.rs), p.status)
		}
	}
	locked := func(what string, s *e2eServer) {
		t.Helper()
		p := signIn(t, s, email, password)
		if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many failed sign-ins.") {
			t.Fatalf("%s: the right password after %d failures: %d, want 429\n%s", what, limit, p.status, p.body)
		}
		if p.header.Get("Retry-After") == "" {
			t.Fatalf("%s: 429 without Retry-After", what)
		}
	}
	for i, s := range e.rs {
		locked(fmt.Sprintf("replica %d", i), s)
	}
	e.start(1)
	locked("a replica started after the lockout", e.rs[3])
	for _, s := range e.alive() {
		s.kill()
	}
	e.rs = nil
	e.start(2)
	for i, s := range e.rs {
		locked(fmt.Sprintf("restarted replica %d", i), s)
	}
	// Another account is not locked: the lockout is the email's, and the
	// address has failed fewer times than its own limit.
	if _, stderr, ok := usersRun(t, password+"\n", "users", "create", "--db", e.db, "--email", "bob@example.com"); !ok {
		t.Fatalf("users create: %s", stderr)
	}
	if p := signIn(t, e.rs[1], "bob@example.com", password); p.status != http.StatusSeeOther {
		t.Fatalf("another account: %d, want 303\n%s", p.status, p.body)
	}
}
