package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	audienceDefDE     = `{"logic":"AND","rules":[{"field":"country","operator":"equals","value":"DE"}]}`
	audienceDefAdults = `{"logic":"AND","rules":[{"field":"age","operator":"greater_than_or_equal","value":18}]}`
)

// audienceCreate creates an audience with a raw JSON definition and returns
// the answer.
func audienceCreate(e *testEnv, name, def string) map[string]any {
	e.t.Helper()
	body := fmt.Sprintf(`{"name":%q,"definition":%s}`, name, def)
	return e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/audiences", e.App.ID), e.Admin, body)
}

// audienceIdentify gives a user attributes through the SDK route.
func audienceIdentify(e *testEnv, userID string, attrs map[string]any) map[string]any {
	e.t.Helper()
	return e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/identify", e.App.ID), e.Cli,
		map[string]any{"userId": userID, "attributes": attrs})
}

// audienceWantFields fails unless rec is a 400 whose details.fields names
// exactly want.
func audienceWantFields(t testing.TB, rec *httptest.ResponseRecorder, want ...string) {
	t.Helper()
	if got, want := rec.Code, http.StatusBadRequest; got != want {
		t.Fatalf("status=%d, want %d; body=%s", got, want, rec.Body.String())
	}
	if got, want := errCode(t, rec), "INVALID_REQUEST"; got != want {
		t.Fatalf("code=%s, want %s", got, want)
	}
	fields := fieldsOf(t, rec)
	for _, f := range want {
		if _, ok := fields[f]; !ok {
			t.Fatalf("details.fields=%v, want %s among them", fields, f)
		}
	}
	if got, want := len(fields), len(want); got != want {
		t.Fatalf("details.fields=%v, want exactly %v", fields, want)
	}
}

func audienceWantError(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if got, want := rec.Code, status; got != want {
		t.Fatalf("status=%d, want %d; body=%s", got, want, rec.Body.String())
	}
	if got, want := errCode(t, rec), code; got != want {
		t.Fatalf("code=%s, want %s", got, want)
	}
}

func TestAudienceCreateAndGet(t *testing.T) {
	e := newEnv(t)
	audienceIdentify(e, "anna", map[string]any{"country": "DE"})
	audienceIdentify(e, "bob", map[string]any{"country": "FR"})
	def := `{ "logic": "AND",
	  "rules": [ {"field": "country", "operator": "equals", "value": "DE"} ] }`
	body := `{"name":" Germans ","description":"people in Germany","definition":` + def + `}`
	a := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/audiences", e.App.ID), e.Admin, body)

	for _, k := range []string{"id", "appId", "name", "description", "status", "customerCount", "lastCalculatedAt", "definition", "createdAt", "updatedAt"} {
		if _, ok := a[k]; !ok {
			t.Fatalf("answer lacks %s: %v", k, a)
		}
	}
	if got, want := a["name"], "Germans"; got != want {
		t.Fatalf("name=%v, want %v", got, want)
	}
	if got, want := a["status"], "active"; got != want {
		t.Fatalf("status=%v, want %v", got, want)
	}
	if got, want := num(a, "appId"), e.App.ID; got != want {
		t.Fatalf("appId=%d, want %d", got, want)
	}
	// The count is fresh in the create answer itself.
	if got, want := num(a, "customerCount"), int64(1); got != want {
		t.Fatalf("customerCount=%d, want %d", got, want)
	}
	if s, _ := a["lastCalculatedAt"].(string); !strings.HasSuffix(s, "Z") || len(s) != len("2026-01-01T00:00:00.000Z") {
		t.Fatalf("lastCalculatedAt=%v, want an RFC 3339 UTC time with milliseconds", a["lastCalculatedAt"])
	}
	rec := e.do("GET", pathf("/v1/audiences/%d", num(a, "id")), e.Admin, nil)
	if got, want := rec.Code, http.StatusOK; got != want {
		t.Fatalf("GET status=%d, want %d", got, want)
	}
	if !strings.Contains(rec.Body.String(), `"definition":{"logic":"AND","rules":[{"field":"country","operator":"equals","value":"DE"}]}`) {
		t.Fatalf("definition not stored compacted as given: %s", rec.Body.String())
	}
	got := e.must(http.StatusOK, "GET", pathf("/api/v1/audiences/%d", num(a, "id")), e.Read, nil)
	for k, v := range a {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Fatalf("GET %s=%v, create answered %v", k, got[k], v)
		}
	}

	t.Run("ArchivedOnCreate", func(t *testing.T) {
		a := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/audiences", e.App.ID), e.Admin,
			`{"name":"old","status":"archived","definition":`+audienceDefDE+`}`)
		if got, want := a["status"], "archived"; got != want {
			t.Fatalf("status=%v, want %v", got, want)
		}
	})
}

