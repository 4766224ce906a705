package handlers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"service/store"
)

// foundationRaw sends a request with the Authorization header exactly as
// given (empty means none), for the cases e.do cannot express.
func foundationRaw(e *testEnv, method, path, authorization string, body io.Reader) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, path, body)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, req)
	return rec
}

// foundationWantError fails unless rec is an error envelope with status and
// code, served as JSON.
func foundationWantError(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if got, want := rec.Code, status; got != want {
		t.Fatalf("status=%d, want %d; body=%s", got, want, rec.Body.String())
	}
	if got, want := errCode(t, rec), code; got != want {
		t.Fatalf("error.code=%q, want %q; body=%s", got, want, rec.Body.String())
	}
	if got, want := rec.Header().Get("Content-Type"), "application/json"; got != want {
		t.Fatalf("Content-Type=%q, want %q", got, want)
	}
}

// TestFoundationDraining: once the server drains, /healthz answers 503 so
// that load balancers stop sending it requests, while /livez and every
// other route answer as before.
func TestFoundationDraining(t *testing.T) {
	e := newEnv(t)
	e.Srv.Drain()
	rec := foundationRaw(e, "GET", "/healthz", "", nil)
	if got, want := rec.Code, http.StatusServiceUnavailable; got != want {
		t.Fatalf("GET /healthz while draining: status=%d, want %d", got, want)
	}
	if got, want := errCode(t, rec), "SERVICE_UNAVAILABLE"; got != want {
		t.Fatalf("error.code=%q, want %q", got, want)
	}
	if got := rec.Header().Get("Retry-After"); got != "1" {
		t.Fatalf("Retry-After=%q, want 1", got)
	}
	rec = foundationRaw(e, "GET", "/livez", "", nil)
	if got, want := rec.Code, http.StatusOK; got != want {
		t.Fatalf("GET /livez while draining: status=%d, want %d", got, want)
	}
	rec = foundationRaw(e, "GET", pathf("/v1/apps/%d/content", e.App.ID), "Bearer "+e.Admin, nil)
	if got, want := rec.Code, http.StatusOK; got != want {
		t.Fatalf("an API route while draining: status=%d, want %d", got, want)
	}
}

func TestFoundationHealthz(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/healthz", "/livez"} {
		rec := foundationRaw(e, "GET", path, "", nil)
		if got, want := rec.Code, http.StatusOK; got != want {
			t.Fatalf("GET %s: status=%d, want %d", path, got, want)
		}
		if got, want := strings.TrimSpace(rec.Body.String()), `{"status":"ok"}`; got != want {
			t.Fatalf("GET %s: body=%s, want %s", path, got, want)
		}
		if got, want := rec.Header().Get("Content-Type"), "application/json"; got != want {
			t.Fatalf("Content-Type=%q, want %q", got, want)
		}
	}
}

func TestFoundationAuthUnauthorized(t *testing.T) {
	e := newEnv(t)
	list := pathf("/v1/apps/%d/content", e.App.ID)
	for _, tc := range []struct {
		name, auth string
	}{
		{"Missing", ""},
		{"Basic", "Basic x"},
		{"BasicWithKey", "Basic " + e.Admin},
		{"BearerAlone", "Bearer"},
		{"BearerEmptyToken", "Bearer "},
		{"BearerSpaces", "Bearer    "},
		{"KeyWithoutScheme", e.Admin},
		{"Unknown", "Bearer sk_a_000000000000000000000000000000000000000000000000"},
		{"Garbage", "Bearer \x01\x02"},
		{"KeyWithSuffix", "Bearer " + e.Admin + "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{list, "/api" + list} {
				rec := foundationRaw(e, "GET", path, tc.auth, nil)
				foundationWantError(t, rec, http.StatusUnauthorized, "UNAUTHORIZED")
			}
		})
	}
}

func TestFoundationAuthRevokedKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	k, plain, err := e.DB.CreateKey(ctx, e.App.ID, store.RoleAdmin, "soon revoked")
	if err != nil {
		t.Fatal(err)
	}
	list := pathf("/v1/apps/%d/content", e.App.ID)
	// The first request caches the key; revocation must still win at once
	// in this process because RevokeKey clears the cache.
	e.must(http.StatusOK, "GET", list, plain, nil)
	if _, err := e.DB.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	foundationWantError(t, e.do("GET", list, plain, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	foundationWantError(t, e.do("POST", list, plain, map[string]any{"name": "x"}), http.StatusUnauthorized, "UNAUTHORIZED")
	// Other keys of the app are untouched.
	e.must(http.StatusOK, "GET", list, e.Admin, nil)
}

func TestFoundationRoles(t *testing.T) {
	e := newEnv(t)
	draft := e.mustContent("draft block", store.ContentDraft)
	published := e.mustContent("published block", store.ContentPublished)
	app := e.App.ID
	body := map[string]any{"name": "new"}
	type call struct {
		method, path string
		body         any
	}
	calls := map[string]call{
		"List":        {"GET", pathf("/v1/apps/%d/content", app), nil},
		"Create":      {"POST", pathf("/v1/apps/%d/content", app), body},
		"Get":         {"GET", pathf("/v1/content/%d", draft), nil},
		"Patch":       {"PATCH", pathf("/v1/content/%d", draft), map[string]any{"name": "renamed"}},
		"PatchInApp":  {"PATCH", pathf("/v1/content/%d/%d", app, draft), map[string]any{"name": "renamed"}},
		"External":    {"GET", pathf("/v1/apps-external/%d/content/%d", app, published), nil},
		"ExternalAPI": {"GET", pathf("/api/v1/apps-external/%d/content/%d", app, published), nil},
	}
	for _, tc := range []struct {
		role, key string
		want      map[string]int
	}{
		{"admin", e.Admin, map[string]int{"List": 200, "Create": 201, "Get": 200, "Patch": 200, "PatchInApp": 200, "External": 200, "ExternalAPI": 200}},
		{"read", e.Read, map[string]int{"List": 200, "Create": 403, "Get": 200, "Patch": 403, "PatchInApp": 403, "External": 200, "ExternalAPI": 200}},
		{"client", e.Cli, map[string]int{"List": 403, "Create": 403, "Get": 403, "Patch": 403, "PatchInApp": 403, "External": 200, "ExternalAPI": 200}},
	} {
		for name, c := range calls {
			t.Run(tc.role+"/"+name, func(t *testing.T) {
				rec := e.do(c.method, c.path, tc.key, c.body)
				want := tc.want[name]
				if want == http.StatusForbidden {
					foundationWantError(t, rec, want, "FORBIDDEN")
					return
				}
				if got := rec.Code; got != want {
					t.Fatalf("%s %s: status=%d, want %d; body=%s", c.method, c.path, got, want, rec.Body.String())
				}
			})
		}
		t.Run(tc.role+"/Delete", func(t *testing.T) {
			id := e.mustContent("to delete", store.ContentDraft)
			rec := e.do("DELETE", pathf("/v1/content/%d", id), tc.key, nil)
			if tc.role != "admin" {
				foundationWantError(t, rec, http.StatusForbidden, "FORBIDDEN")
				return
			}
			if got, want := rec.Code, http.StatusOK; got != want {
				t.Fatalf("status=%d, want %d; body=%s", got, want, rec.Body.String())
			}
		})
	}
}

func TestFoundationOtherApp(t *testing.T) {
	e := newEnv(t)
	other, otherAdmin, _, _ := e.newApp("other", "enterprise", 1_000_000)
	m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", other.ID), otherAdmin,
		map[string]any{"name": "theirs", "status": "published"})
	theirs := num(m, "id")
	mine := e.mustContent("mine", store.ContentPublished)

	for _, tc := range []struct {
		name, key, method, path string
		body                    any
		status                  int
		code                    string
	}{
		{"PathAppList", e.Admin, "GET", pathf("/v1/apps/%d/content", other.ID), nil, 403, "FORBIDDEN"},
		{"PathAppCreate", e.Admin, "POST", pathf("/v1/apps/%d/content", other.ID), map[string]any{"name": "x"}, 403, "FORBIDDEN"},
		{"PathAppReadKey", e.Read, "GET", pathf("/api/v1/apps/%d/content", other.ID), nil, 403, "FORBIDDEN"},
		{"PathAppExternal", e.Cli, "GET", pathf("/v1/apps-external/%d/content/%d", other.ID, theirs), nil, 403, "FORBIDDEN"},
		{"PathAppExternalOwnBlock", e.Cli, "GET", pathf("/v1/apps-external/%d/content/%d", other.ID, mine), nil, 403, "FORBIDDEN"},
		{"PatchInOtherApp", e.Admin, "PATCH", pathf("/v1/content/%d/%d", other.ID, mine), map[string]any{"name": "x"}, 403, "FORBIDDEN"},
		{"GetResource", e.Admin, "GET", pathf("/v1/content/%d", theirs), nil, 404, "NOT_FOUND"},
		{"GetResourceAPI", e.Admin, "GET", pathf("/api/v1/content/%d", theirs), nil, 404, "NOT_FOUND"},
		{"PatchResource", e.Admin, "PATCH", pathf("/v1/content/%d", theirs), map[string]any{"name": "x"}, 404, "NOT_FOUND"},
		{"PatchResourceInOwnApp", e.Admin, "PATCH", pathf("/v1/content/%d/%d", e.App.ID, theirs), map[string]any{"name": "x"}, 404, "NOT_FOUND"},
		{"DeleteResource", e.Admin, "DELETE", pathf("/v1/content/%d", theirs), nil, 404, "NOT_FOUND"},
		{"ExternalResource", e.Cli, "GET", pathf("/v1/apps-external/%d/content/%d", e.App.ID, theirs), nil, 404, "NOT_FOUND"},
		{"Missing", e.Admin, "GET", "/v1/content/999999", nil, 404, "NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			foundationWantError(t, e.do(tc.method, tc.path, tc.key, tc.body), tc.status, tc.code)
		})
	}
	// Nothing above touched the other app's block.
	got := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", theirs), otherAdmin, nil)
	if got, want := got["name"], "theirs"; got != want {
		t.Fatalf("name=%v, want %v", got, want)
	}
}

