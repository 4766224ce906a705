package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"service/internal/storetest"
	"service/store"
)

// rulesetGet fetches the app's ruleset and checks that the ETag is the
// body's version.
func rulesetGet(e *testEnv, key string) (map[string]any, string) {
	e.t.Helper()
	rec := e.do("GET", pathf("/v1/apps-external/%d/ruleset", e.App.ID), key, nil)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("ruleset: %d %s", rec.Code, rec.Body.String())
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		e.t.Fatalf("ruleset: %v: %s", err, rec.Body.String())
	}
	v, _ := m["version"].(string)
	if v == "" || rec.Header().Get("ETag") != `"`+v+`"` {
		e.t.Fatalf("ruleset: version %q, ETag %q", v, rec.Header().Get("ETag"))
	}
	return m, v
}

// TestRuleset checks the ruleset's entries field by field, which
// campaigns are local, the content blocks, the ETag, and that its version
// moves with every change to the answer and with nothing else.
func TestRuleset(t *testing.T) {
	e := newEnv(t)
	empty, v0 := rulesetGet(e, e.Cli)
	if !reflect.DeepEqual(empty, map[string]any{"version": v0, "campaigns": []any{}, "contentViews": []any{}}) {
		t.Fatalf("an app without campaigns: %v", empty)
	}
	blocks := campaignBlocks(e, 3)
	attrs := audienceCreate(e, "de", `{"logic":"OR","rules":[{"field":"country","operator":"equals","value":"DE"},{"field":"age","operator":"greater_than","value":17}]}`)
	events := audienceCreate(e, "buyers", `{"rules":[{"ruleType":"event","eventId":"buy","operator":"performed_count","count":2,"comparison":"at_least"}]}`)
	local := num(campaignCreate(e, campaignBody(blocks[:2], map[string]any{"key": "hero", "audienceId": num(attrs, "id"),
		"namespace": map[string]any{"id": "home", "range": []any{0.25, 0.75}},
		"variants": []any{map[string]any{"name": "A", "contentViewId": blocks[0], "trafficAllocation": 30, "isControl": true},
			map[string]any{"name": "B", "contentViewId": blocks[1], "trafficAllocation": 70}}})), "id")
	rr := num(campaignCreate(e, campaignBody(blocks[1:3], map[string]any{"key": "rr", "assignmentType": "round_robin"})), "id")
	byEvents := num(campaignCreate(e, campaignBody(blocks[:2], map[string]any{"key": "ev", "audienceId": num(events, "id")})), "id")
	draft := num(campaignCreate(e, campaignBody(blocks[1:], map[string]any{"key": "later"})), "id")
	for _, id := range []int64{local, rr, byEvents} {
		campaignSetStatus(e, id, "active")
	}
	rs, v1 := rulesetGet(e, e.Cli)
	if v1 == v0 {
		t.Fatal("starting campaigns left the version alone")
	}
	lv := campaignVariantIDs(e, local)
	want := map[string]any{
		"id": float64(local), "key": "hero", "evaluation": "local", "assignmentType": "weighted",
		"namespace": map[string]any{"id": "home", "range": []any{0.25, 0.75}},
		"audience":  map[string]any{"logic": "OR", "rules": []any{map[string]any{"field": "country", "operator": "equals", "value": "DE"}, map[string]any{"field": "age", "operator": "greater_than", "value": 17.0}}},
		"variants": []any{
			map[string]any{"id": float64(lv[0]), "name": "A", "trafficAllocation": 30.0, "contentViewId": float64(blocks[0]), "isControl": true},
			map[string]any{"id": float64(lv[1]), "name": "B", "trafficAllocation": 70.0, "contentViewId": float64(blocks[1]), "isControl": false},
		},
	}
	list := rs["campaigns"].([]any)
	if len(list) != 3 {
		t.Fatalf("campaigns %v, want the 3 active ones (not draft %d)", list, draft)
	}
	if got := list[0].(map[string]any); !reflect.DeepEqual(got, want) {
		t.Errorf("local campaign:\n got %v\nwant %v", got, want)
	}
	for i, c := range []struct {
		id   int64
		eval string
	}{{local, "local"}, {rr, "remote"}, {byEvents, "remote"}} {
		got := list[i].(map[string]any)
		if num(got, "id") != c.id || got["evaluation"] != c.eval {
			t.Errorf("campaign %d: id %v evaluation %v, want %d %s", i, got["id"], got["evaluation"], c.id, c.eval)
		}
	}
	if got := list[1].(map[string]any); got["audience"] != nil || got["namespace"] != nil || got["assignmentType"] != "round_robin" {
		t.Errorf("round robin entry %v", got)
	}
	views := rs["contentViews"].([]any)
	if len(views) != 3 {
		t.Fatalf("contentViews %v, want the 3 blocks once each", views)
	}
	for i, v := range views {
		sdk := e.must(http.StatusOK, "GET", pathf("/v1/apps-external/%d/content/%d", e.App.ID, blocks[i]), e.Cli, nil)
		if !reflect.DeepEqual(v, any(sdk)) {
			t.Errorf("contentViews[%d] %v, want what the SDK's content route answers: %v", i, v, sdk)
		}
	}
	t.Run("ETag", func(t *testing.T) {
		for _, inm := range []string{`"` + v1 + `"`, v1, `W/"` + v1 + `"`, `"x", "` + v1 + `"`, "*"} {
			rec := e.doHeader("GET", pathf("/v1/apps-external/%d/ruleset", e.App.ID), e.Cli, map[string]string{"If-None-Match": inm})
			if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != `"`+v1+`"` {
				t.Errorf("If-None-Match %s: %d %q %q, want 304 with the ETag", inm, rec.Code, rec.Body.String(), rec.Header().Get("ETag"))
			}
		}
		rec := e.doHeader("GET", pathf("/v1/apps-external/%d/ruleset", e.App.ID), e.Cli, map[string]string{"If-None-Match": `"` + v0 + `"`})
		if rec.Code != http.StatusOK {
			t.Errorf("an old version: %d, want 200", rec.Code)
		}
	})
	t.Run("CORS", func(t *testing.T) {
		rec := e.doHeader("GET", pathf("/v1/apps-external/%d/ruleset", e.App.ID), e.Cli, map[string]string{"Origin": "https://shop.example"})
		h := rec.Header()
		if got := h.Values("Vary"); !reflect.DeepEqual(got, []string{"Origin", "Authorization"}) {
			t.Errorf("Vary %v, want Origin and Authorization", got)
		}
		if h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "ETag") {
			t.Errorf("a page cannot read the ETag: %v", h)
		}
	})
	t.Run("Roles", func(t *testing.T) {
		for _, key := range []string{e.Admin, e.Read} {
			if _, v := rulesetGet(e, key); v != v1 {
				t.Errorf("version %s, want %s for every key", v, v1)
			}
		}
	})
	t.Run("Versions", func(t *testing.T) {
		prev := v1
		for _, step := range []struct {
			name  string
			moves bool
			do    func()
		}{
			{"a draft campaign changes", false, func() {
				e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", draft), e.Admin, map[string]any{"name": "renamed"})
			}},
			{"a block no campaign shows", false, func() { e.mustContent("unused", store.ContentPublished) }},
			{"a block's items", true, func() {
				e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", blocks[0]), e.Admin, map[string]any{"items": []any{map[string]any{"type": "text", "content": "new", "styles": map[string]any{}}}})
			}},
			{"an audience's rules", true, func() {
				e.must(http.StatusOK, "PATCH", pathf("/v1/audiences/%d", num(attrs, "id")), e.Admin, map[string]any{"definition": map[string]any{"rules": []any{map[string]any{"field": "country", "operator": "in", "value": []any{"DE", "AT"}}}}})
			}},
			{"a campaign pauses", true, func() { campaignSetStatus(e, rr, "paused") }},
			{"and resumes", true, func() { campaignSetStatus(e, rr, "active") }},
		} {
			step.do()
			_, v := rulesetGet(e, e.Cli)
			if moved := v != prev; moved != step.moves {
				t.Errorf("%s: version moved %v, want %v", step.name, moved, step.moves)
			}
			prev = v
		}
	})
}