func TestAudienceCreateValidation(t *testing.T) {
	e := newEnv(t)
	path := pathf("/v1/apps/%d/audiences", e.App.ID)
	long := strings.Repeat("x", 201)
	for _, tc := range []struct {
		name   string
		body   string
		fields []string
	}{
		{"NameMissing", `{"definition":` + audienceDefDE + `}`, []string{"name"}},
		{"NameBlank", `{"name":"  ","definition":` + audienceDefDE + `}`, []string{"name"}},
		{"NameTooLong", `{"name":"` + long + `","definition":` + audienceDefDE + `}`, []string{"name"}},
		{"NameNotString", `{"name":5,"definition":` + audienceDefDE + `}`, []string{"name"}},
		{"StatusUnknown", `{"name":"a","status":"paused","definition":` + audienceDefDE + `}`, []string{"status"}},
		{"DefinitionMissing", `{"name":"a"}`, []string{"definition"}},
		{"DefinitionNull", `{"name":"a","definition":null}`, []string{"definition"}},
		{"DefinitionNotObject", `{"name":"a","definition":[1]}`, []string{"definition"}},
		{"RulesMissing", `{"name":"a","definition":{"logic":"AND"}}`, []string{"definition.rules"}},
		{"RulesEmpty", `{"name":"a","definition":{"rules":[]}}`, []string{"definition.rules"}},
		{"ManyBadRulesAtOnce", `{"name":"","status":"x","definition":{"logic":"XOR","rules":[
			{"field":"country","operator":"sounds_like","value":"DE"},
			{"field":"age","operator":"greater_than"},
			{"ruleType":"event","eventId":"login","operator":"performed_within","timeWindow":{"value":7,"unit":"fortnights"}},
			{"ruleType":"event","eventId":"buy","operator":"performed_count","count":-1,"comparison":"at_least"},
			{"ruleType":"event","eventId":"buy","operator":"performed_count","count":2,"comparison":"more_than"},
			{"ruleType":"event","eventId":"","operator":"has_performed"},
			{"ruleType":"segment"},
			{"field":"plan","operator":"equals","value":"pro","eventId":"x"}]}}`,
			[]string{"name", "status", "definition.logic",
				"definition.rules[0].operator",
				"definition.rules[1].value",
				"definition.rules[2].timeWindow.unit",
				"definition.rules[3].count",
				"definition.rules[4].comparison",
				"definition.rules[5].eventId",
				"definition.rules[6].ruleType",
				"definition.rules[7].eventId"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			audienceWantFields(t, e.do("POST", path, e.Admin, tc.body), tc.fields...)
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"MalformedJSON", `{"name":`},
		{"NotAnObject", `[]`},
		{"Empty", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			audienceWantError(t, e.do("POST", path, e.Admin, tc.body), http.StatusBadRequest, "INVALID_REQUEST")
		})
	}
	t.Run("NothingStored", func(t *testing.T) {
		list := e.must(http.StatusOK, "GET", path, e.Admin, nil)
		if got := len(list["data"].([]any)); got != 0 {
			t.Fatalf("%d audiences stored by refused requests", got)
		}
	})
}