func TestFoundationPrefixes(t *testing.T) {
	e := newEnv(t)
	for _, prefix := range []string{"/v1", "/api/v1"} {
		t.Run(strings.Trim(prefix, "/"), func(t *testing.T) {
			m := e.must(http.StatusCreated, "POST", pathf("%s/apps/%d/content", prefix, e.App.ID), e.Admin, map[string]any{"name": prefix})
			id := num(m, "id")
			e.must(http.StatusOK, "GET", pathf("%s/content/%d", prefix, id), e.Admin, nil)
			e.must(http.StatusOK, "PATCH", pathf("%s/content/%d", prefix, id), e.Admin, map[string]any{"status": "published"})
			e.must(http.StatusOK, "PATCH", pathf("%s/content/%d/%d", prefix, e.App.ID, id), e.Admin, map[string]any{"name": "again"})
			e.must(http.StatusOK, "GET", pathf("%s/apps-external/%d/content/%d", prefix, e.App.ID, id), e.Cli, nil)
			l := e.must(http.StatusOK, "GET", pathf("%s/apps/%d/content", prefix, e.App.ID), e.Read, nil)
			if _, ok := l["pagination"].(map[string]any); !ok {
				t.Fatalf("list has no pagination: %v", l)
			}
			e.must(http.StatusOK, "DELETE", pathf("%s/content/%d", prefix, id), e.Admin, nil)
			foundationWantError(t, e.do("GET", pathf("%s/content/%d", prefix, id), e.Admin, nil), 404, "NOT_FOUND")
		})
	}
}

