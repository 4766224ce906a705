// Package dashboard is the web interface people use to run the service:
// server-rendered pages over the same store methods as the API, so both
// always apply the same rules. Templates and static files are embedded;
// nothing is fetched at run time and every form works without JavaScript.
package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"service/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Cookie names. The session cookie is the only credential; the pre-session
// cookie only pairs the sign-in and setup forms with their CSRF token.
const (
	sessionCookie = "service_session"
	preCookie     = "service_csrf"
)

// maxFormBytes caps a form body; the largest form, a content block with
// its items, stays far below it.
const maxFormBytes = 1 << 20

// Dashboard serves the web interface.
type Dashboard struct {
	DB  *store.DB
	Log *slog.Logger
	// SessionTTL is how long a sign-in lasts.
	SessionTTL time.Duration
	// WebhookTimeout is the delivery timeout given to new webhooks, as the
	// API gives it (serve's --webhook-timeout).
	WebhookTimeout time.Duration
	// Now is the clock of the events page's counts; tests replace it.
	// The store's clock (store.DB.Now) rules sessions and the sign-in
	// throttle.
	Now func() time.Time

	pages  pages
	mux    *http.ServeMux
	routes []Route // every route registered, for Routes
}

// New builds the dashboard and its routes.
func New(db *store.DB, log *slog.Logger) *Dashboard {
	if log == nil {
		log = slog.Default()
	}
	d := &Dashboard{DB: db, Log: log, SessionTTL: 12 * time.Hour, WebhookTimeout: 30 * time.Second, Now: time.Now}
	d.pages = parsePages()
	d.mux = d.register()
	return d
}

// Access says who may use a route. Everything is checked on the server,
// on every request: hiding a button is a courtesy, not the check.
type Access string

// The access levels of the dashboard's routes. An app's routes need a role
// in the app named in the path: a member without one gets 404, as the API
// answers for another app's ids; one whose role is too low gets 403.
// Owners may do everything.
const (
	Public   Access = "public"    // no session needed
	SignedIn Access = "signed-in" // any signed-in user
	Owner    Access = "owner"     // owners only
	Viewer   Access = store.MemberViewer
	Editor   Access = store.MemberEditor
	Admin    Access = store.MemberAdmin
)

// Route is one route of the dashboard and who may use it.
type Route struct {
	Pattern string // as http.ServeMux takes it: "GET /apps/{app}/campaigns"
	Access  Access
}

// Routes lists every route the dashboard serves, in registration order,
// so that tests can check each one's access without a list of their own.
func (d *Dashboard) Routes() []Route { return slices.Clone(d.routes) }

// IsDashboardPath reports whether the dashboard serves path. Everything
// else (/v1, /api/v1, /healthz, /livez and whatever the API adds) stays the API's.
func IsDashboardPath(p string) bool {
	switch p {
	case "/", "/setup", "/signin", "/signout", "/apps", "/invite", "/users", "/activity", "/account/password", "/reset-password", "/keys":
		return true
	}
	return strings.HasPrefix(p, "/apps/") || strings.HasPrefix(p, "/static/") || strings.HasPrefix(p, "/users/") ||
		strings.HasPrefix(p, "/keys/")
}

