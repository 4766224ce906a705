package handlers

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// handleRuleset answers the app's ruleset, from memory between changes,
// with its version as the ETag; a client that holds that version is
// answered 304 without a body.
func (s *Server) handleRuleset(w http.ResponseWriter, r *http.Request) {
	rs, err := s.DB.Ruleset(r.Context(), appID(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	tag := `"` + rs.Version + `"`
	h.Set("ETag", tag)
	// The answer depends on the key, and must be asked again each time:
	// the version is cheap to check and may move at any moment.
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Authorization")
	// The version alone, unquoted, is taken too: SDKs hold the version
	// from the body and the stream's events.
	if inm := r.Header.Values("If-None-Match"); etagMatches(inm, tag) || etagMatches(inm, rs.Version) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = jsonContentType
	w.Write(rs.Body)
}

// handleGrowthBook answers the app's ruleset as GrowthBook's SDKs take
// their payload (store.Ruleset.GrowthBook), from memory between changes,
// with an ETag and 304 on If-None-Match.
func (s *Server) handleGrowthBook(w http.ResponseWriter, r *http.Request) {
	rs, err := s.DB.Ruleset(r.Context(), appID(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := rs.GrowthBook()
	h := w.Header()
	h.Set("ETag", p.ETag)
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Authorization")
	if etagMatches(r.Header.Values("If-None-Match"), p.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = jsonContentType
	w.Write(p.Body)
}

// DefaultStreamHeartbeat is how often an idle ruleset stream carries a
// comment line, so that proxies and load balancers that close quiet
// connections leave it open.
const DefaultStreamHeartbeat = 15 * time.Second

// handleRulesetStream follows the app's ruleset version as Server-Sent
// Events: the current version at once (unless Last-Event-ID already names
// it), then one event per change of version, and a comment line every
// StreamHeartbeat. The stream costs its own goroutine, net/http's, and
// nothing else: one watcher per process (streamHub) reads each change
// once and hands the new version to every stream of the app.
func (s *Server) handleRulesetStream(w http.ResponseWriter, r *http.Request) {
	app := appID(r)
	sub := s.streams.subscribe(s, app)
	defer s.streams.unsubscribe(app, sub)
	if sub == nil {
		unavailable(w, "shutting down")
		return
	}
	// The version is read after the subscription, so a change between the
	// two is sent by the watcher and never missed.
	rs, err := s.DB.Ruleset(r.Context(), app)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	// The server's write timeout is for answers, not for a stream that
	// lasts as long as the client stays.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx would hold the events back
	w.WriteHeader(http.StatusOK)
	// A dropped stream comes back after a second, at the same replica or,
	// behind a load balancer, at another.
	buf := []byte("retry: 1000\n\n")
	last := r.Header.Get("Last-Event-ID")
	if rs.Version != last {
		buf = appendRulesetEvent(buf, rs.Version)
		last = rs.Version
	}
	if !writeFlush(w, rc, buf) {
		return
	}
	every := s.StreamHeartbeat
	if every <= 0 {
		every = DefaultStreamHeartbeat
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	done := clientDone(r)
	for {
		var b []byte
		select {
		case v := <-sub.ch:
			if v == last {
				continue
			}
			last = v
			b = appendRulesetEvent(buf[:0], v)
		case <-tick.C:
			b = append(buf[:0], ":\n\n"...)
		case <-done:
			return
		case <-s.streams.stop:
			return
		}
		if !writeFlush(w, rc, b) {
			return
		}
	}
}

func appendRulesetEvent(b []byte, version string) []byte {
	b = append(b, "id: "...)
	b = append(b, version...)
	b = append(b, "\nevent: ruleset\ndata: {\"version\":\""...)
	b = append(b, version...)
	return append(b, "\"}\n\n"...)
}

func writeFlush(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// clientDone is closed when the client goes away. The request's own
// context does not say so (see ServeHTTP): the connection's does.
func clientDone(r *http.Request) <-chan struct{} {
	if c, ok := r.Context().(*request); ok {
		return c.parent.Done()
	}
	return r.Context().Done()
}

// rulesetStreamPath is the one route that takes its key as ?key=.
const rulesetStreamPath = "/apps-external/:appId/ruleset/stream"

// keyFromQuery lets the stream take the client key as ?key=: browsers'
// EventSource cannot set an Authorization header, and client keys ship
// inside apps anyway. A header, when present, wins. The request log
// records the path alone, so the key is not logged.
func keyFromQuery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			if k := r.URL.Query().Get("key"); k != "" {
				r.Header.Set("Authorization", "Bearer "+k)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// streamHub fans changes out to the process's ruleset streams: one
// goroutine waits for the store's change generation to move, reads the
// ruleset of each app that has streams once, and hands a new version to
// each of them. Streams do no database work of their own after they open.
type streamHub struct {
	mu      sync.Mutex
	apps    map[int64]*appStreams
	running bool
	// stop ends every stream and the watcher (EndStreams).
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

type appStreams struct {
	subs    map[*streamSub]struct{}
	version string // as last handed out
}

type streamSub struct {
	ch chan string // the latest version not yet sent; one deep
}

func newStreamHub() *streamHub {
	return &streamHub{apps: map[int64]*appStreams{}, stop: make(chan struct{})}
}

// subscribe registers a stream of the app, starting the watcher with the
// first; nil once the hub stopped.
func (h *streamHub) subscribe(s *Server, app int64) *streamSub {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.stop:
		return nil
	default:
	}
	a := h.apps[app]
	if a == nil {
		a = &appStreams{subs: map[*streamSub]struct{}{}}
		h.apps[app] = a
	}
	sub := &streamSub{ch: make(chan string, 1)}
	a.subs[sub] = struct{}{}
	if !h.running {
		h.running = true
		h.wg.Add(1)
		// Taken here, before the stream reads its first version, so that
		// no change after that read goes unseen.
		_, changed := s.DB.Changes()
		go h.watch(s, changed)
	}
	return sub
}

func (h *streamHub) unsubscribe(app int64, sub *streamSub) {
	if sub == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if a := h.apps[app]; a != nil {
		delete(a.subs, sub)
		if len(a.subs) == 0 {
			delete(h.apps, app)
		}
	}
}

// streamRetry is how soon the watcher reads a ruleset again that it could
// not read (the database did not answer).
const streamRetry = time.Second

// watch waits for changes until the hub stops. Each move of the change
// generation rereads the rulesets of the apps with streams; most moves
// concern none of them, and the version, a hash of the answer, then stays.
func (h *streamHub) watch(s *Server, changed <-chan struct{}) {
	defer h.wg.Done()
	var retry <-chan time.Time
	for {
		select {
		case <-changed:
		case <-retry:
		case <-h.stop:
			return
		}
		// Taken before the reads, so that a change committed while they
		// run wakes the next round instead of waiting for another.
		_, changed = s.DB.Changes()
		retry = nil
		if !h.refresh(s) {
			retry = time.After(streamRetry)
		}
	}
}

// refresh reads the ruleset of every app with streams and hands each a
// version that moved; false when a read failed.
func (h *streamHub) refresh(s *Server) bool {
	h.mu.Lock()
	apps := make([]int64, 0, len(h.apps))
	for app := range h.apps {
		apps = append(apps, app)
	}
	h.mu.Unlock()
	ok := true
	for _, app := range apps {
		ctx, cancel := context.WithTimeout(context.Background(), s.DB.Timeout())
		rs, err := s.DB.Ruleset(ctx, app)
		cancel()
		if err != nil {
			s.Log.Warn("ruleset stream: the ruleset could not be read; trying again", "app", app, "err", err)
			ok = false
			continue
		}
		h.mu.Lock()
		if a := h.apps[app]; a != nil && a.version != rs.Version {
			a.version = rs.Version
			for sub := range a.subs {
				sub.send(rs.Version)
			}
		}
		h.mu.Unlock()
	}
	return ok
}

// send hands v to the stream, replacing a version it has not sent yet:
// only the latest matters.
func (sub *streamSub) send(v string) {
	select {
	case sub.ch <- v:
		return
	default:
	}
	select {
	case <-sub.ch:
	default:
	}
	select {
	case sub.ch <- v:
	default:
	}
}

// EndStreams ends every ruleset stream and refuses new ones: a shutdown
// calls it as it begins (http.Server.RegisterOnShutdown), since Shutdown
// waits for responses to end and a stream would not on its own. Clients
// reconnect, to another replica behind a load balancer.
func (s *Server) EndStreams() {
	s.streams.stopOnce.Do(func() { close(s.streams.stop) })
}
