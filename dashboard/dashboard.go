// Package dashboard is the web interface people use to run the service:
// server-rendered pages over the same store methods as the API, so both
// always apply the same rules. Templates and static files are embedded;
// nothing is fetched at run time and every form works without JavaScript.
package dashboard

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
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
	// Now is the clock of the sign-in throttle; tests replace it.
	Now func() time.Time

	throttle *throttle
	pages    pages
	mux      *http.ServeMux
}

// New builds the dashboard and its routes.
func New(db *store.DB, log *slog.Logger) *Dashboard {
	if log == nil {
		log = slog.Default()
	}
	d := &Dashboard{DB: db, Log: log, SessionTTL: 12 * time.Hour, WebhookTimeout: 30 * time.Second, Now: time.Now}
	d.throttle = newThrottle()
	d.pages = parsePages()
	d.mux = d.routes()
	return d
}

// IsDashboardPath reports whether the dashboard serves path. Everything
// else (/v1, /api/v1, /healthz, /livez and whatever the API adds) stays the API's.
func IsDashboardPath(p string) bool {
	switch p {
	case "/", "/setup", "/signin", "/signout", "/apps":
		return true
	}
	return strings.HasPrefix(p, "/apps/") || strings.HasPrefix(p, "/static/")
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

// routes registers every page in one place. Everything an app owns lives
// under /apps/{app}/, the app chosen in the dashboard: the store looks
// each id up within that app, so another app's id is a 404.
func (d *Dashboard) routes() *http.ServeMux {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", staticHandler(static)))

	m.HandleFunc("GET /{$}", d.handleRoot)
	m.HandleFunc("GET /setup", d.handleSetupForm)
	m.HandleFunc("POST /setup", d.handleSetup)
	m.HandleFunc("GET /signin", d.handleSignInForm)
	m.HandleFunc("POST /signin", d.handleSignIn)
	m.Handle("POST /signout", d.user(d.handleSignOut))

	// Apps: list, create, switch.
	m.Handle("GET /apps", d.user(d.handleApps))
	m.Handle("POST /apps", d.user(d.handleAppCreate))
	m.Handle("GET /apps/switch", d.user(d.handleAppSwitch))
	m.Handle("GET /apps/{app}", d.inApp(d.handleAppHome))

	// Settings → API Keys.
	m.Handle("GET /apps/{app}/settings/keys", d.inApp(d.handleKeys))
	m.Handle("POST /apps/{app}/settings/keys", d.inApp(d.handleKeyCreate))
	m.Handle("GET /apps/{app}/settings/keys/{id}/revoke", d.inApp(d.handleKeyRevokeConfirm))
	m.Handle("POST /apps/{app}/settings/keys/{id}/revoke", d.inApp(d.handleKeyRevoke))

	// Campaigns: list, editor, lifecycle, results and preview.
	m.Handle("GET /apps/{app}/campaigns", d.inApp(d.handleCampaignList))
	m.Handle("GET /apps/{app}/campaigns/new", d.inApp(d.handleCampaignNew))
	m.Handle("POST /apps/{app}/campaigns", d.inApp(d.handleCampaignCreate))
	m.Handle("GET /apps/{app}/campaigns/{id}", d.inApp(d.handleCampaign))
	m.Handle("POST /apps/{app}/campaigns/{id}", d.inApp(d.handleCampaignSave))
	m.Handle("POST /apps/{app}/campaigns/{id}/status", d.inApp(d.handleCampaignMove))
	m.Handle("GET /apps/{app}/campaigns/{id}/results", d.inApp(d.handleResults))
	m.Handle("GET /apps/{app}/campaigns/{id}/results.csv", d.inApp(d.handleResultsCSV))
	m.Handle("GET /apps/{app}/campaigns/{id}/preview", d.inApp(d.handlePreview))

	// Audiences: list, rule builder, check a user, recount, archive.
	m.Handle("GET /apps/{app}/audiences", d.inApp(d.handleAudienceList))
	m.Handle("GET /apps/{app}/audiences/new", d.inApp(d.handleAudienceNew))
	m.Handle("POST /apps/{app}/audiences", d.inApp(d.handleAudienceCreate))
	m.Handle("GET /apps/{app}/audiences/{id}", d.inApp(d.handleAudience))
	m.Handle("POST /apps/{app}/audiences/{id}", d.inApp(d.handleAudienceSave))
	m.Handle("GET /apps/{app}/audiences/{id}/check", d.inApp(d.handleAudienceCheck))
	m.Handle("POST /apps/{app}/audiences/{id}/recount", d.inApp(d.handleAudienceRecount))
	m.Handle("POST /apps/{app}/audiences/{id}/status", d.inApp(d.handleAudienceStatus))

	// Events: the explorer and one user's timeline.
	m.Handle("GET /apps/{app}/events", d.inApp(d.handleEvents))
	m.Handle("GET /apps/{app}/users", d.inApp(d.handleUser))

	// Settings: the app's allowed CORS origins.
	m.Handle("GET /apps/{app}/settings", d.inApp(d.handleSettings))
	m.Handle("POST /apps/{app}/settings", d.inApp(d.handleSettingsSave))

	// Content blocks, their preview and their form submissions.
	m.Handle("GET /apps/{app}/content", d.inApp(d.handleContentList))
	m.Handle("GET /apps/{app}/content/new", d.inApp(d.handleContentNew))
	m.Handle("POST /apps/{app}/content", d.inApp(d.handleContentCreate))
	m.Handle("GET /apps/{app}/content/{id}", d.inApp(d.handleContentEdit))
	m.Handle("POST /apps/{app}/content/{id}", d.inApp(d.handleContentSave))
	m.Handle("POST /apps/{app}/content/{id}/status", d.inApp(d.handleContentStatus))
	m.Handle("GET /apps/{app}/content/{id}/submissions", d.inApp(d.handleSubmissions))
	m.Handle("GET /apps/{app}/content/{id}/submissions.csv", d.inApp(d.handleSubmissionsCSV))

	// Webhooks and their delivery log.
	m.Handle("GET /apps/{app}/webhooks", d.inApp(d.handleWebhooks))
	m.Handle("GET /apps/{app}/webhooks/new", d.inApp(d.handleWebhookNew))
	m.Handle("POST /apps/{app}/webhooks", d.inApp(d.handleWebhookCreate))
	m.Handle("GET /apps/{app}/webhooks/{id}", d.inApp(d.handleWebhook))
	m.Handle("POST /apps/{app}/webhooks/{id}", d.inApp(d.handleWebhookSave))
	m.Handle("POST /apps/{app}/webhooks/{id}/test", d.inApp(d.handleWebhookTest))
	m.Handle("POST /apps/{app}/webhooks/{id}/enable", d.inApp(d.handleWebhookEnable))
	m.Handle("POST /apps/{app}/webhooks/{id}/rotate-secret", d.inApp(d.handleWebhookRotate))
	m.Handle("GET /apps/{app}/webhooks/{id}/delete", d.inApp(d.handleWebhookDeleteConfirm))
	m.Handle("POST /apps/{app}/webhooks/{id}/delete", d.inApp(d.handleWebhookDelete))
	m.Handle("POST /apps/{app}/webhooks/{id}/deliveries/{delivery}/redeliver", d.inApp(d.handleRedeliver))

	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		d.notFound(w, r, nil)
	})
	return m
}