// Mount returns a handler that serves the dashboard's paths and passes
// every other request to api unchanged.
func Mount(api http.Handler, d *Dashboard) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if IsDashboardPath(r.URL.Path) {
			d.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// register registers every page in one place, each with who may use it.
// Everything an app owns lives under /apps/{app}/, the app chosen in the
// dashboard: the store looks each id up within that app, so another app's
// id is a 404.
func (d *Dashboard) register() *http.ServeMux {
	m := http.NewServeMux()
	add := func(pattern string, a Access, h handler) {
		d.routes = append(d.routes, Route{pattern, a})
		switch a {
		case SignedIn, Owner:
			m.Handle(pattern, d.user(a, h))
		default:
			m.Handle(pattern, d.inApp(a, h))
		}
	}
	public := func(pattern string, h http.Handler) {
		d.routes = append(d.routes, Route{pattern, Public})
		m.Handle(pattern, h)
	}
	static, _ := fs.Sub(staticFS, "static")
	public("GET /static/", http.StripPrefix("/static/", staticHandler(static)))

	public("GET /{$}", http.HandlerFunc(d.handleRoot))
	public("GET /setup", http.HandlerFunc(d.handleSetupForm))
	public("POST /setup", http.HandlerFunc(d.handleSetup))
	public("GET /signin", http.HandlerFunc(d.handleSignInForm))
	public("POST /signin", http.HandlerFunc(d.handleSignIn))
	public("GET /invite", http.HandlerFunc(d.handleInviteForm))
	public("POST /invite", http.HandlerFunc(d.handleInviteAccept))
	public("GET /reset-password", http.HandlerFunc(d.handleResetForm))
	public("POST /reset-password", http.HandlerFunc(d.handleReset))
	add("POST /signout", SignedIn, d.handleSignOut)
	add("GET /account/password", SignedIn, d.handlePasswordForm)
	add("POST /account/password", SignedIn, d.handlePasswordChange)

	// Apps: list (a member's own), create (owners), switch.
	add("GET /apps", SignedIn, d.handleApps)
	add("POST /apps", Owner, d.handleAppCreate)
	add("GET /apps/switch", SignedIn, d.handleAppSwitch)
	add("GET /apps/{app}", Viewer, d.handleAppHome)

	// The instance: users and owners, its own changes, and the instance
	// keys that provision apps over the API.
	add("GET /users", Owner, d.handleUsers)
	add("POST /users/{id}/owner", Owner, d.handleUserOwner)
	add("POST /users/{id}/delete", Owner, d.handleUserDelete)
	add("POST /users/{id}/reset-link", Owner, d.handleResetLink)
	add("GET /activity", Owner, d.handleInstanceActivity)
	add("GET /keys", Owner, d.handleInstanceKeys)
	add("POST /keys", Owner, d.handleInstanceKeyCreate)
	add("GET /keys/{id}/revoke", Owner, d.handleInstanceKeyRevokeConfirm)
	add("POST /keys/{id}/revoke", Owner, d.handleInstanceKeyRevoke)

	// Settings → API Keys.
	add("GET /apps/{app}/settings/keys", Admin, d.handleKeys)
	add("POST /apps/{app}/settings/keys", Admin, d.handleKeyCreate)
	add("GET /apps/{app}/settings/keys/{id}/revoke", Admin, d.handleKeyRevokeConfirm)
	add("POST /apps/{app}/settings/keys/{id}/revoke", Admin, d.handleKeyRevoke)

	// Settings → Members: roles and invitations.
	add("GET /apps/{app}/settings/members", Admin, d.handleMembers)
	add("POST /apps/{app}/settings/members", Admin, d.handleInvite)
	add("POST /apps/{app}/settings/members/{id}/role", Admin, d.handleMemberRole)
	add("POST /apps/{app}/settings/members/{id}/remove", Admin, d.handleMemberRemove)
	add("POST /apps/{app}/settings/invitations/{id}/revoke", Admin, d.handleInvitationRevoke)

	// Campaigns: list, editor, lifecycle, results and preview.
	add("GET /apps/{app}/campaigns", Viewer, d.handleCampaignList)
	add("GET /apps/{app}/campaigns/new", Editor, d.handleCampaignNew)
	add("POST /apps/{app}/campaigns", Editor, d.handleCampaignCreate)
	add("GET /apps/{app}/campaigns/{id}", Viewer, d.handleCampaign)
	add("POST /apps/{app}/campaigns/{id}", Editor, d.handleCampaignSave)
	add("POST /apps/{app}/campaigns/{id}/status", Editor, d.handleCampaignMove)
	add("GET /apps/{app}/campaigns/{id}/results", Viewer, d.handleResults)
	add("GET /apps/{app}/campaigns/{id}/results.csv", Viewer, d.handleResultsCSV)
	add("GET /apps/{app}/campaigns/{id}/preview", Viewer, d.handlePreview)

	// Audiences: list, rule builder, check a user, recount, archive.
	add("GET /apps/{app}/audiences", Viewer, d.handleAudienceList)
	add("GET /apps/{app}/audiences/new", Editor, d.handleAudienceNew)
	add("POST /apps/{app}/audiences", Editor, d.handleAudienceCreate)
	add("GET /apps/{app}/audiences/{id}", Viewer, d.handleAudience)
	add("POST /apps/{app}/audiences/{id}", Editor, d.handleAudienceSave)
	add("GET /apps/{app}/audiences/{id}/check", Viewer, d.handleAudienceCheck)
	add("POST /apps/{app}/audiences/{id}/recount", Editor, d.handleAudienceRecount)
	add("POST /apps/{app}/audiences/{id}/status", Editor, d.handleAudienceStatus)

	// Metrics: the app's library of what campaigns measure beside their
	// goal, and which campaigns use each.
	add("GET /apps/{app}/metrics", Viewer, d.handleMetricList)
	add("GET /apps/{app}/metrics/new", Editor, d.handleMetricNew)
	add("POST /apps/{app}/metrics", Editor, d.handleMetricCreate)
	add("GET /apps/{app}/metrics/{id}", Viewer, d.handleMetric)
	add("POST /apps/{app}/metrics/{id}", Editor, d.handleMetricSave)
	add("GET /apps/{app}/metrics/{id}/delete", Editor, d.handleMetricDeleteConfirm)
	add("POST /apps/{app}/metrics/{id}/delete", Editor, d.handleMetricDelete)

	// Events: the explorer. People: one user's profile, assignments and
	// timeline; an admin exports or erases everything stored about them.
	add("GET /apps/{app}/events", Viewer, d.handleEvents)
	add("GET /apps/{app}/users", Viewer, d.handleUser)
	add("GET /apps/{app}/users/export", Admin, d.handleUserExport)
	add("POST /apps/{app}/users/erase", Admin, d.handleUserErase)

	// Activity: the app's audit log.
	add("GET /apps/{app}/activity", Viewer, d.handleActivity)

	// Settings: the app's plan, rate limit and allowed CORS origins.
	add("GET /apps/{app}/settings", Admin, d.handleSettings)
	add("POST /apps/{app}/settings", Admin, d.handleSettingsSave)

	// Content blocks, their preview and their form submissions.
	add("GET /apps/{app}/content", Viewer, d.handleContentList)
	add("GET /apps/{app}/content/new", Editor, d.handleContentNew)
	add("POST /apps/{app}/content", Editor, d.handleContentCreate)
	add("GET /apps/{app}/content/{id}", Viewer, d.handleContentEdit)
	add("POST /apps/{app}/content/{id}", Editor, d.handleContentSave)
	add("POST /apps/{app}/content/{id}/status", Editor, d.handleContentStatus)
	add("GET /apps/{app}/content/{id}/submissions", Viewer, d.handleSubmissions)
	add("GET /apps/{app}/content/{id}/submissions.csv", Editor, d.handleSubmissionsCSV)

	// Webhooks and their delivery log.
	add("GET /apps/{app}/webhooks", Viewer, d.handleWebhooks)
	add("GET /apps/{app}/webhooks/new", Editor, d.handleWebhookNew)
	add("POST /apps/{app}/webhooks", Editor, d.handleWebhookCreate)
	add("GET /apps/{app}/webhooks/{id}", Viewer, d.handleWebhook)
	add("POST /apps/{app}/webhooks/{id}", Editor, d.handleWebhookSave)
	add("POST /apps/{app}/webhooks/{id}/test", Editor, d.handleWebhookTest)
	add("POST /apps/{app}/webhooks/{id}/enable", Editor, d.handleWebhookEnable)
	add("POST /apps/{app}/webhooks/{id}/rotate-secret", Editor, d.handleWebhookRotate)
	add("GET /apps/{app}/webhooks/{id}/delete", Editor, d.handleWebhookDeleteConfirm)
	add("POST /apps/{app}/webhooks/{id}/delete", Editor, d.handleWebhookDelete)
	add("POST /apps/{app}/webhooks/{id}/deliveries/{delivery}/redeliver", Editor, d.handleRedeliver)

	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		d.notFound(w, r, nil)
	})
	return m
}