// doHeader is do with request headers and no body.
func (e *testEnv) doHeader(method, path, key string, header map[string]string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, req)
	exchanges.record(req, nil, rec)
	return rec
}

// sseEvent is one event of a stream; comment is set for a comment line.
type sseEvent struct {
	id, event, data string
	comment         bool
}

// sseStream reads a Server-Sent Events answer.
type sseStream struct {
	t    testing.TB
	res  *http.Response
	r    *bufio.Reader
	evs  chan sseEvent
	errc chan error
}

// sseOpen opens a stream with the client key as ?key= and the headers
// given, and fails unless it is answered 200 as an event stream.
func sseOpen(t testing.TB, url string, header map[string]string) *sseStream {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("stream %s: %d %s %s", url, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	s := &sseStream{t: t, res: res, r: bufio.NewReader(res.Body), evs: make(chan sseEvent, 100), errc: make(chan error, 1)}
	t.Cleanup(func() { res.Body.Close() })
	go s.read()
	return s
}

func (s *sseStream) read() {
	var ev sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.errc <- err
			close(s.evs)
			return
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev != (sseEvent{}) {
				s.evs <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			ev.comment = true
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
}

// next returns the next event that is not a comment, failing after wait.
func (s *sseStream) next(wait time.Duration) sseEvent {
	s.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case ev, ok := <-s.evs:
			if !ok {
				s.t.Fatalf("stream ended: %v", <-s.errc)
			}
			if !ev.comment {
				return ev
			}
		case <-deadline:
			s.t.Fatalf("no event within %s", wait)
		}
	}
}

