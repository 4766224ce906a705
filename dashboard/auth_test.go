package dashboard_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"service/dashboard"
	"service/internal/pgtest"
	"service/internal/testclock"
	"service/store"
)

func TestSetupLink(t *testing.T) {
	e := newEnv(t)
	token, err := e.db.CreateSetupToken(e.ctx)
	if err != nil || token == "" {
		t.Fatalf("token=%q, %v", token, err)
	}
	b := e.browser()

	t.Run("WrongTokenIs404", func(t *testing.T) {
		wantStatus(t, b.get("/setup?token=nope"), http.StatusNotFound)
	})
	form := b.get("/setup?token=" + token)
	wantStatus(t, form, http.StatusOK)
	t.Run("SaysHowMoreUsersCome", func(t *testing.T) {
		for _, want := range []string{"invitation", "Settings → Members", "<code>service users create</code>"} {
			if !strings.Contains(form.body, want) {
				t.Fatalf("the setup page does not say %q:\n%s", want, form.body)
			}
		}
	})
	csrf := csrfOf(t, form.body)
	send := func(v url.Values) page {
		v.Set("token", token)
		return b.do("POST", "/setup", v)
	}
	t.Run("CSRFRefused", func(t *testing.T) {
		wantStatus(t, send(url.Values{"email": {testEmail}, "password": {testPassword}, "confirm": {testPassword}}), http.StatusForbidden)
		wantStatus(t, send(url.Values{"csrf": {"forged-token-forged-token-forged-token"}, "email": {testEmail},
			"password": {testPassword}, "confirm": {testPassword}}), http.StatusForbidden)
	})
	t.Run("ErrorsBesideFields", func(t *testing.T) {
		p := send(url.Values{"csrf": {csrf}, "email": {testEmail}, "password": {testPassword}, "confirm": {"other"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "confirm", "does not match") {
			t.Fatalf("no error beside confirm:\n%s", p.body)
		}
		p = send(url.Values{"csrf": {csrf}, "email": {"not-an-email"}, "password": {"short"}, "confirm": {"short"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "email", "must be an email address") || !errBeside(p.body, "password", "must be at least 10") {
			t.Fatalf("no errors beside email and password:\n%s", p.body)
		}
	})
	p := send(url.Values{"csrf": {csrf}, "email": {testEmail}, "password": {testPassword}, "confirm": {testPassword}})
	wantStatus(t, p, http.StatusSeeOther)
	if loc := p.header.Get("Location"); loc != "/apps" {
		t.Fatalf("Location=%q", loc)
	}
	t.Run("SessionCookie", func(t *testing.T) {
		var c *http.Cookie
		for _, raw := range p.header.Values("Set-Cookie") {
			if strings.HasPrefix(raw, "service_session=") {
				c, _ = http.ParseSetCookie(raw)
			}
		}
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || len(c.Value) < 40 || c.MaxAge <= 0 {
			t.Fatalf("session cookie=%+v", c)
		}
	})
	wantStatus(t, b.get("/apps"), http.StatusOK)
	t.Run("LinkWorksOnce", func(t *testing.T) {
		wantStatus(t, e.browser().get("/setup?token="+token), http.StatusNotFound)
		wantStatus(t, send(url.Values{"csrf": {csrf}, "email": {"bob@example.com"}, "password": {testPassword}, "confirm": {testPassword}}), http.StatusNotFound)
		users, _ := e.db.FindDashboardUsers(e.ctx)
		if len(users) != 1 {
			t.Fatalf("users=%d, want 1", len(users))
		}
	})
}

func TestSignIn(t *testing.T) {
	e := newEnv(t).withUser()

	t.Run("RequiredForPages", func(t *testing.T) {
		p := e.browser().get("/apps")
		wantStatus(t, p, http.StatusSeeOther)
		if loc := p.header.Get("Location"); loc != "/signin?next=%2Fapps" {
			t.Fatalf("Location=%q", loc)
		}
	})
	t.Run("CSRFRefused", func(t *testing.T) {
		b := e.browser()
		b.get("/signin")
		wantStatus(t, b.do("POST", "/signin", url.Values{"email": {testEmail}, "password": {testPassword}}), http.StatusForbidden)
		// A token from another browser does not match this one's cookie.
		other := e.browser()
		tok := csrfOf(t, other.get("/signin").body)
		wantStatus(t, b.do("POST", "/signin", url.Values{"csrf": {tok}, "email": {testEmail}, "password": {testPassword}}), http.StatusForbidden)
	})
	t.Run("WrongPassword", func(t *testing.T) {
		b := e.browser()
		p := b.signIn(testEmail, "not the password")
		wantStatus(t, p, http.StatusUnauthorized)
		wantContains(t, p, "Wrong email or password.")
	})
	t.Run("SignOut", func(t *testing.T) {
		b := e.signedIn()
		var cookie string
		u, _ := url.Parse(e.srv.URL)
		for _, c := range b.c.Jar.Cookies(u) {
			if c.Name == "service_session" {
				cookie = c.Value
			}
		}
		wantStatus(t, b.do("POST", "/signout", url.Values{}), http.StatusForbidden)
		wantStatus(t, b.post("/signout", nil), http.StatusSeeOther)
		wantStatus(t, b.get("/apps"), http.StatusSeeOther)
		// The token itself is dead, not just the browser's copy.
		if _, err := e.db.FindDashboardSession(e.ctx, cookie); err == nil {
			t.Fatal("session still live after sign-out")
		}
	})
	t.Run("Expires", func(t *testing.T) {
		b := e.signedIn()
		wantStatus(t, b.get("/apps"), http.StatusOK)
		defer func() { e.db.Now = time.Now }()
		e.db.Now = func() time.Time { return time.Now().Add(e.d.SessionTTL + time.Minute) }
		wantStatus(t, b.get("/apps"), http.StatusSeeOther)
	})
}

// TestNextStaysOnSite sends each spelling of next both as written and
// decoded once, since a browser, a proxy or the query itself may undo one
// layer of escaping before the dashboard sees it.
func TestNextStaysOnSite(t *testing.T) {
	e := newEnv(t).withUser()
	app := e.app("Shop")
	a := "/apps/" + strconv.FormatInt(app.ID, 10)
	tests := []struct{ next, want string }{
		{a + "/content", a + "/content"},
		{a + "/events?eventId=signup", a + "/events?eventId=signup"},
		{a + "/content/../campaigns", a + "/campaigns"},
		{"/apps", "/apps"},
		{"", "/apps"},
		{"/apps/../%5Cevil.example/phish", "/apps"},
		{"/apps/..%2F%5Cevil.example/phish", "/apps"},
		{"/static/../%5Cevil.example/phish", "/apps"},
		{"/apps/../%5C/evil.example/phish", "/apps"},
		{"//evil.example", "/apps"},
		{"//evil.example/x", "/apps"},
		{"https://evil.example", "/apps"},
		{"/%09/evil.example", "/apps"},
		{`/\evil.example`, "/apps"},
		{"/%2F%2Fevil.example", "/apps"},
		{"/apps/%2f%5cevil.example", "/apps"},
		{"/apps/%252F%255Cevil.example", "/apps"},
		{"/apps/%250A/evil.example", "/apps"},
		{"///evil.example/apps", "/apps"},
		{"javascript:alert(1)", "/apps"},
		{"/v1/apps", "/apps"},
		{"/static/app.css", "/apps"},
		{"/signout", "/apps"},
		{"/apps/nowhere/../../v1/apps", "/apps"},
	}
	signedIn := e.signedIn()
	for _, tt := range tests {
		decoded, err := url.PathUnescape(tt.next)
		if err != nil {
			t.Fatal(err)
		}
		for _, next := range []string{tt.next, decoded} {
			t.Run("SigningIn/"+next, func(t *testing.T) {
				b := e.browser()
				tok := csrfOf(t, b.get("/signin").body)
				p := b.do("POST", "/signin", url.Values{"csrf": {tok}, "email": {testEmail}, "password": {testPassword}, "next": {next}})
				wantStatus(t, p, http.StatusSeeOther)
				if loc := p.header.Get("Location"); loc != tt.want {
					t.Errorf("next=%q: Location=%q, want %q", next, loc, tt.want)
				}
			})
			t.Run("SignedIn/"+next, func(t *testing.T) {
				p := signedIn.get("/signin?next=" + url.QueryEscape(next))
				wantStatus(t, p, http.StatusSeeOther)
				if loc := p.header.Get("Location"); loc != tt.want {
					t.Errorf("next=%q: Location=%q, want %q", next, loc, tt.want)
				}
			})
		}
	}
}

func TestSignInThrottle(t *testing.T) {
	e := newEnv(t).withUser()
	clock := testclock.New(time.Now())
	e.db.Now = clock.Now
	b := e.browser()
	for i := 0; i < 5; i++ {
		wantStatus(t, b.signIn(testEmail, "wrong password"), http.StatusUnauthorized)
	}
	// Throttled: even the right password is refused until the window ends.
	p := b.signIn(testEmail, testPassword)
	wantStatus(t, p, http.StatusTooManyRequests)
	wantContains(t, p, "Too many failed sign-ins. Try again in 15 minute(s).")
	if got := p.header.Get("Retry-After"); got != "901" {
		t.Fatalf("Retry-After=%q, want 901", got)
	}
	// The email counts whatever its case.
	wantStatus(t, b.signIn(strings.ToUpper(testEmail), testPassword), http.StatusTooManyRequests)
	clock.Add(14*time.Minute + 30*time.Second)
	p = b.signIn(testEmail, testPassword)
	wantStatus(t, p, http.StatusTooManyRequests)
	wantContains(t, p, "Try again in 1 minute(s).")
	if got := p.header.Get("Retry-After"); got != "31" {
		t.Fatalf("Retry-After=%q, want 31", got)
	}
	clock.Add(time.Minute + 30*time.Second)
	wantStatus(t, b.signIn(testEmail, testPassword), http.StatusSeeOther)

	t.Run("SuccessResets", func(t *testing.T) {
		b := e.browser()
		for range 4 {
			wantStatus(t, b.signIn(testEmail, "wrong password"), http.StatusUnauthorized)
		}
		wantStatus(t, b.signIn(testEmail, testPassword), http.StatusSeeOther)
		for range 4 {
			wantStatus(t, e.browser().signIn(testEmail, "wrong password"), http.StatusUnauthorized)
		}
		wantStatus(t, e.browser().signIn(testEmail, testPassword), http.StatusSeeOther)
	})

	t.Run("PerAddress", func(t *testing.T) {
		// Every test request comes from 127.0.0.1: spreading failures over
		// many emails still trips the address's limit.
		clock.Add(16 * time.Minute)
		b := e.browser()
		for i := 0; i < 20; i++ {
			wantStatus(t, b.signIn("user"+string(rune('a'+i))+"@example.com", "wrong password"), http.StatusUnauthorized)
		}
		wantStatus(t, b.signIn(testEmail, testPassword), http.StatusTooManyRequests)
	})
}

// TestSignInThrottleShared: the throttle is the database's, so dashboards
// on one database (replicas) count the same failures, and a lockout
// outlives a restart.
func TestSignInThrottleShared(t *testing.T) {
	e := newEnv(t).withUser()
	clock := testclock.New(time.Now())
	e.db.Now = clock.Now
	replicas := []*env{e, e.replica()}
	// Five failures, taking turns: each replica saw fewer than the limit.
	for i := range 5 {
		wantStatus(t, replicas[i%2].browser().signIn(testEmail, "wrong password"), http.StatusUnauthorized)
	}
	for i, r := range replicas {
		if p := r.browser().signIn(testEmail, testPassword); p.status != http.StatusTooManyRequests {
			t.Fatalf("replica %d: status=%d, want 429", i, p.status)
		}
	}
	// A new dashboard on the database, as after a restart, knows it too.
	restarted := e.replica()
	wantStatus(t, restarted.browser().signIn(testEmail, testPassword), http.StatusTooManyRequests)
	clock.Add(15 * time.Minute)
	wantStatus(t, restarted.browser().signIn(testEmail, testPassword), http.StatusSeeOther)
	// A success on one replica resets the count on all.
	for range 4 {
		wantStatus(t, replicas[0].browser().signIn(testEmail, "wrong password"), http.StatusUnauthorized)
	}
	wantStatus(t, replicas[1].browser().signIn(testEmail, testPassword), http.StatusSeeOther)
	wantStatus(t, replicas[0].browser().signIn(testEmail, "wrong password"), http.StatusUnauthorized)
	wantStatus(t, replicas[0].browser().signIn(testEmail, testPassword), http.StatusSeeOther)
}

// TestSignInThrottleDatabaseError: when the throttle cannot be read or
// written, signing in answers 500, as other database errors do, and a
// failure is recorded whole or not at all.
func TestSignInThrottleDatabaseError(t *testing.T) {
	e := newEnv(t).withUser()
	raw, err := store.OpenSQL(e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Refuse the email's row: the address's, written first in the same
	// transaction, must not stay.
	if pgtest.Selected() {
		exec(`CREATE FUNCTION refuse_email() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN IF NEW.key LIKE ''email:%'' THEN RAISE EXCEPTION ''refused''; END IF; RETURN NEW; END'`)
		exec(`CREATE TRIGGER refuse_email BEFORE INSERT ON dashboard_signin_failures FOR EACH ROW EXECUTE FUNCTION refuse_email()`)
	} else {
		exec(`CREATE TRIGGER refuse_email BEFORE INSERT ON dashboard_signin_failures WHEN NEW.key LIKE 'email:%' BEGIN SELECT RAISE(ABORT, 'refused'); END`)
	}
	p := e.browser().signIn(testEmail, "wrong password")
	wantStatus(t, p, http.StatusInternalServerError)
	wantContains(t, p, "Something went wrong on the server.")
	var rows int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM dashboard_signin_failures`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("%d throttle rows after a failed record, want 0", rows)
	}

	exec(`DROP TABLE dashboard_signin_failures`)
	b := e.browser()
	wantStatus(t, b.signIn(testEmail, testPassword), http.StatusInternalServerError)
	wantStatus(t, b.get("/apps"), http.StatusSeeOther) // not signed in
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	for _, path := range []string{"/signin", "/apps", "/static/app.css", "/apps/999/content"} {
		p := b.get(path)
		h := p.header
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP=%q", path, csp)
		}
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with the dashboard's own forms, which are refused.
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers=%v", path, h)
		}
		if strings.Contains(p.body, "<script>") || strings.Contains(p.body, " onclick=") || strings.Contains(p.body, "style=") {
			t.Errorf("%s: inline script or style in page", path)
		}
	}
}

func TestAPIUnchanged(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	for path, want := range map[string]int{"/healthz": 200, "/v1/apps/1/content": 401, "/api/v1/apps/1/content": 401, "/v1/nope": 404, "/metrics-or-other": 404} {
		p := b.get(path)
		if p.status != want || !strings.HasPrefix(p.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: status=%d type=%q, want %d JSON", path, p.status, p.header.Get("Content-Type"), want)
		}
	}
}

// TestSignInLockoutSurvivesAFlood: failures from many other addresses,
// and the trimming of the expired ones that they set off, must not end a
// lockout.
func TestSignInLockoutSurvivesAFlood(t *testing.T) {
	e := newEnv(t).withUser()
	clock := testclock.New(time.Now())
	e.db.Now = clock.Now
	if err := dashboard.FailSignInsFrom(e.d, 0, 500); err != nil {
		t.Fatal(err)
	}
	clock.Add(5 * time.Minute)
	b := e.browser()
	for range 5 {
		wantStatus(t, b.signIn(testEmail, "wrong password"), http.StatusUnauthorized)
	}
	wantStatus(t, b.signIn(testEmail, testPassword), http.StatusTooManyRequests)
	// The first flood's windows have ended; the second one's failures
	// trim them.
	clock.Add(11 * time.Minute)
	if err := dashboard.FailSignInsFrom(e.d, 500, 500); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, b.signIn(testEmail, testPassword), http.StatusTooManyRequests)
	clock.Add(4 * time.Minute)
	wantStatus(t, b.signIn(testEmail, testPassword), http.StatusSeeOther)
}

// TestForeignOriginRefused: a state-changing request that says it comes
// from another origin is refused even with a valid CSRF token, and
// changes nothing; one from the dashboard's own origin, or that names no
// origin, works as before.
func TestForeignOriginRefused(t *testing.T) {
	e := newEnv(t).withUser()
	own := e.srv.URL
	host := strings.TrimPrefix(own, "http://")
	port := host[strings.LastIndex(host, ":")+1:]
	otherPort, _ := strconv.Atoi(port)
	otherPort++
	headers := []struct {
		name string
		h    http.Header
		ok   bool
	}{
		{"None", nil, true},
		{"OwnOrigin", http.Header{"Origin": {own}}, true},
		{"OwnOriginOverTLSProxy", http.Header{"Origin": {"https://" + host}}, true},
		{"OwnReferer", http.Header{"Referer": {own + "/apps"}}, true},
		{"OwnOriginForeignReferer", http.Header{"Origin": {own}, "Referer": {"https://evil.example/"}}, true},
		{"ForeignOrigin", http.Header{"Origin": {"https://evil.example"}}, false},
		{"ForeignOriginOwnReferer", http.Header{"Origin": {"https://evil.example"}, "Referer": {own + "/apps"}}, false},
		{"NullOrigin", http.Header{"Origin": {"null"}}, false},
		{"OtherPort", http.Header{"Origin": {"http://127.0.0.1:" + strconv.Itoa(otherPort)}}, false},
		{"OtherScheme", http.Header{"Origin": {"ftp://" + host}}, false},
		{"ForeignReferer", http.Header{"Referer": {"https://evil.example/page"}}, false},
		{"SubdomainLookalike", http.Header{"Origin": {"http://" + host + ".evil.example"}}, false},
	}
	signedIn := func(b *browser) bool { return b.get("/apps").status == http.StatusOK }
	forms := []struct {
		name string
		// send makes the request from a fresh browser; took reports
		// whether it had its effect.
		send func(b *browser, h http.Header) page
		took func(b *browser) bool
	}{
		{"SignIn", func(b *browser, h http.Header) page {
			tok := csrfOf(t, b.get("/signin").body)
			return b.doWith("POST", "/signin", url.Values{"csrf": {tok}, "email": {testEmail}, "password": {testPassword}}, h)
		}, signedIn},
		{"CreateApp", func(b *browser, h http.Header) page {
			*b = *e.signedIn()
			return b.doWith("POST", "/apps", url.Values{"csrf": {b.csrf}, "name": {"Made " + b.csrf}, "plan": {"free"}}, h)
		}, func(b *browser) bool {
			apps, err := e.db.FindAllApps(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range apps {
				if a.Name == "Made "+b.csrf {
					return true
				}
			}
			return false
		}},
		{"SignOut", func(b *browser, h http.Header) page {
			*b = *e.signedIn()
			return b.doWith("POST", "/signout", url.Values{"csrf": {b.csrf}}, h)
		}, func(b *browser) bool { return !signedIn(b) }},
	}
	for _, f := range forms {
		for _, hc := range headers {
			t.Run(f.name+"/"+hc.name, func(t *testing.T) {
				b := e.browser()
				p := f.send(b, hc.h)
				if hc.ok {
					wantStatus(t, p, http.StatusSeeOther)
				} else {
					wantStatus(t, p, http.StatusForbidden)
					wantContains(t, p, "did not come from this dashboard")
				}
				if took := f.took(b); took != hc.ok {
					t.Fatalf("took effect: %v, want %v", took, hc.ok)
				}
			})
		}
	}
}