// section is a part of an app, and the least role that may open it.
type section struct {
	Key, Title, Path string
	Need             Access
}

// sections are the parts of an app, in navigation order.
var sections = []section{
	{"campaigns", "Campaigns", "/campaigns", Viewer},
	{"content", "Content blocks", "/content", Viewer},
	{"audiences", "Audiences", "/audiences", Viewer},
	{"metrics", "Metrics", "/metrics", Viewer},
	{"events", "Events", "/events", Viewer},
	{"people", "People", "/users", Viewer},
	{"webhooks", "Webhooks", "/webhooks", Viewer},
	{"activity", "Activity", "/activity", Viewer},
	{"settings", "Settings", "/settings", Admin},
	{"keys", "Settings → API Keys", "/settings/keys", Admin},
	{"members", "Settings → Members", "/settings/members", Admin},
}

// ServeHTTP sets the security headers every page carries, then routes.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h := w.Header()
	// No inline script or style anywhere: only the embedded files run.
	// Images may come from anywhere because content blocks show theirs.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// The setup link carries its token in the query: never send it to
	// another site. Not no-referrer: under it browsers send "Origin: null"
	// with the dashboard's own forms, which sameOrigin must refuse.
	h.Set("Referrer-Policy", "same-origin")
	// The request id names the request in the audit log of the changes
	// it makes, as the API's does.
	id := requestID(r.Header.Get("X-Request-Id"))
	h.Set("X-Request-Id", id)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	if sameOrigin(r) {
		d.mux.ServeHTTP(rec, r)
	} else {
		h.Set("Cache-Control", "no-store")
		d.render(rec, r, http.StatusForbidden, "message", &view{Title: "Refused",
			Error: "This form did not come from this dashboard. Reload the page and try again."})
	}
	d.Log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("request_id", id),
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
}

