// Package handlers is the HTTP API: routing, decoding, validation, auth,
// rate limits and the mapping of store errors to statuses. All SQL lives
// in the store.
package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"

	"service/store"
)

// Server holds what handlers need.
type Server struct {
	DB  *store.DB
	Log *slog.Logger
	// Now, when set, is the clock for rate-limit windows (tests set it);
	// nil means the request's arrival time, the one clock reading that
	// ServeHTTP takes for the whole request.
	Now func() time.Time
	// WebhookTimeout is the delivery timeout given to new webhooks that do
	// not set their own.
	WebhookTimeout time.Duration
	// Observe, when set, receives request and rate-limit measurements.
	Observe Observer
	// AccessLog, when set, receives the request log lines directly, one
	// per Write, in the form of slog's JSON handler (see logRequest). It
	// must be the writer behind Log's handler; Log still decides the level.
	AccessLog io.Writer
	limiter   *limiter
	router    *httprouter.Router
	served    []Route // every route registered, for Routes
	// draining is set by Drain: the process is shutting down.
	draining atomic.Bool
	// StreamHeartbeat is how often an idle ruleset stream carries a
	// comment line; 0 means DefaultStreamHeartbeat.
	StreamHeartbeat time.Duration
	streams         *streamHub
}

// Drain makes /healthz answer 503 from now on, so that a load balancer
// that follows it sends this process no new requests while it finishes
// the ones it has; every route, /livez included, still answers as before.
func (s *Server) Drain() { s.draining.Store(true) }

// New builds the server and its routes.
func New(db *store.DB, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{DB: db, Log: log, WebhookTimeout: 30 * time.Second, limiter: newLimiter(), streams: newStreamHub()}
	if db != nil && db.SharedRateLimits() {
		s.limiter.shared = newSharedLimiter(db, s, s.limiter)
	}
	s.router = s.routes()
	return s
}

// Close gives the requests this process claimed from the shared rate-limit
// windows (PostgreSQL) and did not use back to the other processes, and
// stops the limiter's background work. Call it once no request is served
// any more, before the database closes.
func (s *Server) Close() {
	s.EndStreams()
	s.streams.wg.Wait()
	s.limiter.close()
}

// access says which roles may call a route.
type access int

const (
	manage   access = iota // admin; read keys for GET
	sdk                    // client and admin keys; read keys for GET
	public                 // no key
	instance               // instance keys only: apps and their keys
	admin                  // admin keys only, whatever the method: a user's data
)

// InstanceRateLimit is the requests a minute that the instance keys share,
// all of them together: provisioning is occasional and belongs to no app,
// so it has its own budget, which no app's traffic can use up.
const InstanceRateLimit = 600

// instanceClass is the rate-limit class of the instance keys' budget,
// counted under app 0, which no app has.
const instanceClass = 2