func TestAudienceList(t *testing.T) {
	e := newEnv(t)
	path := pathf("/v1/apps/%d/audiences", e.App.ID)
	var ids []int64
	for i := range 3 {
		ids = append(ids, num(audienceCreate(e, fmt.Sprintf("a%d", i), audienceDefDE), "id"))
	}
	e.must(http.StatusOK, "PATCH", pathf("/v1/audiences/%d", ids[1]), e.Admin, map[string]any{"status": "archived"})

	idsOf := func(m map[string]any) []int64 {
		var out []int64
		for _, d := range m["data"].([]any) {
			out = append(out, num(d.(map[string]any), "id"))
		}
		return out
	}
	for _, tc := range []struct {
		name, query string
		want        []int64
		hasMore     bool
		total       int64
	}{
		{"All", "", []int64{ids[2], ids[1], ids[0]}, false, 3},
		{"Active", "?status=active", []int64{ids[2], ids[0]}, false, 2},
		{"Archived", "?status=archived", []int64{ids[1]}, false, 1},
		{"FirstPage", "?limit=2", []int64{ids[2], ids[1]}, true, 3},
		{"SecondPage", "?limit=2&page=2", []int64{ids[0]}, false, 3},
		{"PastTheEnd", "?page=5", nil, false, 3},
		{"LimitClamped", "?limit=1000", []int64{ids[2], ids[1], ids[0]}, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := e.must(http.StatusOK, "GET", path+tc.query, e.Read, nil)
			if got, want := fmt.Sprint(idsOf(m)), fmt.Sprint(tc.want); got != want {
				t.Fatalf("ids=%s, want %s", got, want)
			}
			p := m["pagination"].(map[string]any)
			if got, want := p["hasMore"], tc.hasMore; got != want {
				t.Fatalf("hasMore=%v, want %v", got, want)
			}
			if got, want := num(p, "total"), tc.total; got != want {
				t.Fatalf("total=%d, want %d", got, want)
			}
			if tc.hasMore && (p["nextCursor"] != "2" || num(p, "nextPage") != 2) {
				t.Fatalf("pagination=%v, want next page 2", p)
			}
		})
	}
	for _, tc := range []struct{ name, query, field string }{
		{"BadStatus", "?status=deleted", "status"},
		{"LimitZero", "?limit=0", "limit"},
		{"LimitText", "?limit=ten", "limit"},
		{"PageZero", "?page=0", "page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			audienceWantFields(t, e.do("GET", path+tc.query, e.Admin, nil), tc.field)
		})
	}
}

