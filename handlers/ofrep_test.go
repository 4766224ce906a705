package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"service/internal/fixture"
	"service/internal/storetest"
	"service/internal/testwait"
	"service/store"
)

// ofrepShapes is testdata/ofrep/responses.openapi.json: OFREP's answer
// shapes, which every OFREP answer of these tests must take.
var (
	ofrepShapesOnce sync.Once
	ofrepChecker    *openAPIChecker
	ofrepShapesErr  error
)

func ofrepShapes(tb testing.TB) *openAPIChecker {
	tb.Helper()
	ofrepShapesOnce.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(fixture.Read(tb, "ofrep/responses.openapi.json"))
		if err == nil {
			err = doc.Validate(context.Background())
		}
		if err != nil {
			ofrepShapesErr = err
			return
		}
		ofrepChecker = newOpenAPIChecker(doc)
	})
	if ofrepShapesErr != nil {
		tb.Fatalf("testdata/ofrep/responses.openapi.json: %v", ofrepShapesErr)
	}
	return ofrepChecker
}

// ofrepCheckMu serializes checks: the checker remembers its last match.
var ofrepCheckMu sync.Mutex

// ofrep sends an OFREP request through the real router and fails the test
// unless the answer takes OFREP's shape for its status. header holds the
// request's headers; body is sent as testEnv.do sends it.
func (e *testEnv) ofrep(t testing.TB, method, path string, header map[string]string, body any) *httptest.ResponseRecorder {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, req)
	exchanges.record(req, raw, rec)
	c := ofrepShapes(t)
	x := exchange{Method: method, Path: req.URL.Path, Header: req.Header.Clone(), Body: raw, Status: rec.Code,
		RespHeader: rec.Header().Clone(), RespBody: rec.Body.Bytes()}
	ofrepCheckMu.Lock()
	route, err := c.check(x)
	ofrepCheckMu.Unlock()
	if route == "" {
		t.Fatalf("%s %s: no such OFREP route in the shapes", method, path)
	}
	if err != nil {
		t.Fatalf("%s %s: answer %d is not in OFREP's shape: %v", method, path, rec.Code, err)
	}
	return rec
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

// ofrepBody decodes an OFREP answer.
func ofrepBody(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("status %d, body not JSON: %q", rec.Code, rec.Body.String())
	}
	return m
}

func ofrepCtx(ctx map[string]any) map[string]any { return map[string]any{"context": ctx} }

// ofrepCampaigns makes one campaign of each case OFREP tells apart.
type ofrepFixture struct {
	hero, targeted, paused, draft, ns int64
}

func newOFREPFixture(e *testEnv) ofrepFixture {
	e.t.Helper()
	blocks := campaignBlocks(e, 2)
	aud := auditAudience(e) // country equals DE
	return ofrepFixture{
		hero:     campaignInState(e, blocks, "active", map[string]any{"key": "hero"}),
		targeted: campaignInState(e, blocks, "active", map[string]any{"key": "targeted", "audienceId": aud}),
		paused:   campaignInState(e, blocks, "paused", map[string]any{"key": "paused"}),
		draft:    campaignInState(e, blocks, "draft", map[string]any{"key": "draft"}),
		ns: campaignInState(e, blocks, "active", map[string]any{"key": "narrow",
			"namespace": map[string]any{"id": "ofrep", "range": []float64{0, 0.01}}}),
	}
}

