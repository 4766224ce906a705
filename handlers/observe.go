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
	// RateLimitFallback is called for each request whose rate limit this
	// process judged on its own because the database's shared count
	// (PostgreSQL) did not answer.
	RateLimitFallback()
}

// Unmatched is the route label of requests that matched no route.
const Unmatched = "unmatched"

// instrument names the route h answers, for the metrics ServeHTTP reports
// once the router is done (and its panic recovery with it), timed by the
// same two clock readings as the request's log line. Whether an Observer
// is set is checked there, per request, so Observe may be set after New.
func (s *Server) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The router is reached only through ServeHTTP, which made the
		// record.
		if c, ok := r.Context().(*request); ok {
			c.route = route
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) observeRateLimited(appID int64) {
	if o := s.Observe; o != nil {
		o.RateLimited(appID)
	}
}

func (s *Server) observeRateLimitFallback() {
	if o := s.Observe; o != nil {
		o.RateLimitFallback()
	}
}