func TestAudienceUpdate(t *testing.T) {
	e := newEnv(t)
	audienceIdentify(e, "kid", map[string]any{"country": "DE", "age": 9})
	audienceIdentify(e, "adult", map[string]any{"country": "FR", "age": 40})
	audienceIdentify(e, "senior", map[string]any{"country": "DE", "age": 70})
	a := audienceCreate(e, "Germans", audienceDefDE)
	id := num(a, "id")
	path := pathf("/v1/audiences/%d", id)
	if got, want := num(a, "customerCount"), int64(2); got != want {
		t.Fatalf("customerCount=%d, want %d", got, want)
	}

	t.Run("NameOnly", func(t *testing.T) {
		u := e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"name": "Deutsche"})
		if got, want := u["name"], "Deutsche"; got != want {
			t.Fatalf("name=%v, want %v", got, want)
		}
		if got, want := fmt.Sprint(u["definition"]), fmt.Sprint(a["definition"]); got != want {
			t.Fatalf("definition=%s, want it untouched %s", got, want)
		}
		if u["updatedAt"] == a["updatedAt"] {
			t.Fatalf("updatedAt did not move: %v", u["updatedAt"])
		}
	})
	t.Run("DefinitionRecounts", func(t *testing.T) {
		u := e.must(http.StatusOK, "PATCH", path, e.Admin, `{"definition":`+audienceDefAdults+`,"description":"grown-ups"}`)
		if got, want := num(u, "customerCount"), int64(2); got != want {
			t.Fatalf("customerCount=%d, want %d", got, want)
		}
		if got, want := u["description"], "grown-ups"; got != want {
			t.Fatalf("description=%v, want %v", got, want)
		}
		audienceIdentify(e, "teen", map[string]any{"age": 19})
		audienceIdentify(e, "senior", map[string]any{"age": nil})
		u = e.must(http.StatusOK, "PATCH", path, e.Admin, `{"definition":{"logic":"OR","rules":[{"field":"age","operator":"greater_than_or_equal","value":18},{"field":"age","operator":"not_exists"}]}}`)
		if got, want := num(u, "customerCount"), int64(3); got != want {
			t.Fatalf("customerCount=%d, want %d (adult, teen, senior)", got, want)
		}
	})
	t.Run("ArchiveAndBack", func(t *testing.T) {
		for _, st := range []string{"archived", "archived", "active"} {
			u := e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"status": st})
			if got, want := u["status"], st; got != want {
				t.Fatalf("status=%v, want %v", got, want)
			}
		}
	})
	t.Run("Errors", func(t *testing.T) {
		audienceWantFields(t, e.do("PATCH", path, e.Admin, `{"name":"","status":"gone","definition":{"rules":[{"field":"a","operator":"in","value":[]}]}}`),
			"name", "status", "definition.rules[0].value")
		audienceWantFields(t, e.do("PATCH", path, e.Admin, `{"definition":null}`), "definition")
		audienceWantFields(t, e.do("PATCH", path, e.Admin, `{"description":7}`), "description")
		audienceWantError(t, e.do("PATCH", "/v1/audiences/9999", e.Admin, `{"name":"x"}`), http.StatusNotFound, "NOT_FOUND")
		audienceWantError(t, e.do("PATCH", "/v1/audiences/abc", e.Admin, `{"name":"x"}`), http.StatusBadRequest, "INVALID_REQUEST")
		audienceWantError(t, e.do("PATCH", path, e.Admin, `{"name":`), http.StatusBadRequest, "INVALID_REQUEST")
		got := e.must(http.StatusOK, "GET", path, e.Admin, nil)
		if got["name"] != "Deutsche" || got["status"] != "active" {
			t.Fatalf("refused updates changed the audience: %v", got)
		}
	})
}

func TestAudienceDelete(t *testing.T) {
	e := newEnv(t)
	id := num(audienceCreate(e, "gone soon", audienceDefDE), "id")
	path := pathf("/v1/audiences/%d", id)
	audienceWantError(t, e.do("DELETE", path, e.Read, nil), http.StatusForbidden, "FORBIDDEN")
	m := e.must(http.StatusOK, "DELETE", path, e.Admin, nil)
	if m["success"] != true || num(m, "id") != id {
		t.Fatalf("answer=%v, want success and id %d", m, id)
	}
	audienceWantError(t, e.do("GET", path, e.Admin, nil), http.StatusNotFound, "NOT_FOUND")
	audienceWantError(t, e.do("DELETE", path, e.Admin, nil), http.StatusNotFound, "NOT_FOUND")
	audienceWantError(t, e.do("DELETE", "/v1/audiences/0", e.Admin, nil), http.StatusBadRequest, "INVALID_REQUEST")
}

func TestAudienceOtherApp(t *testing.T) {
	e := newEnv(t)
	_, otherAdmin, _, otherCli := e.newApp("other", "enterprise", 1_000_000)
	id := num(audienceCreate(e, "mine", audienceDefDE), "id")
	audienceIdentify(e, "anna", map[string]any{"country": "DE"})
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", pathf("/v1/audiences/%d", id), nil},
		{"PATCH", pathf("/v1/audiences/%d", id), map[string]any{"name": "theirs"}},
		{"DELETE", pathf("/v1/audiences/%d", id), nil},
		{"GET", pathf("/v1/audiences/%d/members", id), nil},
		{"POST", pathf("/v1/audiences/%d/check", id), map[string]any{"userId": "anna"}},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			audienceWantError(t, e.do(tc.method, tc.path, otherAdmin, tc.body), http.StatusNotFound, "NOT_FOUND")
		})
	}
	for _, tc := range []struct {
		method, path, key string
		body              any
	}{
		{"GET", pathf("/v1/apps/%d/audiences", e.App.ID), otherAdmin, nil},
		{"POST", pathf("/v1/apps/%d/audiences", e.App.ID), otherAdmin, `{"name":"x","definition":` + audienceDefDE + `}`},
		{"GET", pathf("/v1/apps/%d/users/anna", e.App.ID), otherAdmin, nil},
		{"PUT", pathf("/v1/apps/%d/users/anna", e.App.ID), otherAdmin, map[string]any{"attributes": map[string]any{}}},
		{"POST", pathf("/v1/apps-external/%d/identify", e.App.ID), otherCli, map[string]any{"userId": "anna"}},
	} {
		t.Run("Forbidden"+tc.method+tc.path, func(t *testing.T) {
			audienceWantError(t, e.do(tc.method, tc.path, tc.key, tc.body), http.StatusForbidden, "FORBIDDEN")
		})
	}
}

