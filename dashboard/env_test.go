package dashboard_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"service/dashboard"
	"service/handlers"
	"service/internal/storetest"
	"service/store"
)

func init() { store.PasswordCost = bcrypt.MinCost }

const (
	testEmail    = "ann@example.com"
	testPassword = "correct horse battery"
)

// env is the dashboard and the API on one test server over a real
// database file, as serve mounts them.
type env struct {
	t    testing.TB
	db   *store.DB
	d    *dashboard.Dashboard
	srv  *httptest.Server
	now  time.Time
	ctx  context.Context
	user *store.DashboardUser
	path string // the database file
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return openEnv(t, storetest.DB(t, filepath.Join(t.TempDir(), "dash.db")))
}

// openEnv serves the dashboard and the API over the database at path.
func openEnv(t testing.TB, path string) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{t: t, db: db, ctx: ctx, now: time.Now(), path: path}
	e.d = dashboard.New(db, log)
	e.d.Now = func() time.Time { return e.now }
	e.srv = httptest.NewServer(dashboard.Mount(handlers.New(db, log), e.d))
	t.Cleanup(e.srv.Close)
	return e
}

// replica is another process on e's database, as a second replica or a
// restarted server is: a store handle, dashboard and test server of its
// own, on e's store clock, knowing e's user.
func (e *env) replica() *env {
	e.t.Helper()
	r := openEnv(e.t, e.path)
	r.db.Now, r.user = e.db.Now, e.user
	return r
}

// withUser creates the standard user.
func (e *env) withUser() *env {
	e.t.Helper()
	u, err := e.db.CreateDashboardUser(e.ctx, testEmail, testPassword, true)
	if err != nil {
		e.t.Fatal(err)
	}
	e.user = u
	return e
}

// browser is a cookie-keeping client that does not follow redirects, so
// tests see each answer.
type browser struct {
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values) page {
	b.e.t.Helper()
	return b.doWith(method, path, form, nil)
}

// doWith is do with extra request headers.
func (b *browser) doWith(method, path string, form url.Values, h http.Header) page {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.e.srv.URL+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header, string(raw)}
}

func (b *browser) get(path string) page { return b.do("GET", path, nil) }

// post sends a form with the session's CSRF token.
func (b *browser) post(path string, form url.Values) page {
	b.e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf") == "" {
		form.Set("csrf", b.csrf)
	}
	return b.do("POST", path, form)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t testing.TB, body string) string {
	t.Helper()
	m := csrfRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in page:\n%s", body)
	}
	return m[1]
}

// signIn signs the browser in as email and learns the session's token.
func (b *browser) signIn(email, password string) page {
	b.e.t.Helper()
	form := b.get("/signin")
	p := b.do("POST", "/signin", url.Values{"csrf": {csrfOf(b.e.t, form.body)}, "email": {email}, "password": {password}})
	if p.status == http.StatusSeeOther {
		apps := b.get("/apps")
		b.csrf = csrfOf(b.e.t, apps.body)
	}
	return p
}

// signedIn is a browser signed in as the standard user.
func (e *env) signedIn() *browser {
	e.t.Helper()
	if e.user == nil {
		e.withUser()
	}
	b := e.browser()
	if p := b.signIn(testEmail, testPassword); p.status != http.StatusSeeOther {
		e.t.Fatalf("sign in: status=%d\n%s", p.status, p.body)
	}
	return b
}

func (e *env) app(name string) *store.App {
	e.t.Helper()
	a, err := e.db.CreateApp(e.ctx, name, "free", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) content(appID int64, name, items string) *store.ContentView {
	e.t.Helper()
	c, err := e.db.CreateContent(e.ctx, appID, store.ContentInput{Name: &name, Items: []byte(items)})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// published creates a published content block, one a campaign can start
// with.
func (e *env) published(appID int64, name, items string) *store.ContentView {
	e.t.Helper()
	pub := store.ContentPublished
	c, err := e.db.CreateContent(e.ctx, appID, store.ContentInput{Name: &name, Status: &pub, Items: []byte(items)})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) webhook(appID int64, u string) *store.Webhook {
	e.t.Helper()
	ev := []string{"*"}
	h, err := e.db.CreateWebhook(e.ctx, appID, store.WebhookInput{URL: &u, Events: &ev})
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func wantStatus(t *testing.T, p page, want int) {
	t.Helper()
	if p.status != want {
		t.Fatalf("status=%d, want %d\n%s", p.status, want, p.body)
	}
}

func wantContains(t *testing.T, p page, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(p.body, s) {
			t.Fatalf("page lacks %q\n%s", s, p.body)
		}
	}
}

// errBeside reports whether the page shows reason right after the input
// named field, which is where the editor puts a field's error.
func errBeside(body, field, reason string) bool {
	i := strings.Index(body, `name="`+field+`"`)
	if i < 0 {
		return false
	}
	rest := body[i:]
	j := strings.Index(rest, `class="ferr"`)
	return j >= 0 && strings.Count(rest[:j], `name="`) == 1 && strings.HasPrefix(rest[j+len(`class="ferr">`):], reason)
}