func TestOFREPEvaluateFlag(t *testing.T) {
	e := newEnv(t)
	f := newOFREPFixture(e)
	path := func(key string) string { return "/ofrep/v1/evaluate/flags/" + key }
	for _, tc := range []struct {
		name, key string
		ctx       map[string]any
		status    int
		want      map[string]any // members that must be so
		noValue   bool
	}{
		{"Split", "hero", map[string]any{"targetingKey": "u1"}, 200, map[string]any{"key": "hero", "reason": "SPLIT", "metadata.campaignId": float64(f.hero)}, false},
		{"SessionOnly", "hero", map[string]any{"sessionId": "s1"}, 200, map[string]any{"reason": "SPLIT"}, false},
		{"TargetingMatch", "targeted", map[string]any{"targetingKey": "de-1", "country": "DE"}, 200, map[string]any{"reason": "TARGETING_MATCH"}, false},
		{"NotInAudience", "targeted", map[string]any{"targetingKey": "fr-1", "country": "FR"}, 200,
			map[string]any{"key": "targeted", "reason": "DEFAULT", "metadata.reason": "not_in_audience", "metadata.campaignId": float64(f.targeted)}, true},
		{"NotInNamespace", "narrow", map[string]any{"targetingKey": "u1"}, 200, map[string]any{"reason": "DEFAULT", "metadata.reason": "not_in_namespace"}, true},
		{"Paused", "paused", map[string]any{"targetingKey": "u1"}, 200, map[string]any{"key": "paused", "reason": "DISABLED", "metadata.campaignId": float64(f.paused)}, true},
		{"Draft", "draft", map[string]any{"targetingKey": "u1"}, 200, map[string]any{"reason": "DISABLED"}, true},
		{"Unknown", "nope", map[string]any{"targetingKey": "u1"}, 404, map[string]any{"key": "nope", "errorCode": "FLAG_NOT_FOUND"}, true},
		{"NotAKey", "Hero", map[string]any{"targetingKey": "u1"}, 404, map[string]any{"errorCode": "FLAG_NOT_FOUND"}, true},
		{"Digits", "123", map[string]any{"targetingKey": "u1"}, 404, map[string]any{"errorCode": "FLAG_NOT_FOUND"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.ofrep(t, "POST", path(tc.key), bearer(e.Cli), ofrepCtx(tc.ctx))
			if rec.Code != tc.status {
				t.Fatalf("status=%d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			m := ofrepBody(t, rec)
			for k, want := range tc.want {
				got := any(m)
				for _, part := range strings.Split(k, ".") {
					got = got.(map[string]any)[part]
				}
				if got != want {
					t.Fatalf("%s=%v, want %v: %s", k, got, want, rec.Body.String())
				}
			}
			if _, has := m["value"]; has == tc.noValue {
				t.Fatalf("value present=%v, want %v: %s", has, !tc.noValue, rec.Body.String())
			}
		})
	}
	t.Run("AnotherAppsFlag", func(t *testing.T) {
		_, _, _, cli2 := e.newApp("other", "enterprise", 1_000_000)
		rec := e.ofrep(t, "POST", path("hero"), bearer(cli2), ofrepCtx(map[string]any{"targetingKey": "u1"}))
		if rec.Code != http.StatusNotFound || ofrepBody(t, rec)["errorCode"] != "FLAG_NOT_FOUND" {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	})
}

// The flag's value is the variant the variant route gives the same user,
// through either route first, with one impression per user.
func TestOFREPSameAsVariantRoute(t *testing.T) {
	e := newEnv(t)
	f := newOFREPFixture(e)
	variant := pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, f.hero)
	const users = 40
	for i := range users {
		u := pathf("user-%d", i)
		var v, fl map[string]any
		if i%2 == 0 {
			fl = ofrepBody(t, e.ofrep(t, "POST", "/ofrep/v1/evaluate/flags/hero", bearer(e.Cli), ofrepCtx(map[string]any{"targetingKey": u})))
			v = e.must(http.StatusOK, "POST", variant, e.Cli, map[string]any{"userId": u})
		} else {
			v = e.must(http.StatusOK, "POST", variant, e.Cli, map[string]any{"userId": u})
			fl = ofrepBody(t, e.ofrep(t, "POST", "/ofrep/v1/evaluate/flags/hero", bearer(e.Cli), ofrepCtx(map[string]any{"targetingKey": u})))
		}
		if fl["value"] != v["variantName"] || fl["variant"] != v["variantName"] || fl["metadata"].(map[string]any)["variantId"] != v["variantId"] {
			t.Fatalf("%s: flag %v, variant %v", u, fl, v)
		}
		if got, want := v["impressionRecorded"], i%2 == 1; got != want {
			t.Fatalf("%s: impressionRecorded=%v, want %v", u, got, want)
		}
	}
	if got := num(e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", f.hero), e.Admin, nil), "totalImpressions"); got != users {
		t.Fatalf("totalImpressions=%d, want %d", got, users)
	}
	// The context's other members are the user's attributes.
	e.ofrep(t, "POST", "/ofrep/v1/evaluate/flags/hero", bearer(e.Cli), ofrepCtx(map[string]any{"targetingKey": "user-0", "plan": "pro"}))
	p := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/users/user-0", e.App.ID), e.Admin, nil)
	if p["attributes"].(map[string]any)["plan"] != "pro" {
		t.Fatalf("profile %v", p)
	}
}

func TestOFREPBadInput(t *testing.T) {
	e := newEnv(t)
	newOFREPFixture(e)
	_, revoked, err := e.DB.CreateKey(context.Background(), e.App.ID, store.RoleClient, "gone")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.DB.FindKeys(context.Background(), e.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == "gone" {
			if _, err := e.DB.RevokeKey(context.Background(), k.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	ok := ofrepCtx(map[string]any{"targetingKey": "u1"})
	many := map[string]any{"targetingKey": "u1"}
	for i := range 101 {
		many[pathf("a%d", i)] = i
	}
	type tc struct {
		name   string
		header map[string]string
		body   any
		status int
		code   string
	}
	cases := []tc{
		{"NoKey", nil, ok, 401, "GENERAL"},
		{"MalformedAuthorization", map[string]string{"Authorization": "Basic x"}, ok, 401, "GENERAL"},
		{"UnknownKey", bearer("sk_c_nope"), ok, 401, "GENERAL"},
		{"RevokedKey", bearer(revoked), ok, 401, "GENERAL"},
		{"ClientKey", bearer(e.Cli), ok, 200, ""},
		{"ReadKey", bearer(e.Read), ok, 200, ""},
		{"AdminKey", bearer(e.Admin), ok, 200, ""},
		{"XAPIKey", map[string]string{"X-API-Key": e.Cli}, ok, 200, ""},
		{"NoBody", bearer(e.Cli), nil, 400, "PARSE_ERROR"},
		{"NotJSON", bearer(e.Cli), "x", 400, "PARSE_ERROR"},
		{"Array", bearer(e.Cli), "[]", 400, "PARSE_ERROR"},
		{"Truncated", bearer(e.Cli), `{"context":{"targetingKey":"u1"`, 400, "PARSE_ERROR"},
		{"NUL", bearer(e.Cli), `{"context":{"targetingKey":"u\u0000"}}`, 400, "PARSE_ERROR"},
		{"NoContext", bearer(e.Cli), `{}`, 400, "TARGETING_KEY_MISSING"},
		{"EmptyContext", bearer(e.Cli), ofrepCtx(map[string]any{}), 400, "TARGETING_KEY_MISSING"},
		{"EmptyTargetingKey", bearer(e.Cli), ofrepCtx(map[string]any{"targetingKey": ""}), 400, "TARGETING_KEY_MISSING"},
		{"ContextNotObject", bearer(e.Cli), `{"context":"u1"}`, 400, "INVALID_CONTEXT"},
		{"TargetingKeyNumber", bearer(e.Cli), ofrepCtx(map[string]any{"targetingKey": 5}), 400, "INVALID_CONTEXT"},
		{"TargetingKeyTooLong", bearer(e.Cli), ofrepCtx(map[string]any{"targetingKey": strings.Repeat("u", 257)}), 400, "INVALID_CONTEXT"},
		{"TooManyAttributes", bearer(e.Cli), ofrepCtx(many), 400, "INVALID_CONTEXT"},
		{"TooLarge", bearer(e.Cli), `{"context":{"targetingKey":"` + strings.Repeat("u", MaxBodyBytes) + `"}}`, 413, "PARSE_ERROR"},
	}
	for _, route := range []string{"/ofrep/v1/evaluate/flags/hero", "/ofrep/v1/evaluate/flags"} {
		for _, c := range cases {
			t.Run(route+"/"+c.name, func(t *testing.T) {
				rec := e.ofrep(t, "POST", route, c.header, c.body)
				if rec.Code != c.status {
					t.Fatalf("status=%d, want %d: %s", rec.Code, c.status, rec.Body.String())
				}
				if c.code == "" {
					return
				}
				m := ofrepBody(t, rec)
				if m["errorCode"] != c.code || m["errorDetails"] == "" {
					t.Fatalf("answer %s, want errorCode %s", rec.Body.String(), c.code)
				}
				if _, hasKey := m["key"]; hasKey != strings.HasSuffix(route, "/hero") {
					t.Fatalf("key in %s", rec.Body.String())
				}
			})
		}
	}
	t.Run("ConfigurationNeedsAKey", func(t *testing.T) {
		if rec := e.ofrep(t, "GET", "/ofrep/v1/configuration", nil, nil); rec.Code != http.StatusUnauthorized {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	})
}

func TestOFREPBulk(t *testing.T) {
	e := newEnv(t)
	f := newOFREPFixture(e)
	bulk := func(t *testing.T, ctx map[string]any, inm string) *httptest.ResponseRecorder {
		h := bearer(e.Cli)
		if inm != "" {
			h["If-None-Match"] = inm
		}
		return e.ofrep(t, "POST", "/ofrep/v1/evaluate/flags", h, ofrepCtx(ctx))
	}
	u1 := map[string]any{"targetingKey": "u1", "country": "DE"}
	first := bulk(t, u1, "")
	tag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || tag == "" {
		t.Fatalf("%d, ETag %q", first.Code, tag)
	}
	var got []string
	for _, fl := range ofrepBody(t, first)["flags"].([]any) {
		got = append(got, fl.(map[string]any)["key"].(string)+"="+fl.(map[string]any)["reason"].(string))
	}
	// Active campaigns only, in id order, each as the single route answers.
	if want := "hero=SPLIT targeted=TARGETING_MATCH narrow=DEFAULT"; strings.Join(got, " ") != want {
		t.Fatalf("flags %v, want %s", got, want)
	}
	for _, tc := range []struct {
		name, inm string
		ctx       map[string]any
		want      int
	}{
		{"SameTag", tag, u1, http.StatusNotModified},
		{"WeakAndListed", `"x", W/` + tag, u1, http.StatusNotModified},
		{"Star", "*", u1, http.StatusNotModified},
		{"OtherTag", `"x"`, u1, http.StatusOK},
		{"OtherContext", tag, map[string]any{"targetingKey": "u1", "country": "FR"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := bulk(t, tc.ctx, tc.inm)
			if rec.Code != tc.want {
				t.Fatalf("status=%d, want %d", rec.Code, tc.want)
			}
			if tc.want == http.StatusNotModified && (rec.Body.Len() != 0 || rec.Header().Get("ETag") != tag) {
				t.Fatalf("304 with body %q, ETag %q", rec.Body.String(), rec.Header().Get("ETag"))
			}
			if tc.want == http.StatusOK && rec.Header().Get("ETag") == tag && tc.name == "OtherContext" {
				t.Fatal("another context, the same tag")
			}
		})
	}
	t.Run("ReplicasAgree", func(t *testing.T) {
		r := e.replica(nil)
		if rec := r.ofrep(t, "POST", "/ofrep/v1/evaluate/flags", map[string]string{"Authorization": "Bearer " + e.Cli, "If-None-Match": tag}, ofrepCtx(u1)); rec.Code != http.StatusNotModified {
			t.Fatalf("another replica: %d, ETag %q, want 304 for %q", rec.Code, rec.Header().Get("ETag"), tag)
		}
	})
	t.Run("PausingChangesTheAnswer", func(t *testing.T) {
		campaignSetStatus(e, f.hero, "paused")
		rec := bulk(t, u1, tag)
		if rec.Code != http.StatusOK || rec.Header().Get("ETag") == tag || strings.Contains(rec.Body.String(), `"hero"`) {
			t.Fatalf("after pausing: %d %s", rec.Code, rec.Body.String())
		}
	})
}

func TestOFREPConfiguration(t *testing.T) {
	e := newEnv(t)
	rec := e.ofrep(t, "GET", "/ofrep/v1/configuration", map[string]string{"X-API-Key": e.Read}, nil)
	want := `{"name":"Service","capabilities":{"cacheInvalidation":{"polling":{"enabled":true,"minPollingIntervalMs":1000}},"flagEvaluation":{"supportedTypes":["string"]}}}`
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	h := bearer(e.Cli)
	h["If-None-Match"] = rec.Header().Get("ETag")
	if rec := e.ofrep(t, "GET", "/ofrep/v1/configuration", h, nil); rec.Code != http.StatusNotModified {
		t.Fatalf("revalidation: %d", rec.Code)
	}
}

// OFREP counts in the app's SDK budget, whatever the key's role, and
// answers 429 with Retry-After in OFREP's shape.
func TestOFREPRateLimit(t *testing.T) {
	e := newEnv(t)
	_, admin, _, _ := e.newApp("limited", "free", 1) // SDK budget: 100 a minute
	// 10 s into a minute: the window cannot roll over between the budget's
	// last request and the ones it refuses.
	e.Srv.Now = minuteAt10s()
	for i := range 100 {
		if rec := e.ofrep(t, "GET", "/ofrep/v1/configuration", bearer(admin), nil); rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, rec.Code, rec.Body.String())
		}
	}
	for _, route := range []string{"/ofrep/v1/evaluate/flags/x", "/ofrep/v1/evaluate/flags"} {
		rec := e.ofrep(t, "POST", route, bearer(admin), ofrepCtx(map[string]any{"targetingKey": "u"}))
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || ofrepBody(t, rec)["errorCode"] != "GENERAL" {
			t.Fatalf("%s over the budget: %d %v %s", route, rec.Code, rec.Header(), rec.Body.String())
		}
	}
}

func TestOFREPCORS(t *testing.T) {
	e := newEnv(t)
	newOFREPFixture(e)
	if _, err := e.DB.UpdateApp(context.Background(), e.App.ID, store.AppUpdate{AllowedOrigins: &[]string{"https://shop.example"}}); err != nil {
		t.Fatal(err)
	}
	pre := httptest.NewRequest("OPTIONS", "/ofrep/v1/evaluate/flags", nil)
	pre.Header.Set("Origin", "https://anywhere.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, pre)
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "X-API-Key") {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	for _, tc := range []struct {
		origin, key, allow string
		expose             bool
	}{
		{"https://shop.example", e.Cli, "https://shop.example", true},
		{"https://evil.example", e.Cli, "", false},
		{"https://evil.example", "sk_c_nope", "*", false}, // a refusal any page may read
	} {
		rec := e.ofrep(t, "POST", "/ofrep/v1/evaluate/flags", map[string]string{"Authorization": "Bearer " + tc.key, "Origin": tc.origin},
			ofrepCtx(map[string]any{"targetingKey": "u1"}))
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != tc.allow {
			t.Fatalf("%s with %s: Allow-Origin %q, want %q", tc.origin, tc.key, got, tc.allow)
		}
		if got := strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "ETag"); got != tc.expose {
			t.Fatalf("%s: ETag exposed %v, want %v", tc.origin, got, tc.expose)
		}
	}
}

// Every malformed body the API's routes are tried with gets an OFREP
// failure or an evaluation, never a 500.
func TestOFREPBadBodies(t *testing.T) {
	e := newEnv(t)
	newOFREPFixture(e)
	for _, route := range []string{"/ofrep/v1/evaluate/flags/hero", "/ofrep/v1/evaluate/flags"} {
		for i, body := range badBodies {
			for _, wrapped := range []any{body, `{"context":` + toJSONText(body) + `}`} {
				rec := e.ofrep(t, "POST", route, bearer(e.Cli), wrapped)
				if rec.Code >= 500 {
					t.Fatalf("%s with body %d: %d %s", route, i, rec.Code, rec.Body.String())
				}
			}
		}
	}
}

// toJSONText is body if it is JSON, else a JSON string.
func toJSONText(body string) string {
	if json.Valid([]byte(body)) {
		return body
	}
	return `"x"`
}

// A campaign paused through one process is DISABLED on another serving the
// same database, for a user that process had answered from memory: its
// caches start over when it learns of the other's commit (the SQLite
// file's watch, PostgreSQL's LISTEN).
func TestOFREPPauseSeenByOtherProcess(t *testing.T) {
	target := storetest.DB(t, filepath.Join(t.TempDir(), "test.db"))
	open := func() *testEnv {
		db, err := store.Open(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		e := &testEnv{t: t, DB: db, Srv: newServer(db)}
		t.Cleanup(e.Srv.Close)
		return e
	}
	a, b := open(), open()
	a.App, a.Admin, a.Read, a.Cli = a.newApp("test", "enterprise", 1_000_000)
	b.App, b.Admin, b.Read, b.Cli = a.App, a.Admin, a.Read, a.Cli
	id := campaignInState(a, campaignBlocks(a, 2), "active", map[string]any{"key": "hero"})
	ctx := ofrepCtx(map[string]any{"targetingKey": "u1"})
	for _, e := range []*testEnv{b, b, a} { // b learns the campaign and the user
		if got := ofrepBody(t, e.ofrep(t, "POST", "/ofrep/v1/evaluate/flags/hero", bearer(a.Cli), ctx))["reason"]; got != "SPLIT" {
			t.Fatalf("before the pause: reason %v", got)
		}
	}
	campaignSetStatus(a, id, "paused")
	testwait.Until(t, 10*time.Second, "the other process to see the pause", func() bool {
		return ofrepBody(t, b.ofrep(t, "POST", "/ofrep/v1/evaluate/flags/hero", bearer(a.Cli), ctx))["reason"] == "DISABLED"
	})
}