func TestAudienceAccess(t *testing.T) {
	e := newEnv(t)
	id := num(audienceCreate(e, "a", audienceDefDE), "id")
	app := e.App.ID
	for _, tc := range []struct {
		name, method, path, key string
		body                    any
		status                  int
	}{
		{"NoKey", "GET", pathf("/v1/audiences/%d", id), "", nil, http.StatusUnauthorized},
		{"BadKey", "GET", pathf("/v1/audiences/%d", id), "sk_a_nope", nil, http.StatusUnauthorized},
		{"ReadGets", "GET", pathf("/v1/audiences/%d", id), e.Read, nil, http.StatusOK},
		{"ReadListsMembers", "GET", pathf("/v1/audiences/%d/members", id), e.Read, nil, http.StatusOK},
		{"ReadCannotCreate", "POST", pathf("/v1/apps/%d/audiences", app), e.Read, `{"name":"x","definition":` + audienceDefDE + `}`, http.StatusForbidden},
		{"ReadCannotCheck", "POST", pathf("/v1/audiences/%d/check", id), e.Read, map[string]any{"userId": "u"}, http.StatusForbidden},
		{"ReadCannotPutUser", "PUT", pathf("/v1/apps/%d/users/u", app), e.Read, map[string]any{}, http.StatusForbidden},
		{"ReadCannotIdentify", "POST", pathf("/v1/apps-external/%d/identify", app), e.Read, map[string]any{"userId": "u"}, http.StatusForbidden},
		{"ClientCannotList", "GET", pathf("/v1/apps/%d/audiences", app), e.Cli, nil, http.StatusForbidden},
		{"ClientCannotCheck", "POST", pathf("/v1/audiences/%d/check", id), e.Cli, map[string]any{"userId": "u"}, http.StatusForbidden},
		{"ClientCannotPutUser", "PUT", pathf("/v1/apps/%d/users/u", app), e.Cli, map[string]any{}, http.StatusForbidden},
		{"ClientIdentifies", "POST", pathf("/v1/apps-external/%d/identify", app), e.Cli, map[string]any{"userId": "u"}, http.StatusOK},
		{"AdminIdentifies", "POST", pathf("/api/v1/apps-external/%d/identify", app), e.Admin, map[string]any{"userId": "u"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.method, tc.path, tc.key, tc.body)
			if got, want := rec.Code, tc.status; got != want {
				t.Fatalf("status=%d, want %d; body=%s", got, want, rec.Body.String())
			}
		})
	}
}