func TestFoundationErrors(t *testing.T) {
	e := newEnv(t)
	app := e.App.ID
	create := pathf("/v1/apps/%d/content", app)
	id := e.mustContent("one", store.ContentDraft)
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
		fields             []string // details.fields keys, when the error names fields
	}{
		{"UnknownRoute", "GET", "/v1/nope", nil, 404, "NOT_FOUND", nil},
		{"UnknownRouteRoot", "GET", "/", nil, 404, "NOT_FOUND", nil},
		{"UnknownRouteNoVersion", "GET", pathf("/apps/%d/content", app), nil, 404, "NOT_FOUND", nil},
		{"TrailingSlash", "GET", create + "/", nil, 404, "NOT_FOUND", nil},
		{"WrongMethod", "PUT", create, "{}", 405, "INVALID_REQUEST", nil},
		{"WrongMethodItem", "POST", pathf("/v1/content/%d", id), "{}", 405, "INVALID_REQUEST", nil},
		{"WrongMethodHealthz", "POST", "/healthz", nil, 405, "INVALID_REQUEST", nil},
		{"MalformedJSON", "POST", create, `{"name":`, 400, "INVALID_REQUEST", nil},
		{"TrailingGarbage", "POST", create, `{"name":"a"} x`, 400, "INVALID_REQUEST", nil},
		{"NotObjectArray", "POST", create, `[{"name":"a"}]`, 400, "INVALID_REQUEST", nil},
		{"NotObjectString", "POST", create, `"name"`, 400, "INVALID_REQUEST", nil},
		{"NotObjectNull", "POST", create, `null`, 400, "INVALID_REQUEST", nil},
		{"NotObjectNumber", "POST", create, `5`, 400, "INVALID_REQUEST", nil},
		{"EmptyBody", "POST", create, "", 400, "INVALID_REQUEST", nil},
		{"BlankBody", "POST", create, " \n\t", 400, "INVALID_REQUEST", nil},
		{"NoBodyPatch", "PATCH", pathf("/v1/content/%d", id), "", 400, "INVALID_REQUEST", nil},
		{"WrongTypeName", "POST", create, `{"name":5}`, 400, "INVALID_REQUEST", []string{"name"}},
		{"WrongTypeStatus", "POST", create, `{"name":"a","status":true}`, 400, "INVALID_REQUEST", []string{"status"}},
		{"WrongTypeItems", "POST", create, `{"name":"a","items":{}}`, 400, "INVALID_REQUEST", []string{"items"}},
		{"WrongTypeNamePatch", "PATCH", pathf("/v1/content/%d", id), `{"name":[]}`, 400, "INVALID_REQUEST", []string{"name"}},
		{"NonNumericID", "GET", "/v1/content/abc", nil, 400, "INVALID_REQUEST", nil},
		{"NonNumericAppID", "GET", "/v1/apps/abc/content", nil, 400, "INVALID_REQUEST", nil},
		{"NonNumericAppIDPost", "POST", "/v1/apps/abc/content", `{"name":"a"}`, 400, "INVALID_REQUEST", nil},
		{"NonNumericPatchInApp", "PATCH", pathf("/v1/content/%d/abc", app), `{"name":"a"}`, 400, "INVALID_REQUEST", nil},
		{"NonNumericExternal", "GET", pathf("/v1/apps-external/%d/content/x", app), nil, 400, "INVALID_REQUEST", nil},
		{"ZeroID", "GET", "/v1/content/0", nil, 400, "INVALID_REQUEST", nil},
		{"NegativeID", "GET", "/v1/content/-1", nil, 400, "INVALID_REQUEST", nil},
		{"OverflowID", "GET", "/v1/content/99999999999999999999", nil, 400, "INVALID_REQUEST", nil},
		{"FractionalID", "DELETE", "/v1/content/1.5", nil, 400, "INVALID_REQUEST", nil},
		{"ZeroAppID", "GET", "/v1/apps/0/content", nil, 400, "INVALID_REQUEST", nil},
		{"NegativeAppID", "GET", "/v1/apps/-3/content", nil, 400, "INVALID_REQUEST", nil},
		{"LimitZero", "GET", create + "?limit=0", nil, 400, "INVALID_REQUEST", []string{"limit"}},
		{"LimitNegative", "GET", create + "?limit=-5", nil, 400, "INVALID_REQUEST", []string{"limit"}},
		{"LimitAbc", "GET", create + "?limit=abc", nil, 400, "INVALID_REQUEST", []string{"limit"}},
		{"PageZero", "GET", create + "?page=0", nil, 400, "INVALID_REQUEST", []string{"page"}},
		{"PageAbc", "GET", create + "?page=abc", nil, 400, "INVALID_REQUEST", []string{"page"}},
		{"UnknownStatus", "GET", create + "?status=live", nil, 400, "INVALID_REQUEST", []string{"status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.method, tc.path, e.Admin, tc.body)
			foundationWantError(t, rec, tc.status, tc.code)
			if tc.fields == nil {
				return
			}
			fields := fieldsOf(t, rec)
			if got, want := len(fields), len(tc.fields); got != want {
				t.Fatalf("details.fields=%v, want keys %v", fields, tc.fields)
			}
			for _, f := range tc.fields {
				if reason, _ := fields[f].(string); reason == "" {
					t.Fatalf("details.fields=%v, want a reason for %q", fields, f)
				}
			}
		})
	}
}

