package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"service/store"
)

// request is what the server keeps for one request, in one allocation:
// the handlers' context, the status recorder and what the request log line
// learns while the request runs (its id, the key, the path parameters).
// The SDK routes answer tens of thousands of requests a second on one
// core, and separate wrappers cost an allocation each.
//
// As a context it is not cancelled by the client's going away: handlers
// run on a context that only the database timeout ends (see ServeHTTP).
// Its deadline, start plus the store's timeout, bounds the request's
// database work, pool waits included; its Done channel and timer are made
// only when something waits on it, which the answers served from memory
// never do. Values come from the request's own context.
type request struct {
	parent context.Context
	// start is the request's arrival, the clock reading ServeHTTP shares.
	start time.Time
	// deadline is zero for no deadline.
	deadline time.Time
	doneOnce sync.Once
	done     chan struct{}
	timer    *time.Timer
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

func (c *request) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

func (c *request) Done() <-chan struct{} {
	if c.deadline.IsZero() {
		return nil
	}
	c.doneOnce.Do(func() {
		c.done = make(chan struct{})
		if d := time.Until(c.deadline); d > 0 {
			c.timer = time.AfterFunc(d, func() { close(c.done) })
		} else {
			close(c.done)
		}
	})
	return c.done
}

func (c *request) Err() error {
	if c.deadline.IsZero() {
		return nil
	}
	select {
	case <-c.Done():
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// stop releases the deadline's timer once the request is answered.
func (c *request) stop() {
	if c.deadline.IsZero() {
		return
	}
	c.doneOnce.Do(func() {}) // no timer from now on
	if c.timer != nil {
		c.timer.Stop()
	}
}

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
		if msg, name := invalidUTF8(r, ps); msg != "" {
			// PostgreSQL refuses such text with an encoding error, and an id
			// that cannot be written back in JSON names nothing.
			invalid(w, msg, map[string]any{"param": name})
			return
		}
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

// invalidUTF8 names the first path or query parameter that is not valid
// UTF-8, with the message to refuse it with, or returns "".
func invalidUTF8(r *http.Request, ps httprouter.Params) (msg, name string) {
	for _, p := range ps {
		if !utf8.ValidString(p.Value) {
			return "path parameter " + p.Key + " must be valid UTF-8", p.Key
		}
	}
	q := r.URL.RawQuery
	if q == "" || (strings.IndexByte(q, '%') < 0 && isASCII(q)) {
		return "", ""
	}
	for _, kv := range strings.Split(q, "&") {
		// A malformed escape is left to the handlers, as net/url leaves it.
		rk, rv, _ := strings.Cut(kv, "=")
		k, errK := url.QueryUnescape(rk)
		v, errV := url.QueryUnescape(rv)
		if errK != nil || errV != nil || utf8.ValidString(k) && utf8.ValidString(v) {
			continue
		}
		k = strings.ToValidUTF8(k, "\uFFFD")
		return "query parameter " + k + " must be valid UTF-8", k
	}
	return "", ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