// sameOrigin reports whether r may go on: any request that cannot change
// anything, and one that changes something when it names no origin or
// names the dashboard's own. Browsers name the origin of a form's page in
// Origin, or failing that (older ones) in Referer; a request from a script
// or a command line names none and still needs its CSRF token. This is a
// second line behind the token, as OWASP advises: a leaked token alone
// does not let another site post.
func sameOrigin(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	from := r.Header.Get("Origin")
	if from == "" {
		if from = r.Header.Get("Referer"); from == "" {
			return true
		}
	}
	// "null", the origin of sandboxed and privacy-sensitive contexts, has
	// no host and so is refused.
	u, err := url.Parse(from)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return false
	}
	// Behind a proxy that ends TLS the request arrives over plain HTTP
	// from a page served over HTTPS, so only a TLS request pins the scheme.
	return u.Scheme == "https" || (u.Scheme == "http" && r.TLS == nil)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (the CSV export
// extends its write deadline).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush lets the CSV export stream through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// staticHandler serves the embedded files; they change only with the
// binary, so a browser may keep them for a while.
func staticHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// req is one signed-in request: its session and, under /apps/{app}/, the
// app chosen and the user's role in it.
type req struct {
	*http.Request
	Session *store.DashboardSession
	App     *store.App
	// Role is the user's role in App: an owner's is Owner.
	Role Access
}

type handler func(w http.ResponseWriter, r *req)

// rank orders roles; an owner outranks every member.
func rank(a Access) int {
	if a == Owner {
		return len(store.MemberRoles) + 1
	}
	return store.RoleRank(string(a))
}

// can reports whether the request's role in its app reaches need.
func (r *req) can(need Access) bool { return rank(r.Role) >= rank(need) }

type requestIDKey struct{}

// requestID returns the client's X-Request-Id when it is well formed (1 to
// 128 characters of A-Z a-z 0-9 . _ -), as the API keeps it, and a new
// random one otherwise.
func requestID(h string) string {
	if n := len(h); n >= 1 && n <= 128 && !strings.ContainsFunc(h, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}) {
		return h
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withCaller names who makes the request's changes, for the audit log: the
// signed-in user, or (with a zero user, for the setup and invitation
// pages, where people create themselves) nobody yet.
func withCaller(r *http.Request, u *store.DashboardUser) *http.Request {
	c := store.Caller{Actor: store.Actor{Type: store.ActorUser}, Addr: clientAddr(r)}
	if u != nil {
		c.Actor = store.UserActor(*u)
	}
	c.RequestID, _ = r.Context().Value(requestIDKey{}).(string)
	return r.WithContext(store.WithCaller(r.Context(), c))
}

// user requires a signed-in session, and a valid CSRF token on anything
// but GET; with a Owner, an owner's. Signed-out browsers are sent to the
// sign-in page.
func (d *Dashboard) user(a Access, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		s := d.session(r)
		if s == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			d.render(w, r, http.StatusUnauthorized, "message", &view{Title: "Signed out",
				Error: "You are signed out. Sign in again, then repeat what you did."})
			return
		}
		if r.Method != http.MethodGet {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				d.render(w, r, http.StatusBadRequest, "message", &view{Title: "Bad request", Error: "The form could not be read."})
				return
			}
			if !sameToken(r.PostFormValue("csrf"), s.CSRFToken) {
				d.render(w, r, http.StatusForbidden, "message", &view{Title: "Refused", Session: s,
					Error: "This form has expired or did not come from this dashboard. Reload the page and try again."})
				return
			}
		}
		rq := &req{Request: withCaller(r, &s.User), Session: s}
		if a == Owner && !s.User.Owner {
			d.forbidden(w, rq)
			return
		}
		h(w, rq)
	})
}