func TestAudienceUsers(t *testing.T) {
	e := newEnv(t)
	path := pathf("/v1/apps/%d/users/", e.App.ID)

	t.Run("PutCreatesAndMerges", func(t *testing.T) {
		p := e.must(http.StatusOK, "PUT", path+"anna", e.Admin, `{"attributes":{"country":"DE","age":30,"tags":["a","b"],"prefs":{"x":1}}}`)
		if got, want := p["userId"], "anna"; got != want {
			t.Fatalf("userId=%v, want %v", got, want)
		}
		if p["firstSeen"] == nil || p["firstSeen"] != p["lastSeen"] {
			t.Fatalf("firstSeen=%v lastSeen=%v, want equal times", p["firstSeen"], p["lastSeen"])
		}
		p = e.must(http.StatusOK, "PUT", path+"anna", e.Admin, `{"attributes":{"age":31,"country":null,"prefs":{"y":2},"plan":"pro"}}`)
		got, _ := json.Marshal(p["attributes"])
		if want := `{"age":31,"plan":"pro","prefs":{"y":2},"tags":["a","b"]}`; string(got) != want {
			t.Fatalf("attributes=%s, want %s", got, want)
		}
		g := e.must(http.StatusOK, "GET", path+"anna", e.Read, nil)
		if fmt.Sprint(g) != fmt.Sprint(p) {
			t.Fatalf("GET=%v, PUT answered %v", g, p)
		}
	})
	t.Run("PutWithoutAttributes", func(t *testing.T) {
		p := e.must(http.StatusOK, "PUT", path+"bare", e.Admin, `{}`)
		if got, _ := json.Marshal(p["attributes"]); string(got) != `{}` {
			t.Fatalf("attributes=%s, want {}", got)
		}
	})
	t.Run("UnicodeUserID", func(t *testing.T) {
		id := strings.Repeat("ü", 256)
		p := e.must(http.StatusOK, "PUT", path+id, e.Admin, `{"attributes":{"a":1}}`)
		if got, want := p["userId"], id; got != want {
			t.Fatalf("userId=%v, want %v", got, want)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		many := map[string]any{}
		for i := range 101 {
			many[fmt.Sprintf("k%d", i)] = i
		}
		for _, tc := range []struct {
			name, user string
			body       any
			field      string
		}{
			{"AttributesNotObject", "anna", `{"attributes":[1,2]}`, "attributes"},
			{"AttributesString", "anna", `{"attributes":"x"}`, "attributes"},
			{"TooManyAttributes", "anna", map[string]any{"attributes": many}, "attributes"},
			{"TooLarge", "anna", map[string]any{"attributes": map[string]any{"blob": strings.Repeat("x", 70_000)}}, "attributes"},
			{"UserIDTooLong", strings.Repeat("u", 257), `{"attributes":{}}`, "userId"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				audienceWantFields(t, e.do("PUT", path+tc.user, e.Admin, tc.body), tc.field)
			})
		}
		audienceWantError(t, e.do("PUT", path+"anna", e.Admin, ``), http.StatusBadRequest, "INVALID_REQUEST")
		audienceWantError(t, e.do("GET", path+"nobody", e.Admin, nil), http.StatusNotFound, "NOT_FOUND")
		audienceWantError(t, e.do("GET", pathf("/v1/apps/abc/users/anna"), e.Admin, nil), http.StatusBadRequest, "INVALID_REQUEST")
	})
}

func TestAudienceIdentify(t *testing.T) {
	e := newEnv(t)
	path := pathf("/v1/apps-external/%d/identify", e.App.ID)
	p := audienceIdentify(e, "sdk-user", map[string]any{"plan": "free"})
	if got, want := p["userId"], "sdk-user"; got != want {
		t.Fatalf("userId=%v, want %v", got, want)
	}
	p = audienceIdentify(e, "sdk-user", map[string]any{"plan": "pro", "seats": 3})
	if got, _ := json.Marshal(p["attributes"]); string(got) != `{"plan":"pro","seats":3}` {
		t.Fatalf("attributes=%s", got)
	}
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"UserIDMissing", `{"attributes":{"a":1}}`, "userId"},
		{"UserIDEmpty", `{"userId":""}`, "userId"},
		{"UserIDNumber", `{"userId":42}`, "userId"},
		{"AttributesNotObject", `{"userId":"u","attributes":true}`, "attributes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			audienceWantFields(t, e.do("POST", path, e.Cli, tc.body), tc.field)
		})
	}
}