// routes registers the whole API in one place, so its surface reads top to
// bottom. Every route answers under /v1 and /api/v1.
func (s *Server) routes() *httprouter.Router {
	rt := httprouter.New()
	rt.RedirectTrailingSlash = false
	rt.RedirectFixedPath = false
	// OPTIONS is answered only on the SDK routes, by their CORS preflight
	// handlers below; elsewhere it is 405 like any other unserved method.
	rt.HandleOPTIONS = false
	rt.NotFound = s.instrument(Unmatched, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeErrorCode(w, http.StatusNotFound, "NOT_FOUND", "no such route", nil)
	}))
	rt.MethodNotAllowed = s.instrument(Unmatched, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The router always lists OPTIONS, which only SDK routes serve.
		if h, _, _ := rt.Lookup(http.MethodOptions, r.URL.Path); h == nil && w.Header().Get("Allow") != "" {
			allow := w.Header().Get("Allow")
			w.Header().Set("Allow", strings.TrimSuffix(strings.ReplaceAll(allow+", ", "OPTIONS, ", ""), ", "))
		}
		writeErrorCode(w, http.StatusMethodNotAllowed, "INVALID_REQUEST", "method not allowed on this route", nil)
	}))
	rt.PanicHandler = func(w http.ResponseWriter, r *http.Request, v any) {
		if v == http.ErrAbortHandler {
			panic(v) // a streamed answer cut short: net/http closes the connection
		}
		s.Log.Error("panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
		writeErrorCode(w, http.StatusInternalServerError, "INTERNAL_ERROR", "internal error", nil)
	}

	rt.Handler(http.MethodGet, "/healthz", s.instrument("/healthz", http.HandlerFunc(s.handleHealthz)))
	s.served = append(s.served, Route{"GET", "/healthz"})
	rt.Handler(http.MethodGet, "/livez", s.instrument("/livez", http.HandlerFunc(s.handleLivez)))
	s.served = append(s.served, Route{"GET", "/livez"})
	s.serveOpenAPI(rt)
	// OpenFeature's remote evaluation, at the root where its providers
	// look for it (ofrep.go).
	s.ofrepRoutes(rt)

	// SDK routes also answer CORS preflights, registered once per path at
	// the end with the path's SDK methods.
	var corsPaths []string
	corsMethods := map[string][]string{}
	add := func(method, path string, a access, h http.HandlerFunc) {
		s.served = append(s.served, Route{method, path})
		if (a == manage || a == instance || a == admin) && method != http.MethodGet {
			h = s.recordCaller(h)
		}
		hh := s.authorize(a, h)
		if path == rulesetStreamPath {
			hh = keyFromQuery(hh)
		}
		if a == sdk {
			hh = s.cors(hh)
			if corsMethods[path] == nil {
				corsPaths = append(corsPaths, path)
			}
			corsMethods[path] = append(corsMethods[path], method)
		}
		hh = s.instrument(path, hh)
		for _, prefix := range []string{"/v1", "/api/v1"} {
			rt.Handle(method, prefix+path, withParams(hh))
		}
	}

	// The role beside each route: manage = admin (read keys for GET);
	// sdk = client and admin keys (read keys for GET); instance = instance
	// keys only, which may call nothing else; admin = admin keys only.

	// Provisioning: apps and their keys, for scripts and Terraform.
	add("GET", "/apps", instance, s.handleAppList)
	add("POST", "/apps", instance, s.handleAppCreate)
	add("GET", "/apps/:appId", instance, s.handleAppGet)
	add("PATCH", "/apps/:appId", instance, s.handleAppUpdate)
	add("DELETE", "/apps/:appId", instance, s.handleAppDelete) // ?force=true deletes an app that holds data
	add("GET", "/apps/:appId/keys", instance, s.handleKeyList)
	add("POST", "/apps/:appId/keys", instance, s.handleKeyCreate) // the plaintext is in this answer only
	add("DELETE", "/keys/:id", instance, s.handleKeyRevoke)

	// Campaigns. The verbs a user thinks of (start, pause, resume, complete,
	// archive) are all PATCH /campaigns/:id/status {"status": ...}.
	add("GET", "/apps/:appId/campaigns", manage, s.handleCampaignList)
	add("POST", "/apps/:appId/campaigns", manage, s.handleCampaignCreate)
	add("GET", "/campaigns/:id", manage, s.handleCampaignGet)
	add("PATCH", "/campaigns/:id", manage, s.handleCampaignUpdate)
	add("PATCH", "/campaigns/:id/status", manage, s.handleCampaignStatus) // start, pause, resume, complete, archive
	add("POST", "/campaigns/:id/unarchive", manage, s.handleCampaignUnarchive)
	add("DELETE", "/campaigns/:id", manage, s.handleCampaignDelete)
	add("GET", "/campaigns/:id/analytics", manage, s.handleCampaignAnalytics)
	add("GET", "/apps/:appId/namespaces", manage, s.handleNamespaceList)

	// Assignment: the SDK's variant requests.
	add("POST", "/apps-external/:appId/campaigns/:campaignIdOrKey/variant", sdk, s.handleVariant)
	add("POST", "/apps-external/:appId/variants", sdk, s.handleVariants)

	// Local evaluation: the rules of the app's active campaigns, for SDKs
	// that assign in process, and a stream of their version.
	add("GET", "/apps-external/:appId/ruleset", sdk, s.handleRuleset)
	add("GET", rulesetStreamPath, sdk, s.handleRulesetStream)              // the key may come as ?key=
	add("POST", "/apps-external/:appId/exposures", sdk, s.handleExposures) // up to 100, one result each
	add("GET", "/apps-external/:appId/growthbook/features", sdk, s.handleGrowthBook)

	// Content blocks. Publish, archive and unpublish are PATCH with a status.
	add("GET", "/apps/:appId/content", manage, s.handleContentList)
	add("POST", "/apps/:appId/content", manage, s.handleContentCreate)
	add("GET", "/content/:id", manage, s.handleContentGet)
	add("PATCH", "/content/:id", manage, s.handleContentUpdate)
	add("PATCH", "/content/:id/:contentViewId", manage, s.handleContentUpdateInApp)
	add("DELETE", "/content/:id", manage, s.handleContentDelete)
	add("GET", "/apps-external/:appId/content/:id", sdk, s.handleContentExternal)

	// Events.
	add("POST", "/apps/:appId/events", sdk, s.handleEventCreate)
	add("POST", "/apps/:appId/events/batch", sdk, s.handleEventBatch) // up to 100, one result each
	add("GET", "/apps/:appId/events", manage, s.handleEventList)

	// Audiences, their members and checks, and the user profiles their
	// rules read.
	add("GET", "/apps/:appId/audiences", manage, s.handleAudienceList)
	add("POST", "/apps/:appId/audiences", manage, s.handleAudienceCreate)
	add("GET", "/audiences/:id", manage, s.handleAudienceGet)
	add("PATCH", "/audiences/:id", manage, s.handleAudienceUpdate)
	add("DELETE", "/audiences/:id", manage, s.handleAudienceDelete)
	add("GET", "/audiences/:id/members", manage, s.handleAudienceMembers)
	add("POST", "/audiences/:id/check", manage, s.handleAudienceCheck)
	add("PUT", "/apps/:appId/users/:userId", manage, s.handleUserPut)
	add("GET", "/apps/:appId/users/:userId", manage, s.handleUserGet)
	// A data subject's requests: everything stored about one user, erased
	// or exported. Admin keys only, reads included: an export is the
	// user's whole record.
	add("DELETE", "/apps/:appId/users/:userId", admin, s.handleUserErase)
	add("GET", "/apps/:appId/users/:userId/export", admin, s.handleUserExport)
	add("POST", "/apps-external/:appId/identify", sdk, s.handleIdentify)

	// Metrics: what campaigns measure beside their goal.
	add("GET", "/apps/:appId/metrics", manage, s.handleMetricList)
	add("POST", "/apps/:appId/metrics", manage, s.handleMetricCreate)
	add("GET", "/metrics/:id", manage, s.handleMetricGet)
	add("PATCH", "/metrics/:id", manage, s.handleMetricUpdate)
	add("DELETE", "/metrics/:id", manage, s.handleMetricDelete)

	// Webhooks and their delivery log.
	add("GET", "/apps/:appId/webhooks", manage, s.handleWebhookList)
	add("POST", "/apps/:appId/webhooks", manage, s.handleWebhookCreate)
	add("GET", "/webhooks/:id", manage, s.handleWebhookGet)
	add("PATCH", "/webhooks/:id", manage, s.handleWebhookUpdate) // {"status":"ACTIVE"} re-enables a FAILED one
	add("DELETE", "/webhooks/:id", manage, s.handleWebhookDelete)
	add("POST", "/webhooks/:id/test", manage, s.handleWebhookTest)
	add("POST", "/webhooks/:id/rotate-secret", manage, s.handleWebhookRotateSecret) // new secret shown once; the old one signs too for gracePeriod
	add("GET", "/webhooks/:id/deliveries", manage, s.handleDeliveryList)
	add("GET", "/webhooks/:id/deliveries/:deliveryId", manage, s.handleDeliveryGet)
	add("POST", "/webhooks/:id/deliveries/:deliveryId/redeliver", manage, s.handleDeliveryRedeliver)

	// The audit log: every change to the app's configuration.
	add("GET", "/apps/:appId/audit-log", manage, s.handleAuditLog)

	// Form submissions.
	add("POST", "/apps-external/:appId/submit-form", sdk, s.handleFormSubmit)
	add("POST", "/content/submit-form", sdk, s.handleFormSubmit)
	add("GET", "/content/:id/submissions", manage, s.handleContentSubmissions)
	add("GET", "/apps/:appId/form-submissions", manage, s.handleFormSubmissionList)

	for _, path := range corsPaths {
		h := s.instrument(path, s.preflight(corsMethods[path]))
		for _, prefix := range []string{"/v1", "/api/v1"} {
			rt.Handle(http.MethodOptions, prefix+path, withParams(h))
		}
	}
	return rt
}

