package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"service/store"
)

// request is what the server keeps for one request, in one allocation:
// the handlers' context, the status recorder and what the request log line
// learns while the request runs (its id, the key, the path parameters).
// The SDK routes answer tens of thousands of requests a second on one
// core, and separate wrappers cost an allocation each.
//
// As a context it never ends and has no deadline: handlers run on a
// context that the client's going away does not cancel (see ServeHTTP).
// Values come from the request's own context.
type request struct {
	parent context.Context
	// start is the request's arrival, the clock reading ServeHTTP shares.
	start time.Time
	// route is the matched route's pattern, for the metrics (instrument).
	route string
	rec   statusRecorder
	info  requestInfo
	// idHeader backs the X-Request-Id answer header.
	idHeader [1]string
}

// requestInfo is what the request log line learns while the request runs.
type requestInfo struct {
	id     string
	key    *store.Key        // once authorized
	params httprouter.Params // the matched route's path parameters
}

type infoKey struct{}

func (c *request) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *request) Done() <-chan struct{}       { return nil }
func (c *request) Err() error                  { return nil }

func (c *request) Value(k any) any {
	if _, ok := k.(infoKey); ok {
		return &c.info
	}
	return c.parent.Value(k)
}

// infoOf returns the request's record, or nil for a request that did not
// come through ServeHTTP.
func infoOf(r *http.Request) *requestInfo {
	if c, ok := r.Context().(*request); ok {
		return &c.info
	}
	info, _ := r.Context().Value(infoKey{}).(*requestInfo)
	return info
}

// param returns the path parameter name of the matched route.
func param(r *http.Request, name string) string {
	if info := infoOf(r); info != nil && info.params != nil {
		return info.params.ByName(name)
	}
	return httprouter.ParamsFromContext(r.Context()).ByName(name)
}

// withParams hands the router's path parameters to h through the request's
// record; a request without one (not through ServeHTTP) gets them in its
// context, as httprouter does.
func withParams(h http.Handler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if info := infoOf(r); info != nil {
			info.params = ps
			h.ServeHTTP(w, r)
			return
		}
		if len(ps) > 0 {
			r = r.WithContext(context.WithValue(r.Context(), httprouter.ParamsKey, ps))
		}
		h.ServeHTTP(w, r)
	}
}