func TestFoundationBodyLimit(t *testing.T) {
	e := newEnv(t)
	create := pathf("/v1/apps/%d/content", e.App.ID)
	// A valid object padded with whitespace to exactly n bytes.
	padded := func(n int) string {
		head, tail := `{"name":"big"`, `}`
		return head + strings.Repeat(" ", n-len(head)-len(tail)) + tail
	}
	for _, tc := range []struct {
		name   string
		body   string
		status int
	}{
		{"AtLimit", padded(MaxBodyBytes), http.StatusCreated},
		{"OneOver", padded(MaxBodyBytes + 1), http.StatusRequestEntityTooLarge},
		{"FarOver", `{"name":"` + strings.Repeat("a", 3*MaxBodyBytes) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", create, e.Admin, tc.body)
			if tc.status == http.StatusCreated {
				if got, want := rec.Code, tc.status; got != want {
					t.Fatalf("status=%d, want %d; body=%.200s", got, want, rec.Body.String())
				}
				return
			}
			foundationWantError(t, rec, tc.status, "INVALID_REQUEST")
		})
	}
}

// foundationPage is a decoded list answer.
type foundationPage struct {
	Data []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	} `json:"data"`
	Pagination struct {
		HasMore    *bool   `json:"hasMore"`
		NextCursor *string `json:"nextCursor"`
		Total      *int    `json:"total"`
		NextPage   *int    `json:"nextPage"`
	} `json:"pagination"`
}

func foundationList(e *testEnv, path, key string) foundationPage {
	e.t.Helper()
	rec := e.do("GET", path, key, nil)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("GET %s: status=%d; body=%s", path, rec.Code, rec.Body.String())
	}
	var p foundationPage
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		e.t.Fatalf("GET %s: %v; body=%s", path, err, rec.Body.String())
	}
	if p.Data == nil || p.Pagination.HasMore == nil || p.Pagination.Total == nil {
		e.t.Fatalf("GET %s: incomplete list body %s", path, rec.Body.String())
	}
	if !strings.Contains(rec.Body.String(), `"nextCursor":`) || !strings.Contains(rec.Body.String(), `"nextPage":`) {
		e.t.Fatalf("GET %s: pagination lacks nextCursor or nextPage: %s", path, rec.Body.String())
	}
	return p
}

