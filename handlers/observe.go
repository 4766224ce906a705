package handlers

import (
	"net/http"
	"time"
)

// Observer receives per-request measurements. cmd wires it to Prometheus;
// handlers stays free of any metrics library.
type Observer interface {
	// Request is called once per answered request with the route's
	// pattern (e.g. "/apps/:appId/campaigns", the same under /v1 and
	// /api/v1), never the raw path, so the label set stays bounded.
	Request(route, method string, status int, took time.Duration)
	// RateLimited is called for each 429 an app's key is refused.
	RateLimited(appID int64)
}

// Unmatched is the route label of requests that matched no route.
const Unmatched = "unmatched"

// instrument reports h's requests under route when an Observer is set. The
// check happens per request, so Observe may be set after New.
func (s *Server) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := s.Observe
		if o == nil {
			h.ServeHTTP(w, r)
			return
		}
		// Through ServeHTTP, which times the request once for its log
		// line and its metrics alike, the route is all it needs.
		if c, ok := r.Context().(*request); ok {
			c.route = route
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		// ServeHTTP's recorder already tracks the status; reuse it rather
		// than wrap the writer twice.
		rec, ok := w.(*statusRecorder)
		if !ok {
			rec = &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		}
		h.ServeHTTP(rec, r)
		o.Request(route, r.Method, rec.status, time.Since(start))
	})
}

func (s *Server) observeRateLimited(appID int64) {
	if o := s.Observe; o != nil {
		o.RateLimited(appID)
	}
}