// inApp is user plus the app named in the path and a role in it that
// reaches need. The role is read on every request, so a lowered or removed
// one takes effect at once. An app the user has no role in is a 404, as an
// unknown one is; too low a role is a 403.
func (d *Dashboard) inApp(need Access, h handler) http.Handler {
	return d.user(SignedIn, func(w http.ResponseWriter, r *req) {
		id, ok := pathID(r, "app")
		if !ok {
			d.notFound(w, r.Request, r.Session)
			return
		}
		role, err := d.roleIn(r, id)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		if role == "" {
			d.notFound(w, r.Request, r.Session)
			return
		}
		app, err := d.DB.FindAppByID(r.Context(), id)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		r.App, r.Role = app, role
		if !r.can(need) {
			d.forbidden(w, r)
			return
		}
		h(w, r)
	})
}

// roleIn is the user's role in the app: Owner for owners, "" for none.
func (d *Dashboard) roleIn(r *req, appID int64) (Access, error) {
	if r.Session.User.Owner {
		return Owner, nil
	}
	role, err := d.DB.FindAppRole(r.Context(), r.Session.User.ID, appID)
	return Access(role), err
}

// forbidden answers a request the user's role does not allow.
func (d *Dashboard) forbidden(w http.ResponseWriter, r *req) {
	v := d.page(r, "", "Not allowed")
	v.Error = "Your role does not allow this. Ask an admin of this app, or an owner, for more."
	if r.Role != "" && r.Role != Owner {
		v.Error = "Your role in this app (" + string(r.Role) + ") does not allow this. Ask an admin of this app, or an owner, for more."
	}
	d.render(w, r.Request, http.StatusForbidden, "message", v)
}