func TestFoundationPagination(t *testing.T) {
	e := newEnv(t)
	list := pathf("/v1/apps/%d/content", e.App.ID)
	var ids []int64
	for _, n := range []string{"a", "b", "c"} {
		ids = append(ids, e.mustContent(n, store.ContentDraft))
	}

	p := foundationList(e, list+"?limit=2", e.Admin)
	if got, want := len(p.Data), 2; got != want {
		t.Fatalf("len(data)=%d, want %d", got, want)
	}
	if got, want := p.Data[0].ID, ids[2]; got != want {
		t.Fatalf("first id=%d, want %d (newest first)", got, want)
	}
	if !*p.Pagination.HasMore || p.Pagination.NextCursor == nil || *p.Pagination.NextCursor != "2" ||
		p.Pagination.NextPage == nil || *p.Pagination.NextPage != 2 || *p.Pagination.Total != 3 {
		t.Fatalf("pagination=%+v, want hasMore, nextCursor \"2\", nextPage 2, total 3", p.Pagination)
	}

	p = foundationList(e, list+"?limit=2&page=2", e.Admin)
	if got, want := len(p.Data), 1; got != want {
		t.Fatalf("page 2: len(data)=%d, want %d", got, want)
	}
	if got, want := p.Data[0].ID, ids[0]; got != want {
		t.Fatalf("page 2: id=%d, want %d", got, want)
	}
	if *p.Pagination.HasMore || p.Pagination.NextCursor != nil || p.Pagination.NextPage != nil || *p.Pagination.Total != 3 {
		t.Fatalf("page 2: pagination=%+v, want the last page", p.Pagination)
	}

	p = foundationList(e, list+"?page=9", e.Admin)
	if got, want := len(p.Data), 0; got != want || *p.Pagination.HasMore || *p.Pagination.Total != 3 {
		t.Fatalf("past the end: len(data)=%d, pagination=%+v", got, p.Pagination)
	}

	// Clamping needs more blocks than the maximum page.
	ctx := context.Background()
	for i := range 100 {
		name := "bulk " + strconv.Itoa(i)
		if _, err := e.DB.CreateContent(ctx, e.App.ID, store.ContentInput{Name: &name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"", "?limit=500"} {
		p = foundationList(e, list+q, e.Read)
		want := 100
		if q == "" {
			want = 20
		}
		if got := len(p.Data); got != want {
			t.Fatalf("GET %s: len(data)=%d, want %d", q, got, want)
		}
		if !*p.Pagination.HasMore || *p.Pagination.NextPage != 2 || *p.Pagination.Total != 103 {
			t.Fatalf("GET %s: pagination=%+v", q, p.Pagination)
		}
	}
}

func TestFoundationRateLimit(t *testing.T) {
	e := newEnv(t)
	app, admin, read, client := e.newApp("free app", "free", 0)
	// 10 s into a minute: the window cannot roll over mid-test.
	now := time.Date(2030, 1, 2, 3, 4, 10, 0, time.UTC)
	e.Srv.Now = func() time.Time { return now }
	ctx := context.Background()
	name, status := "live", store.ContentPublished
	block, err := e.DB.CreateContent(ctx, app.ID, store.ContentInput{Name: &name, Status: &status})
	if err != nil {
		t.Fatal(err)
	}
	list := pathf("/v1/apps/%d/content", app.ID)
	external := pathf("/v1/apps-external/%d/content/%d", app.ID, block.ID)

	headers := func(rec *httptest.ResponseRecorder) (limit, remaining, reset int) {
		t.Helper()
		var err error
		get := func(h string) int {
			if err != nil {
				return 0
			}
			var n int
			n, err = strconv.Atoi(rec.Header().Get(h))
			return n
		}
		limit, remaining, reset = get("X-RateLimit-Limit"), get("X-RateLimit-Remaining"), get("X-RateLimit-Reset")
		if err != nil {
			t.Fatalf("rate-limit headers missing or not numbers: %v (%v)", rec.Header(), err)
		}
		return limit, remaining, reset
	}

	for i := 1; i <= 60; i++ {
		// Admin and read keys share the management budget.
		key := admin
		if i%2 == 0 {
			key = read
		}
		rec := e.do("GET", list, key, nil)
		if got, want := rec.Code, http.StatusOK; got != want {
			t.Fatalf("request %d: status=%d, want %d; body=%s", i, got, want, rec.Body.String())
		}
		limit, remaining, reset := headers(rec)
		if limit != 60 || remaining != 60-i || reset != 50 {
			t.Fatalf("request %d: limit=%d remaining=%d reset=%d, want 60, %d, 50", i, limit, remaining, reset, 60-i)
		}
	}
	for _, key := range []string{admin, read} {
		rec := e.do("GET", list, key, nil)
		foundationWantError(t, rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
		if got, want := rec.Header().Get("Retry-After"), "50"; got != want {
			t.Fatalf("Retry-After=%q, want %q", got, want)
		}
		if limit, remaining, reset := headers(rec); limit != 60 || remaining != 0 || reset != 50 {
			t.Fatalf("429: limit=%d remaining=%d reset=%d, want 60, 0, 50", limit, remaining, reset)
		}
	}

	// SDK traffic has its own, 100 times larger budget, untouched by the
	// exhausted management budget.
	for i := 1; i <= 3; i++ {
		rec := e.do("GET", external, client, nil)
		if got, want := rec.Code, http.StatusOK; got != want {
			t.Fatalf("client request %d: status=%d, want %d; body=%s", i, got, want, rec.Body.String())
		}
		if limit, remaining, _ := headers(rec); limit != 6000 || remaining != 6000-i {
			t.Fatalf("client request %d: limit=%d remaining=%d, want 6000, %d", i, limit, remaining, 6000-i)
		}
	}

	// Another app's budget is its own.
	e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/content", e.App.ID), e.Admin, nil)

	// The reset counts down within the window and never leaves 1..60.
	for _, tc := range []struct {
		sec, reset int
	}{{59, 1}, {0, 60}, {30, 30}} {
		now = time.Date(2030, 1, 2, 3, 5, tc.sec, 0, time.UTC)
		if tc.sec == 0 {
			now = time.Date(2030, 1, 2, 3, 6, 0, 0, time.UTC)
		}
		rec := e.do("GET", list, admin, nil)
		if got, want := rec.Code, http.StatusOK; got != want {
			t.Fatalf("second %d: status=%d, want %d", tc.sec, got, want)
		}
		if _, _, reset := headers(rec); reset != tc.reset {
			t.Fatalf("second %d: reset=%d, want %d", tc.sec, reset, tc.reset)
		}
	}
}

func TestFoundationRateLimitClientBudget(t *testing.T) {
	e := newEnv(t)
	app, admin, _, client := e.newApp("free app", "free", 0)
	now := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	e.Srv.Now = func() time.Time { return now }
	name, status := "live", store.ContentPublished
	block, err := e.DB.CreateContent(context.Background(), app.ID, store.ContentInput{Name: &name, Status: &status})
	if err != nil {
		t.Fatal(err)
	}
	external := pathf("/v1/apps-external/%d/content/%d", app.ID, block.ID)
	for i := 1; i <= 6000; i++ {
		rec := e.do("GET", external, client, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("client request %d: status=%d; body=%s", i, rec.Code, rec.Body.String())
		}
	}
	rec := e.do("GET", external, client, nil)
	foundationWantError(t, rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if got, want := rec.Header().Get("Retry-After"), "60"; got != want {
		t.Fatalf("Retry-After=%q, want %q", got, want)
	}
	// The management budget is untouched by the SDK traffic.
	rec = e.do("GET", pathf("/v1/apps/%d/content", app.ID), admin, nil)
	if got, want := rec.Header().Get("X-RateLimit-Remaining"), "59"; rec.Code != http.StatusOK || got != want {
		t.Fatalf("admin after client burst: status=%d remaining=%q, want 200, %q", rec.Code, got, want)
	}
	// A new window frees the client budget.
	now = now.Add(time.Minute)
	if rec := e.do("GET", external, client, nil); rec.Code != http.StatusOK {
		t.Fatalf("next window: status=%d; body=%s", rec.Code, rec.Body.String())
	}
}
