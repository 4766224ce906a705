package dashboard

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"

	"service/store"
)

// Sign-in throttle: failures counted per email and per client address
// within store.SignInWindow. They are kept in the database, so every
// process sharing it counts the same failures and a lockout outlives a
// restart. An address gets more tries than an email because several
// people may share one (an office behind NAT).
const (
	maxEmailFailures = 5
	maxAddrFailures  = 20
)

// signInKeys are the throttle's keys of a sign-in: the email, whatever
// its case, and the client address.
type signInKeys struct{ email, addr string }

func keysOf(email string, r *http.Request) signInKeys {
	return signInKeys{email: "email:" + strings.ToLower(email), addr: "addr:" + clientAddr(r)}
}

// lockout returns how long until a sign-in with keys k may be tried again,
// or 0.
func (d *Dashboard) lockout(r *http.Request, k signInKeys) (time.Duration, error) {
	return d.DB.SignInLockout(r.Context(),
		store.SignInLimit{Key: k.email, Max: maxEmailFailures}, store.SignInLimit{Key: k.addr, Max: maxAddrFailures})
}

// signInFailed counts a failed sign-in against both keys, together.
func (d *Dashboard) signInFailed(r *http.Request, k signInKeys) error {
	return d.DB.RecordSignInFailure(r.Context(), k.email, k.addr)
}

// tooManySignIns answers an attempt while locked out: page, with how long
// to wait in v's banner and in Retry-After.
func (d *Dashboard) tooManySignIns(w http.ResponseWriter, r *http.Request, page string, v *view, wait time.Duration) {
	v.Error = "Too many failed sign-ins. Try again in " + strconv.Itoa(int((wait+time.Minute-1)/time.Minute)) + " minute(s)."
	w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
	d.render(w, r, http.StatusTooManyRequests, page, v)
}

// serverError logs err and answers 500, for the signed-out pages, which
// have no session for d.fail.
func (d *Dashboard) serverError(w http.ResponseWriter, r *http.Request, what string, err error) {
	d.Log.Error(what, "err", err)
	d.render(w, r, http.StatusInternalServerError, "message", &view{Title: "Error", Error: "Something went wrong on the server. It has been logged."})
}