// ServeHTTP logs one line per request around the router, under a request
// id that is echoed back in X-Request-Id.
//
// The handlers run on a context that the client's going away does not
// cancel. net/http cancels a request's context as soon as the client
// closes its sending side, which HTTP/1.1 allows after a whole request
// (shutdown(SHUT_WR)); a request read whole and validated is then still
// answered, and its write is never abandoned half way. Every handler's
// work is bounded by the database, not by the client.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The HTTP layer reads the clock twice, here and at the end: the rate
	// limit, the metrics and the log line share those two readings. Its
	// six readings before were about 1% of a returning user's answer in
	// CPU, and the metrics timed a shorter span than the log line.
	c := &request{parent: r.Context(), start: time.Now()}
	if s.DB != nil {
		c.deadline = c.start.Add(s.DB.Timeout())
	}
	c.info.id = requestID(r.Header.Get("X-Request-Id"))
	c.idHeader[0] = c.info.id
	w.Header()["X-Request-Id"] = c.idHeader[:]
	c.rec = statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.router.ServeHTTP(&c.rec, r.WithContext(c))
	c.stop()
	end := time.Now()
	if o := s.Observe; o != nil && c.route != "" {
		o.Request(c.route, r.Method, c.rec.status, end.Sub(c.start))
	}
	// The client closed its side (half or whole) before the answer: the
	// work it asked for is done all the same, and whether the answer
	// reached it is the client's affair, not a server error.
	closed := c.rec.err != nil || r.Context().Err() != nil
	s.logRequest(c, r, end, closed)
}