func TestAudienceCountsFollowProfiles(t *testing.T) {
	e := newEnv(t)
	a := audienceCreate(e, "Germans", audienceDefDE)
	id := num(a, "id")
	if got, want := num(a, "customerCount"), int64(0); got != want {
		t.Fatalf("customerCount=%d, want %d", got, want)
	}
	for i, c := range []string{"DE", "DE", "FR", "DE"} {
		audienceIdentify(e, fmt.Sprintf("u%d", i), map[string]any{"country": c})
	}
	// Identify does not recount by itself; an update (or the scheduler) does.
	if got, want := num(e.must(http.StatusOK, "GET", pathf("/v1/audiences/%d", id), e.Admin, nil), "customerCount"), int64(0); got != want {
		t.Fatalf("customerCount=%d before a recount, want %d", got, want)
	}
	u := e.must(http.StatusOK, "PATCH", pathf("/v1/audiences/%d", id), e.Admin, map[string]any{"description": "recount"})
	if got, want := num(u, "customerCount"), int64(3); got != want {
		t.Fatalf("customerCount=%d, want %d", got, want)
	}
}

func TestAudienceMembers(t *testing.T) {
	e := newEnv(t)
	for i := range 7 {
		c := "DE"
		if i%3 == 2 {
			c = "FR"
		}
		audienceIdentify(e, fmt.Sprintf("user-%d", i), map[string]any{"country": c})
	}
	id := num(audienceCreate(e, "Germans", audienceDefDE), "id")
	path := pathf("/v1/audiences/%d/members", id)
	userIDs := func(m map[string]any) string {
		var out []string
		for _, d := range m["data"].([]any) {
			out = append(out, d.(map[string]any)["userId"].(string))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name, query, want string
		total             int64
		nextPage          any
	}{
		{"Default", "", "user-0,user-1,user-3,user-4,user-6", 5, nil},
		{"FirstPage", "?limit=2", "user-0,user-1", 5, 2.0},
		{"SecondPage", "?limit=2&page=2", "user-3,user-4", 5, 3.0},
		{"LastPage", "?limit=2&page=3", "user-6", 5, nil},
		{"PastTheEnd", "?limit=2&page=9", "", 5, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := e.must(http.StatusOK, "GET", path+tc.query, e.Admin, nil)
			if got := userIDs(m); got != tc.want {
				t.Fatalf("members=%s, want %s", got, tc.want)
			}
			p := m["pagination"].(map[string]any)
			if got, want := num(p, "total"), tc.total; got != want {
				t.Fatalf("total=%d, want %d", got, want)
			}
			if got, want := p["nextPage"], tc.nextPage; got != want {
				t.Fatalf("nextPage=%v, want %v", got, want)
			}
		})
	}
	audienceWantFields(t, e.do("GET", path+"?limit=0", e.Admin, nil), "limit")
	audienceWantError(t, e.do("GET", "/v1/audiences/9999/members", e.Admin, nil), http.StatusNotFound, "NOT_FOUND")
	audienceWantError(t, e.do("GET", "/v1/audiences/x/members", e.Admin, nil), http.StatusBadRequest, "INVALID_REQUEST")
}

func TestAudienceCheck(t *testing.T) {
	e := newEnv(t)
	audienceIdentify(e, "anna", map[string]any{"country": "DE"})
	audienceIdentify(e, "bob", map[string]any{"country": "FR"})
	id := num(audienceCreate(e, "Germans", audienceDefDE), "id")
	path := pathf("/v1/audiences/%d/check", id)
	for _, tc := range []struct {
		user string
		want bool
	}{{"anna", true}, {"bob", false}, {"stranger", false}} {
		t.Run(tc.user, func(t *testing.T) {
			m := e.must(http.StatusOK, "POST", path, e.Admin, map[string]any{"userId": tc.user})
			if got, want := m["matches"], tc.want; got != want {
				t.Fatalf("matches=%v, want %v", got, want)
			}
		})
	}
	audienceWantFields(t, e.do("POST", path, e.Admin, `{}`), "userId")
	audienceWantFields(t, e.do("POST", path, e.Admin, `{"userId":""}`), "userId")
	audienceWantFields(t, e.do("POST", path, e.Admin, `{"userId":1}`), "userId")
	audienceWantError(t, e.do("POST", path, e.Admin, `nope`), http.StatusBadRequest, "INVALID_REQUEST")
	audienceWantError(t, e.do("POST", "/v1/audiences/9999/check", e.Admin, map[string]any{"userId": "anna"}), http.StatusNotFound, "NOT_FOUND")
}