func (d *Dashboard) handleRoot(w http.ResponseWriter, r *http.Request) {
	if d.session(r) != nil {
		http.Redirect(w, r, "/apps", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// preToken returns the signed-out forms' CSRF token, setting its cookie
// when the browser has none. The form must echo the cookie (double
// submit): another site can make a browser post, but cannot read the
// cookie to put its value in the form.
func preToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(preCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	b := make([]byte, 24)
	rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: preCookie, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return tok
}

// checkPreForm parses a signed-out form and checks its CSRF token.
func (d *Dashboard) checkPreForm(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		d.render(w, r, http.StatusBadRequest, "message", &view{Title: "Bad request", Error: "The form could not be read."})
		return false
	}
	c, err := r.Cookie(preCookie)
	if err != nil || !sameToken(r.PostFormValue("csrf"), c.Value) {
		d.render(w, r, http.StatusForbidden, "message", &view{Title: "Refused",
			Error: "This form has expired or did not come from this dashboard. Reload the page and try again."})
		return false
	}
	return true
}

// authView is the data of the sign-in and setup pages.
type authView struct {
	CSRF, Token, Next string
	NoUsers           bool
}

func (d *Dashboard) handleSetupForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	token := r.URL.Query().Get("token")
	if err := d.DB.CheckSetupToken(r.Context(), token); err != nil {
		d.setupRefused(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "setup", &view{Title: "Create the first user", Data: authView{CSRF: preToken(w, r), Token: token}})
}

func (d *Dashboard) setupRefused(w http.ResponseWriter, r *http.Request, err error) {
	if store.ErrorCode(err) == store.ENOTFOUND {
		d.render(w, r, http.StatusNotFound, "message", &view{Title: "Setup link used",
			Error: "This setup link is invalid or has already been used. Sign in, or create a user with: service users create"})
		return
	}
	d.serverError(w, r, "setup", err)
}

func (d *Dashboard) handleSetup(w http.ResponseWriter, r *http.Request) {
	if !d.checkPreForm(w, r) {
		return
	}
	r = withCaller(r, nil)
	token, email, password := r.PostFormValue("token"), r.PostFormValue("email"), r.PostFormValue("password")
	v := &view{Title: "Create the first user", Errors: map[string]string{}, Form: r.PostForm,
		Data: authView{CSRF: preToken(w, r), Token: token}}
	if password != r.PostFormValue("confirm") {
		v.Errors["confirm"] = "does not match the password"
		d.render(w, r, http.StatusUnprocessableEntity, "setup", v)
		return
	}
	u, err := d.DB.CompleteSetup(r.Context(), token, email, password)
	if err != nil {
		if store.ErrorCode(err) == store.EINVALID && formErrors(v, err) {
			d.render(w, r, http.StatusUnprocessableEntity, "setup", v)
			return
		}
		d.setupRefused(w, r, err)
		return
	}
	d.Log.Info("dashboard user created through the setup link", "email", u.Email)
	d.startSession(w, r, u.ID, "/apps")
}

func (d *Dashboard) handleSignInForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if d.session(r) != nil {
		seeOther(w, d.safeNext(r.URL.Query().Get("next")))
		return
	}
	v := &view{Title: "Sign in", Data: d.signInData(w, r, r.URL.Query().Get("next"))}
	if n := notices[r.URL.Query().Get("notice")]; n != "" {
		v.Notice = n
	}
	d.render(w, r, http.StatusOK, "signin", v)
}

func (d *Dashboard) signInData(w http.ResponseWriter, r *http.Request, next string) authView {
	users, err := d.DB.FindDashboardUsers(r.Context())
	return authView{CSRF: preToken(w, r), Next: next, NoUsers: err == nil && len(users) == 0}
}

func (d *Dashboard) handleSignIn(w http.ResponseWriter, r *http.Request) {
	if !d.checkPreForm(w, r) {
		return
	}
	email, password := strings.TrimSpace(r.PostFormValue("email")), r.PostFormValue("password")
	next := r.PostFormValue("next")
	v := &view{Title: "Sign in", Errors: map[string]string{}, Form: r.PostForm, Data: d.signInData(w, r, next)}
	keys := keysOf(email, r)
	wait, err := d.lockout(r, keys)
	if err != nil {
		d.serverError(w, r, "sign-in throttle", err)
		return
	}
	if wait > 0 {
		d.tooManySignIns(w, r, "signin", v, wait)
		return
	}
	u, err := d.DB.AuthenticateDashboardUser(r.Context(), email, password)
	if err != nil {
		if err != store.ErrBadCredentials {
			d.Log.Error("sign in", "err", err)
		}
		if err := d.signInFailed(r, keys); err != nil {
			d.serverError(w, r, "sign-in throttle", err)
			return
		}
		d.Log.Warn("dashboard sign-in failed", "email", email, "addr", clientAddr(r))
		v.Error = "Wrong email or password."
		d.render(w, r, http.StatusUnauthorized, "signin", v)
		return
	}
	if err := d.DB.ResetSignInFailures(r.Context(), keys.email); err != nil {
		d.serverError(w, r, "sign-in throttle", err)
		return
	}
	d.startSession(w, r, u.ID, d.safeNext(next))
}

// safeNext returns where to send a browser after signing in: next when it
// names a page of the dashboard, else /apps. Checking the raw string is not
// enough: http.Redirect cleans the path it is given, so "/apps/../\x"
// became "/\x", which browsers read as "//x", another host. So next is
// parsed, cleaned here, checked against the routes as cleaned, and what
// was checked is what the browser gets.
func (d *Dashboard) safeNext(next string) string {
	const home = "/apps"
	// A browser drops tabs and newlines from URLs and reads "\" as "/", so
	// any of them could turn a path into a host; escaped slashes are
	// refused too, since one more decoding would make them real.
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') || hasControl(next) {
		return home
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return home
	}
	if strings.ContainsRune(u.Path, '\\') || hasControl(u.Path) {
		return home
	}
	// Escaped once, the raw path shows it; escaped twice, the decoded one.
	for _, s := range []string{u.EscapedPath(), u.Path} {
		if s = strings.ToLower(s); strings.Contains(s, "%2f") || strings.Contains(s, "%5c") {
			return home
		}
	}
	p := path.Clean(u.Path)
	// Only pages a signed-in person opens: those under /apps that the
	// router answers with something other than its not-found page.
	if p != "/apps" && !strings.HasPrefix(p, "/apps/") {
		return home
	}
	if _, pattern := d.mux.Handler(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: p}}); pattern == "" || pattern == "/" {
		return home
	}
	to := (&url.URL{Path: p}).EscapedPath()
	if q := u.Query(); len(q) > 0 {
		to += "?" + q.Encode()
	}
	return to
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// seeOther redirects to exactly to, which must be a clean absolute path:
// http.Redirect would clean it again, and cleaning is what safeNext must
// see last.
func seeOther(w http.ResponseWriter, to string) {
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusSeeOther)
}

func (d *Dashboard) startSession(w http.ResponseWriter, r *http.Request, userID int64, to string) {
	token, s, err := d.DB.CreateDashboardSession(r.Context(), userID, d.SessionTTL)
	if err != nil {
		d.serverError(w, r, "create session", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, Expires: s.ExpiresAt, MaxAge: int(d.SessionTTL.Seconds())})
	seeOther(w, to)
}

func (d *Dashboard) handleSignOut(w http.ResponseWriter, r *req) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := d.DB.DeleteDashboardSession(r.Context(), c.Value); err != nil {
			d.fail(w, r, err)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: -1})
	http.Redirect(w, r.Request, "/signin?notice=signed_out", http.StatusSeeOther)
}