// requestID returns the client's X-Request-Id when it is well formed (1 to
// 128 characters of A-Z a-z 0-9 . _ -), so a caller can follow its own id
// through the logs, and a new random one otherwise.
func requestID(h string) string {
	if n := len(h); n >= 1 && n <= 128 {
		ok := true
		for i := 0; i < n && ok; i++ {
			c := h[i]
			ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		}
		if ok {
			return h
		}
	}
	// A random per-process prefix and a counter: unique across requests
	// and restarts without a system call for randomness on every request.
	n := requestSeq.Add(1)
	var b [24]byte
	copy(b[:12], requestPrefix)
	const digits = "0123456789abcdef"
	for i := 23; i >= 12; i-- {
		b[i] = digits[n&15]
		n >>= 4
	}
	return string(b[:])
}

var (
	requestPrefix = func() string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	requestSeq atomic.Uint64
)

type statusRecorder struct {
	http.ResponseWriter
	status int
	err    error
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection: the ruleset
// stream flushes and lifts the write deadline through it.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *statusRecorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// handleHealthz is readiness: 200 while this process takes requests, 503
// while it drains or when the database does not answer.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		unavailable(w, "shutting down")
		return
	}
	// A probe must hear back within a second, whatever the database does:
	// a load balancer's probe gives up after a few.
	ctx, cancel := context.WithTimeout(r.Context(), healthzTimeout)
	err := s.DB.Ping(ctx)
	cancel()
	if err != nil {
		unavailable(w, "database unavailable")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}`))
}

// healthzTimeout bounds /healthz's question to the database.
const healthzTimeout = time.Second

// handleLivez is liveness: 200 as long as the process serves HTTP, while
// it drains too, and without asking the database, so that a supervisor
// restarts it only when it is stuck, never for an outage of the database
// or a shutdown in progress.
func (s *Server) handleLivez(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}`))
}

type ctxKey struct{}

// keyFrom returns the authenticated key of a request.
func keyFrom(r *http.Request) *store.Key {
	if info := infoOf(r); info != nil && info.key != nil {
		return info.key
	}
	k, _ := r.Context().Value(ctxKey{}).(*store.Key)
	return k
}