// wantVersion fails unless ev announces version.
func wantVersion(t testing.TB, ev sseEvent, version string) {
	t.Helper()
	want := sseEvent{id: version, event: "ruleset", data: `{"version":"` + version + `"}`}
	if ev != want {
		t.Fatalf("event %+v, want %+v", ev, want)
	}
}

// TestRulesetStream follows the stream through connection, heartbeats, a
// change made by another process on the same database, a reconnection
// with Last-Event-ID, a refused key and the server's shutdown.
func TestRulesetStream(t *testing.T) {
	path := storetest.DB(t, filepath.Join(t.TempDir(), "test.db"))
	e := campaignEnvAt(t, path)
	e.Srv.StreamHeartbeat = 20 * time.Millisecond
	srv := httptest.NewServer(e.Srv)
	defer srv.Close()
	// Another process on the same database makes the changes.
	other, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	b := &testEnv{t: t, DB: other, Srv: newServer(other), App: e.App, Admin: e.Admin, Read: e.Read, Cli: e.Cli}
	t.Cleanup(b.Srv.Close)

	url := srv.URL + pathf("/v1/apps-external/%d/ruleset/stream?key=%s", e.App.ID, e.Cli)
	_, v0 := rulesetGet(e, e.Cli)
	s := sseOpen(t, url, nil)
	wantVersion(t, s.next(5*time.Second), v0)
	// The heartbeat comes while nothing changes.
	select {
	case ev := <-s.evs:
		if !ev.comment {
			t.Fatalf("%+v before any change, want a comment line", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}

	blocks := campaignBlocks(b, 2)
	id := num(campaignCreate(b, campaignBody(blocks, nil)), "id")
	campaignSetStatus(b, id, "active")
	_, v1 := rulesetGet(b, b.Cli)
	// The blocks and the draft changed nothing the ruleset holds; the
	// start did. Stale versions may come first if the watcher saw the
	// changes one by one, but it settles on the latest.
	for ev := s.next(5 * time.Second); ev.id != v1; ev = s.next(5 * time.Second) {
		if ev.id == v0 {
			t.Fatalf("the unchanged version %s sent again", v0)
		}
	}

	t.Run("LastEventID", func(t *testing.T) {
		same := sseOpen(t, url, map[string]string{"Last-Event-ID": v1})
		// Only comments until something changes.
		for i := 0; i < 2; i++ {
			select {
			case ev := <-same.evs:
				if !ev.comment {
					t.Fatalf("%+v for a client that has the version", ev)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no heartbeat")
			}
		}
		old := sseOpen(t, url, map[string]string{"Last-Event-ID": v0})
		wantVersion(t, old.next(5*time.Second), v1)
	})
	t.Run("Header", func(t *testing.T) {
		h := sseOpen(t, srv.URL+pathf("/v1/apps-external/%d/ruleset/stream", e.App.ID), map[string]string{"Authorization": "Bearer " + e.Cli})
		wantVersion(t, h.next(5*time.Second), v1)
	})
	t.Run("RefusedKey", func(t *testing.T) {
		for _, tc := range []struct {
			query  string
			status int
			code   string
		}{
			{"", http.StatusUnauthorized, "UNAUTHORIZED"},
			{"?key=sk_c_nope", http.StatusUnauthorized, "UNAUTHORIZED"},
			{"?key=" + e.Read, http.StatusOK, ""},
		} {
			res, err := http.Get(srv.URL + pathf("/v1/apps-external/%d/ruleset/stream", e.App.ID) + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if tc.status == http.StatusOK {
				res.Body.Close()
				continue
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var env struct {
				Error struct{ Code string } `json:"error"`
			}
			if res.StatusCode != tc.status || json.Unmarshal(body, &env) != nil || env.Error.Code != tc.code {
				t.Errorf("%q: %d %s, want %d %s", tc.query, res.StatusCode, body, tc.status, tc.code)
			}
		}
		_, _, _, otherCli := e.newApp("other", "enterprise", 1000)
		res, err := http.Get(url[:strings.Index(url, "?")] + "?key=" + otherCli)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("another app's key: %d, want 403", res.StatusCode)
		}
	})
	t.Run("WriteTimeout", func(t *testing.T) {
		// serve's write timeout is for answers: a stream outlives it.
		ts := httptest.NewUnstartedServer(e.Srv)
		ts.Config.WriteTimeout = 100 * time.Millisecond
		ts.Start()
		defer ts.Close()
		st := sseOpen(t, ts.URL+pathf("/v1/apps-external/%d/ruleset/stream?key=%s", e.App.ID, e.Cli), nil)
		defer st.res.Body.Close() // before ts.Close, which waits for the stream to end
		wantVersion(t, st.next(5*time.Second), v1)
		opened := time.Now()
		for time.Since(opened) < 300*time.Millisecond {
			select {
			case _, ok := <-st.evs:
				if !ok {
					t.Fatalf("the stream ended after %s: %v", time.Since(opened), <-st.errc)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no heartbeat")
			}
		}
	})
	t.Run("Shutdown", func(t *testing.T) {
		e.Srv.EndStreams()
		for range s.evs {
		}
		if err := <-s.errc; err != io.EOF {
			t.Fatalf("the stream ended with %v, want EOF", err)
		}
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("a stream opened after the shutdown began: %d, want 503", res.StatusCode)
		}
	})
}

// TestGrowthBookPayload checks the payload's rule field by field, the
// exact hash ranges, the campaigns left to the server, the ETag, and that
// dateUpdated moves with a change, even one in the same millisecond as the
// last: the clock stands still. GrowthBook's own SDK is run against it in
// sdk/js/test/growthbook.test.js.
func TestGrowthBookPayload(t *testing.T) {
	e := newEnv(t)
	campaignUseClock(e, time.Now())
	blocks := campaignBlocks(e, 3)
	de := audienceCreate(e, "de", `{"rules":[{"field":"country","operator":"equals","value":"DE"}]}`)
	dotted := audienceCreate(e, "dotted", `{"rules":[{"field":"a.b","operator":"exists"}]}`)
	events := audienceCreate(e, "buyers", `{"rules":[{"ruleType":"event","eventId":"buy","operator":"has_performed"}]}`)
	three := func(a, b, c float64) []any {
		return []any{map[string]any{"name": "A", "contentViewId": blocks[0], "trafficAllocation": a},
			map[string]any{"name": "B", "contentViewId": blocks[1], "trafficAllocation": b},
			map[string]any{"name": "C", "contentViewId": blocks[2], "trafficAllocation": c}}
	}
	targeted := campaignInState(e, blocks[:2], "active", map[string]any{"key": "targeted", "audienceId": num(de, "id"),
		"namespace": map[string]any{"id": "home", "range": []any{0.1, 0.6}}})
	thirds := campaignInState(e, nil, "active", map[string]any{"key": "thirds", "variants": three(33.33, 33.33, 33.34)})
	campaignInState(e, nil, "active", map[string]any{"key": "zero", "variants": three(0, 100, 0)})
	for _, extra := range []map[string]any{
		{"key": "rr", "assignmentType": "round_robin"},
		{"key": "dotted", "audienceId": num(dotted, "id")},
		{"key": "events", "audienceId": num(events, "id")},
	} {
		campaignInState(e, blocks[:2], "active", extra)
	}
	get := func(header map[string]string) *httptest.ResponseRecorder {
		return e.doHeader("GET", pathf("/v1/apps-external/%d/growthbook/features", e.App.ID), e.Cli, header)
	}
	rec := get(nil)
	var p struct {
		Features    map[string]map[string]any `json:"features"`
		DateUpdated string                    `json:"dateUpdated"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &p) != nil {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	keys := []string{}
	for k := range p.Features {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if want := []string{"targeted", "thirds", "zero"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("features %v, want %v: remote campaigns and conditions GrowthBook cannot express are left out", keys, want)
	}
	tv := campaignVariantIDs(e, targeted)
	want := map[string]any{"defaultValue": nil, "rules": []any{map[string]any{
		"key": "targeted", "variations": []any{"Variant A", "Variant B"}, "weights": []any{0.5, 0.5}, "coverage": 1.0,
		"hashAttribute": "id", "hashVersion": 2.0, "seed": pathf("%d:", targeted), "namespace": []any{"home", 0.1, 0.6},
		"condition": map[string]any{"$and": []any{
			map[string]any{"userId": map[string]any{"$type": "string", "$ne": ""}},
			map[string]any{"$and": []any{map[string]any{"country": map[string]any{"$eq": "DE"}}}}}},
		"meta":   []any{map[string]any{"key": pathf("%d", tv[0]), "name": "Variant A"}, map[string]any{"key": pathf("%d", tv[1]), "name": "Variant B"}},
		"ranges": []any{[]any{0.0, 0.5}, []any{0.5, 1.0}},
	}}}
	if got := p.Features["targeted"]; !reflect.DeepEqual(got, any(want)) {
		t.Errorf("targeted:\n got %v\nwant %v", got, want)
	}
	rule := func(key string) map[string]any { return p.Features[key]["rules"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		key     string
		weights []any
		ranges  []any
	}{
		{"thirds", []any{0.3333, 0.3333, 0.3334}, []any{[]any{0.0, 0.3333}, []any{0.3333, 0.6666}, []any{0.6666, 1.0}}},
		{"zero", []any{0.0, 1.0, 0.0}, []any{[]any{0.0, 0.0}, []any{0.0, 1.0}, []any{1.0, 1.0}}},
	} {
		r := rule(tc.key)
		if !reflect.DeepEqual(r["weights"], tc.weights) || !reflect.DeepEqual(r["ranges"], tc.ranges) {
			t.Errorf("%s: weights %v ranges %v, want %v %v", tc.key, r["weights"], r["ranges"], tc.weights, tc.ranges)
		}
		if _, ok := r["condition"]; ok {
			t.Errorf("%s: a condition without an audience", tc.key)
		}
		if _, ok := r["namespace"]; ok {
			t.Errorf("%s: a namespace without one", tc.key)
		}
	}
	tag := rec.Header().Get("ETag")
	if r := get(map[string]string{"If-None-Match": tag}); tag == "" || r.Code != http.StatusNotModified {
		t.Errorf("If-None-Match %s: %d, want 304", tag, r.Code)
	}
	before := p.DateUpdated
	campaignSetStatus(e, thirds, "paused")
	rec = get(map[string]string{"If-None-Match": tag})
	p.Features = nil // Unmarshal would merge into the old map
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &p) != nil {
		t.Fatalf("after a pause: %d", rec.Code)
	}
	if _, ok := p.Features["thirds"]; ok || p.DateUpdated == before || rec.Header().Get("ETag") == tag {
		t.Errorf("after a pause: thirds %v, dateUpdated %s (was %s), ETag %s (was %s)", ok, p.DateUpdated, before, rec.Header().Get("ETag"), tag)
	}
	// Both in the clock's millisecond, to the microsecond.
	for _, d := range []string{before, p.DateUpdated} {
		at, err := time.Parse(time.RFC3339Nano, d)
		if want := e.DB.Now(); err != nil || len(d) != len("2006-01-02T15:04:05.000000Z") || at.Truncate(time.Millisecond) != want {
			t.Errorf("dateUpdated %s: want the microsecond of a change at %s", d, want.Format(time.RFC3339Nano))
		}
	}
}