func sameToken(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// session returns the request's live session, or nil.
func (d *Dashboard) session(r *http.Request) *store.DashboardSession {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	s, err := d.DB.FindDashboardSession(r.Context(), c.Value)
	if err != nil {
		if store.ErrorCode(err) == store.EINTERNAL {
			d.Log.Error("find session", "err", err)
		}
		return nil
	}
	return s
}

func pathID(r *req, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil && id > 0
}

// view is what every page template receives.
type view struct {
	Title   string
	Section string // key of the current section of the app
	Session *store.DashboardSession
	App     *store.App
	// Role is the user's role in App (Owner for owners), which decides the
	// actions the page offers.
	Role    Access
	Apps    []*store.App
	History []historyEntry // the object's changes, for its History panel
	Crumbs  []crumb
	Notice  string            // a success banner
	Error   string            // a banner for an error of no single field
	Errors  map[string]string // field path -> reason, shown beside the field
	Form    url.Values        // what was submitted, to refill the form
	Data    any
}

type crumb struct{ Title, Href string }

// CSRF is the token the page's forms must carry.
func (v *view) CSRF() string {
	if v.Session == nil {
		return ""
	}
	return v.Session.CSRFToken
}

// Sections lists the navigation of the current app that the role may open.
func (v *view) Sections() []section {
	var out []section
	for _, s := range sections {
		if rank(v.Role) >= rank(s.Need) {
			out = append(out, s)
		}
	}
	return out
}

// CanEdit reports whether the page may offer an editor's actions.
func (v *view) CanEdit() bool { return rank(v.Role) >= rank(Editor) }

// CanAdmin reports whether the page may offer an admin's actions.
func (v *view) CanAdmin() bool { return rank(v.Role) >= rank(Admin) }

// IsOwner reports whether the signed-in user is an owner.
func (v *view) IsOwner() bool { return v.Session != nil && v.Session.User.Owner }

// Base is the path of the current app.
func (v *view) Base() string {
	if v.App == nil {
		return ""
	}
	return "/apps/" + strconv.FormatInt(v.App.ID, 10)
}

// page fills the parts of a view every signed-in page has.
func (d *Dashboard) page(r *req, section, title string) *view {
	v := &view{Title: title, Section: section, Session: r.Session, App: r.App, Role: r.Role, Errors: map[string]string{}}
	apps, err := d.visibleApps(r)
	if err != nil {
		d.Log.Error("list apps", "err", err)
	}
	v.Apps = apps
	if n := notices[r.URL.Query().Get("notice")]; n != "" {
		v.Notice = n
	}
	return v
}

// visibleApps lists the apps the user may see: every app for an owner,
// the apps they have a role in for a member.
func (d *Dashboard) visibleApps(r *req) ([]*store.App, error) {
	if r.Session.User.Owner {
		return d.DB.FindAllApps(r.Context())
	}
	apps, _, err := d.DB.FindUserApps(r.Context(), r.Session.User.ID)
	return apps, err
}

// notices are the fixed messages a redirect may ask the next page to
// show; the query names one, so no text of the URL reaches the page.
var notices = map[string]string{
	"app_created":        "App created. Create an API key to start calling the API.",
	"key_revoked":        "Key revoked. Requests with it are refused from now on.",
	"user_erased":        "Erased everything stored about the user. Campaign statistics already counted stay; the id used again is a new user.",
	"content_created":    "Content block created.",
	"content_saved":      "Saved.",
	"content_published":  "Published: apps now receive this block.",
	"content_archived":   "Archived.",
	"content_draft":      "Moved back to draft.",
	"webhook_saved":      "Webhook saved.",
	"webhook_test":       "Test event queued: it appears in the delivery log below.",
	"webhook_enabled":    "Webhook re-enabled: its waiting deliveries are sent again.",
	"webhook_deleted":    "Webhook deleted.",
	"redelivered":        "Delivery queued again.",
	"signed_out":         "You are signed out.",
	"campaign_created":   "Campaign created as a draft. Start it when it is ready.",
	"campaign_saved":     "Campaign saved.",
	"campaign_active":    "The campaign is active: it assigns users now.",
	"campaign_paused":    "Paused: no new users are assigned and no conversions are counted until it resumes.",
	"campaign_completed": "Completed. Its results are final.",
	"campaign_archived":  "Archived.",
	"campaign_unarchive": "Unarchived: back in the state it was archived from.",
	"audience_created":   "Audience created and counted.",
	"audience_saved":     "Audience saved and recounted.",
	"audience_recounted": "Recounted.",
	"audience_active":    "Unarchived: campaigns may target it again.",
	"audience_archived":  "Archived: new campaigns cannot target it.",
	"metric_created":     "Metric created. Campaigns may now use it as a secondary metric or a guardrail.",
	"metric_saved":       "Metric saved.",
	"metric_deleted":     "Metric deleted.",
	"settings_saved":     "Settings saved.",
	"member_saved":       "Role changed: it applies from the member's next request.",
	"member_removed":     "Member removed: they see nothing of this app from their next request.",
	"invitation_revoked": "Invitation revoked: its link no longer works.",
	"owner_saved":        "Saved.",
	"user_deleted":       "User deleted and signed out.",
	"password_changed":   "Password changed. Your other sessions are signed out; this one stays signed in.",
}

// render executes a page into a buffer first, so a template error becomes
// a clean 500 instead of half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, name string, v *view) {
	pool := d.pages[name]
	var buf bytes.Buffer
	if pool == nil {
		d.Log.Error("no such page template", "name", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	t := pool.Get().(*template.Template)
	defer pool.Put(t)
	if v.Errors == nil {
		v.Errors = map[string]string{}
	}
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		d.Log.Error("render", "page", name, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request, s *store.DashboardSession) {
	d.render(w, r, http.StatusNotFound, "message", &view{Title: "Not found", Session: s,
		Error: "There is nothing here. It may have been deleted, or it belongs to another app."})
}

// fail shows a store error: missing things as 404, refusals as a banner on
// a plain page, anything else as a logged 500 with no internals shown.
func (d *Dashboard) fail(w http.ResponseWriter, r *req, err error) {
	switch store.ErrorCode(err) {
	case store.ENOTFOUND:
		d.notFound(w, r.Request, r.Session)
	case store.EINVALID, store.EFORBIDDEN:
		v := d.page(r, "", "Refused")
		v.Error = err.Error()
		d.render(w, r.Request, http.StatusUnprocessableEntity, "message", v)
	default:
		if !errors.Is(err, context.Canceled) {
			d.Log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		d.render(w, r.Request, http.StatusInternalServerError, "message", &view{Title: "Error", Session: r.Session,
			Error: "Something went wrong on the server. It has been logged."})
	}
}

// formErrors puts a store refusal into v: field errors beside their
// fields, anything else in the banner. It returns false for errors that
// are not the user's to fix.
func formErrors(v *view, err error) bool {
	var e *store.Error
	if !errors.As(err, &e) || e.Code == store.EINTERNAL || e.Code == store.ENOTFOUND {
		return false
	}
	if fields, ok := e.Details["fields"].(map[string]any); ok {
		for k, reason := range fields {
			v.Errors[k], _ = reason.(string)
		}
		v.Error = "Please correct the fields marked below."
		return true
	}
	v.Error = e.Message
	return true
}

// redirect answers a form with 303, so a reload does not submit it again.
func redirect(w http.ResponseWriter, r *req, path, notice string) {
	if notice != "" {
		path += "?notice=" + notice
	}
	http.Redirect(w, r.Request, path, http.StatusSeeOther)
}

// clientAddr is the peer address of the request. Forwarded headers are not
// trusted: anyone could send them to dodge the sign-in throttle.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// listOptions reads ?page= (1-based) for a page of limit rows.
func listOptions(r *req, limit int) store.ListOptions {
	p, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || p < 1 {
		p = 1
	}
	return store.ListOptions{Limit: limit, Page: min(p, 1_000_000)}
}

// pager is the previous/next links of a list.
type pager struct {
	Page, Total   int
	Prev, Next    string
	First, Last   int
	ShowingAnyone bool
}

func newPager(r *req, o store.ListOptions, p store.Pagination, shown int) pager {
	pg := pager{Page: o.Page, Total: p.Total, First: (o.Page-1)*o.Limit + 1, Last: (o.Page-1)*o.Limit + shown, ShowingAnyone: shown > 0}
	q := r.URL.Query()
	q.Del("notice")
	if o.Page > 1 {
		q.Set("page", strconv.Itoa(o.Page-1))
		pg.Prev = r.URL.Path + "?" + q.Encode()
	}
	if p.HasMore {
		q.Set("page", strconv.Itoa(o.Page+1))
		pg.Next = r.URL.Path + "?" + q.Encode()
	}
	return pg
}