// sections are the parts of an app, in navigation order.
var sections = []struct{ Key, Title, Path string }{
	{"campaigns", "Campaigns", "/campaigns"},
	{"content", "Content blocks", "/content"},
	{"audiences", "Audiences", "/audiences"},
	{"events", "Events", "/events"},
	{"webhooks", "Webhooks", "/webhooks"},
	{"settings", "Settings", "/settings"},
	{"keys", "Settings → API Keys", "/settings/keys"},
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
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	if sameOrigin(r) {
		d.mux.ServeHTTP(rec, r)
	} else {
		h.Set("Cache-Control", "no-store")
		d.render(rec, r, http.StatusForbidden, "message", &view{Title: "Refused",
			Error: "This form did not come from this dashboard. Reload the page and try again."})
	}
	d.Log.LogAttrs(r.Context(), slog.LevelInfo, "request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.status), slog.Duration("duration", time.Since(start)))
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
// app chosen.
type req struct {
	*http.Request
	Session *store.DashboardSession
	App     *store.App
}

type handler func(w http.ResponseWriter, r *req)

// user requires a signed-in session, and a valid CSRF token on anything
// but GET. Signed-out browsers are sent to the sign-in page.
func (d *Dashboard) user(h handler) http.Handler {
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
		h(w, &req{Request: r, Session: s})
	})
}

// inApp is user plus the app named in the path; an unknown app is a 404.
func (d *Dashboard) inApp(h handler) http.Handler {
	return d.user(func(w http.ResponseWriter, r *req) {
		id, ok := pathID(r, "app")
		if !ok {
			d.notFound(w, r.Request, r.Session)
			return
		}
		app, err := d.DB.FindAppByID(r.Context(), id)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		r.App = app
		h(w, r)
	})
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
	Apps    []*store.App
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

// Sections lists the navigation of the current app.
func (v *view) Sections() []struct{ Key, Title, Path string } { return sections }

// Base is the path of the current app.
func (v *view) Base() string {
	if v.App == nil {
		return ""
	}
	return "/apps/" + strconv.FormatInt(v.App.ID, 10)
}

// page fills the parts of a view every signed-in page has.
func (d *Dashboard) page(r *req, section, title string) *view {
	v := &view{Title: title, Section: section, Session: r.Session, App: r.App, Errors: map[string]string{}}
	apps, err := d.DB.FindAllApps(r.Context())
	if err != nil {
		d.Log.Error("list apps", "err", err)
	}
	v.Apps = apps
	if n := notices[r.URL.Query().Get("notice")]; n != "" {
		v.Notice = n
	}
	return v
}

// notices are the fixed messages a redirect may ask the next page to
// show; the query names one, so no text of the URL reaches the page.
var notices = map[string]string{
	"app_created":        "App created. Create an API key to start calling the API.",
	"key_revoked":        "Key revoked. Requests with it are refused from now on.",
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
	"settings_saved":     "Settings saved.",
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
