package handlers

import (
	"net/http"
	"strconv"
	"strings"

	"service/store"
)

// CORS for the SDK routes only: browser apps on their own origins call
// them with a client key. Management routes send no CORS headers, so a
// browser page on another origin can never drive them with a stolen admin
// key, even if it had one.

// corsMaxAge is how long a browser may reuse a preflight answer, in
// seconds. Chromium caps it at two hours, so more would promise nothing.
const corsMaxAge = 7200

// corsExposed are the answer headers a page's script may read: the SDK
// needs them to back off when rate-limited, and the ETag to ask for the
// ruleset only when it changed.
const corsExposed = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, ETag"

// allowOrigin sets Access-Control-Allow-Origin for the app in the path (the
// default "*" where the path names none, as /content/submit-form) and
// reports whether the request's origin is allowed. A request without
// Origin is no browser's cross-origin call: it gets no CORS headers, and
// the SDK's other callers (React Native, servers) no origin lookup on
// their hot path.
func (s *Server) allowOrigin(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	// The answer depends on Origin whenever the list is not "*"; caches
	// between browser and service must keep one copy per origin.
	h.Add("Vary", "Origin")
	if _, ok := r.Header["Origin"]; !ok {
		return false
	}
	var app int64
	if raw := param(r, "appId"); raw != "" {
		// A malformed id keeps the default: the request itself then gets
		// the API's 400, readable by the page.
		if id, err := strconv.ParseInt(raw, 10, 64); err == nil && id > 0 {
			app = id
		}
	}
	return s.allowAppOrigin(w, r, app)
}

// allowAppOrigin sets Access-Control-Allow-Origin as the app's allowed
// origins say (any origin for app 0) and reports whether the request's
// origin is allowed; allowOrigin has set Vary and seen an Origin.
func (s *Server) allowAppOrigin(w http.ResponseWriter, r *http.Request, app int64) bool {
	h := w.Header()
	origins := []string{store.AnyOrigin}
	if app > 0 {
		list, err := s.DB.AllowedOrigins(r.Context(), app)
		if err != nil {
			s.Log.Error("allowed origins", "app", app, "err", err)
			return false
		}
		origins = list
	}
	origin := r.Header.Get("Origin")
	for _, o := range origins {
		if o == store.AnyOrigin {
			h.Set("Access-Control-Allow-Origin", "*")
			return true
		}
		if origin != "" && strings.EqualFold(o, origin) {
			h.Set("Access-Control-Allow-Origin", origin)
			return true
		}
	}
	return false
}

// cors adds the CORS answer headers to an SDK route; they are set before
// authentication so that a page can read a 401 or 429 too.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.allowOrigin(w, r) {
			w.Header().Set("Access-Control-Expose-Headers", corsExposed)
		}
		next.ServeHTTP(w, r)
	})
}

// preflight answers a browser's OPTIONS preflight on an SDK route, which
// carries no key and so is answered without one. methods are the route's
// SDK methods. An origin that is not allowed gets 204 without
// Access-Control-Allow-Origin, and the browser stops there.
func (s *Server) preflight(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if s.allowOrigin(w, r) {
			h.Set("Access-Control-Allow-Methods", allow)
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-None-Match, Last-Event-ID")
			h.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