// authorize checks the key, the role, the path's app and the rate limit,
// in that order, before h runs.
func (s *Server) authorize(a access, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		token, ok := cutBearer(auth)
		if !ok {
			writeErrorCode(w, http.StatusUnauthorized, "UNAUTHORIZED", "missing or malformed Authorization header", nil)
			return
		}
		key, err := s.DB.Authenticate(r.Context(), token)
		if err != nil {
			if store.ErrorCode(err) == store.EINTERNAL {
				s.writeError(w, r, err)
				return
			}
			writeErrorCode(w, http.StatusUnauthorized, "UNAUTHORIZED", "invalid or revoked API key", nil)
			return
		}
		if !s.limit(w, r, key) {
			return
		}
		// An instance key belongs to no app and may call only the
		// instance routes; an app's key may call none of them.
		if (a == instance) != (key.Role == store.RoleInstance) {
			writeErrorCode(w, http.StatusForbidden, "FORBIDDEN", "the "+key.Role+" role may not call this route", nil)
			return
		}
		if raw := param(r, "appId"); raw != "" {
			appID, ok := pathID(w, r, "appId")
			if !ok {
				return
			}
			if appID != key.AppID && a != instance {
				writeErrorCode(w, http.StatusForbidden, "FORBIDDEN", "this key belongs to another app", nil)
				return
			}
		}
		if !allowed(a, key.Role, r.Method) {
			writeErrorCode(w, http.StatusForbidden, "FORBIDDEN", "the "+key.Role+" role may not call this route", nil)
			return
		}
		// The key rides in the request's log record when ServeHTTP made
		// one, sparing every request a second copy of itself.
		if info := infoOf(r); info != nil {
			info.key = key
			h(w, r)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, key)))
	})
}

func allowed(a access, role, method string) bool {
	switch role {
	case store.RoleAdmin:
		return true
	case store.RoleRead:
		return method == http.MethodGet && a != admin
	case store.RoleClient:
		return a == sdk
	case store.RoleInstance:
		return a == instance
	}
	return false
}

func cutBearer(h string) (string, bool) {
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return strings.TrimSpace(h[len(p):]), h[len(p):] != ""
}

// limit applies the app's per-minute limit and sets the X-RateLimit
// headers; it answers 429 itself and returns false when over.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, key *store.Key) bool {
	// SDK traffic comes from many end users, so it gets its own, larger
	// budget and cannot starve the management API (or be starved by it).
	limit, reset, ok := s.take(w, r, key, key.Role == store.RoleClient)
	if !ok {
		writeErrorCode(w, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED", "rate limit exceeded", map[string]any{"limit": limit, "retryAfter": reset})
	}
	return ok
}

// take counts the request in the app's management budget, or with sdk in
// its SDK budget (a hundred times larger), and sets the X-RateLimit
// headers, and Retry-After when it is over; the caller answers the 429.
func (s *Server) take(w http.ResponseWriter, r *http.Request, key *store.Key, sdk bool) (limit, reset int, ok bool) {
	limit = key.RateLimit
	class := 0
	switch {
	case key.Role == store.RoleInstance:
		// The instance keys' own budget, which no app's traffic shares.
		limit, class = InstanceRateLimit, instanceClass
	case sdk:
		limit *= 100
		class = 1
	}
	remaining, reset, ok := s.limiter.take(key.AppID, class, limit, s.now(r))
	// Two allocations carry the three values (one string cut in three)
	// and their slices: this runs on every request.
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], int64(limit), 10)
	i := len(b)
	b = strconv.AppendInt(b, int64(remaining), 10)
	j := len(b)
	b = strconv.AppendInt(b, int64(reset), 10)
	all := string(b)
	hv := new(rateHeaders)
	hv.limit[0], hv.remaining[0], hv.reset[0] = all[:i], all[i:j], all[j:]
	h := w.Header()
	h["X-Ratelimit-Limit"] = hv.limit[:]
	h["X-Ratelimit-Remaining"] = hv.remaining[:]
	h["X-Ratelimit-Reset"] = hv.reset[:]
	if !ok {
		s.observeRateLimited(key.AppID)
		h["Retry-After"] = hv.reset[:]
	}
	return limit, reset, ok
}

// now is the time a request is judged at: the Now clock when one is set,
// otherwise the request's arrival.
func (s *Server) now(r *http.Request) time.Time {
	if s.Now != nil {
		return s.Now()
	}
	if c, ok := r.Context().(*request); ok {
		return c.start
	}
	return time.Now()
}

type rateHeaders struct{ limit, remaining, reset [1]string }

// appID is the app of the request's key; every handler scopes by it.
func appID(r *http.Request) int64 { return keyFrom(r).AppID }
