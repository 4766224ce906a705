package handlers

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"service/jsonjs"
	"service/store"
)

// contentTimeRE is the API's one timestamp format.
var contentTimeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// contentAllItems has one item of every type, with every optional field.
var contentAllItems = []any{
	map[string]any{"type": "heading", "content": "Welcome", "styles": map[string]any{"fontSize": 24.0, "color": "#111111"}},
	map[string]any{"type": "text", "content": "Save 10% today.", "styles": map[string]any{}},
	map[string]any{"type": "text", "content": "No styles"},
	map[string]any{"type": "image", "url": "https://cdn.example.com/a.png", "alt": "A picture"},
	map[string]any{"type": "image", "url": "/static/b.png"},
	map[string]any{"type": "button", "label": "Shop now", "url": "/shop"},
	map[string]any{"type": "button", "label": "No link"},
	map[string]any{"type": "form", "submitLabel": "Send", "successMessage": "Thanks!", "fields": []any{
		map[string]any{"name": "email", "type": "email", "label": "Email", "required": true},
		map[string]any{"name": "name", "type": "text", "minLength": 1.0, "maxLength": 50.0, "pattern": "^[A-Za-z ]+$"},
		map[string]any{"name": "age", "type": "number"},
		map[string]any{"name": "note", "type": "textarea", "maxLength": 500.0},
		map[string]any{"name": "agree", "type": "checkbox", "required": true},
		map[string]any{"name": "size", "type": "select", "options": []any{"S", "M", "L"}},
	}},
}

// contentJSON round-trips v through JSON so values compare by meaning.
func contentJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestContentCreateEveryItemType(t *testing.T) {
	e := newEnv(t)
	m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", e.App.ID), e.Admin,
		map[string]any{"name": "  All items  ", "items": contentAllItems})
	if got, want := m["name"], "All items"; got != want {
		t.Fatalf("name=%q, want %q", got, want)
	}
	if got, want := m["status"], "draft"; got != want {
		t.Fatalf("status=%v, want %v (the default)", got, want)
	}
	if v, ok := m["publishedAt"]; !ok || v != nil {
		t.Fatalf("publishedAt=%v (present %v), want null on a draft", v, ok)
	}
	if got, want := num(m, "appId"), e.App.ID; got != want {
		t.Fatalf("appId=%d, want %d", got, want)
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		if s, _ := m[k].(string); !contentTimeRE.MatchString(s) {
			t.Fatalf("%s=%v, want RFC 3339 UTC with milliseconds", k, m[k])
		}
	}
	if got, want := m["items"], contentJSON(t, contentAllItems); !reflect.DeepEqual(got, want) {
		t.Fatalf("items=%v\nwant %v", got, want)
	}
	got := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", num(m, "id")), e.Read, nil)
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("GET=%v\nwant the created block %v", got, m)
	}
}

func TestContentCreateDefaults(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name      string
		body      map[string]any
		status    string
		published bool
		items     string
	}{
		{"NameOnly", map[string]any{"name": "n"}, "draft", false, "[]"},
		{"NullItems", map[string]any{"name": "n", "items": nil}, "draft", false, "[]"},
		{"EmptyItems", map[string]any{"name": "n", "items": []any{}}, "draft", false, "[]"},
		{"Draft", map[string]any{"name": "n", "status": "draft"}, "draft", false, "[]"},
		{"Published", map[string]any{"name": "n", "status": "published"}, "published", true, "[]"},
		{"Archived", map[string]any{"name": "n", "status": "archived"}, "archived", false, "[]"},
		{"UnicodeName", map[string]any{"name": "Grüße 👋", "status": "published"}, "published", true, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", e.App.ID), e.Admin, tc.body)
			if got, want := m["status"], tc.status; got != want {
				t.Fatalf("status=%v, want %v", got, want)
			}
			pub, _ := m["publishedAt"].(string)
			if got, want := contentTimeRE.MatchString(pub), tc.published; got != want {
				t.Fatalf("publishedAt=%v, want set=%v", m["publishedAt"], want)
			}
			if tc.published && pub != m["createdAt"] {
				t.Fatalf("publishedAt=%v, want createdAt %v", pub, m["createdAt"])
			}
			items, _ := json.Marshal(m["items"])
			if got, want := string(items), tc.items; got != want {
				t.Fatalf("items=%s, want %s", got, want)
			}
			if got, want := m["name"], tc.body["name"]; got != want {
				t.Fatalf("name=%v, want %v", got, want)
			}
		})
	}
}

func TestContentValidation(t *testing.T) {
	e := newEnv(t)
	item := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	text := item("type", "text", "content", "ok")
	form := func(fields ...any) map[string]any { return item("type", "form", "fields", fields) }
	field := func(name, typ string, kv ...any) map[string]any {
		return item(append([]any{"name", name, "type", typ}, kv...)...)
	}
	many := make([]any, store.MaxItems+1)
	for i := range many {
		many[i] = text
	}
	manyFields := make([]any, store.MaxFormFields+1)
	for i := range manyFields {
		manyFields[i] = field("f"+strings.Repeat("x", i), "text")
	}
	for _, tc := range []struct {
		name   string
		body   any
		fields []string
	}{
		{"NameMissing", map[string]any{}, []string{"name"}},
		{"NameNull", map[string]any{"name": nil}, []string{"name"}},
		{"NameBlank", map[string]any{"name": "   "}, []string{"name"}},
		{"NameTooLong", map[string]any{"name": strings.Repeat("n", store.MaxNameLen+1)}, []string{"name"}},
		{"StatusUnknown", map[string]any{"name": "n", "status": "live"}, []string{"status"}},
		{"StatusCase", map[string]any{"name": "n", "status": "Published"}, []string{"status"}},
		{"ItemsNotArray", map[string]any{"name": "n", "items": "text"}, []string{"items"}},
		{"ItemsObject", map[string]any{"name": "n", "items": map[string]any{"type": "text"}}, []string{"items"}},
		{"TooManyItems", map[string]any{"name": "n", "items": many}, []string{"items"}},
		{"ItemNotObject", map[string]any{"name": "n", "items": []any{text, 5}}, []string{"items[1]"}},
		{"ItemNull", map[string]any{"name": "n", "items": []any{nil}}, []string{"items[0]"}},
		{"ItemArray", map[string]any{"name": "n", "items": []any{[]any{}}}, []string{"items[0]"}},
		{"TypeMissing", map[string]any{"name": "n", "items": []any{item("content", "x")}}, []string{"items[0].type"}},
		{"TypeUnknown", map[string]any{"name": "n", "items": []any{text, item("type", "video", "url", "/v.mp4")}}, []string{"items[1].type"}},
		{"TextContentMissing", map[string]any{"name": "n", "items": []any{item("type", "text")}}, []string{"items[0].content"}},
		{"TextContentNumber", map[string]any{"name": "n", "items": []any{item("type", "text", "content", 5)}}, []string{"items[0].content"}},
		{"HeadingContentMissing", map[string]any{"name": "n", "items": []any{text, item("type", "heading", "content", nil)}}, []string{"items[1].content"}},
		{"StylesNotObject", map[string]any{"name": "n", "items": []any{item("type", "text", "content", "x", "styles", "red")}}, []string{"items[0].styles"}},
		{"ImageURLMissing", map[string]any{"name": "n", "items": []any{item("type", "image", "alt", "a")}}, []string{"items[0].url"}},
		{"ImageURLBad", map[string]any{"name": "n", "items": []any{item("type", "image", "url", "ftp://x/a.png")}}, []string{"items[0].url"}},
		{"ImageURLRelative", map[string]any{"name": "n", "items": []any{item("type", "image", "url", "a.png")}}, []string{"items[0].url"}},
		{"ImageAltNumber", map[string]any{"name": "n", "items": []any{item("type", "image", "url", "/a.png", "alt", 1)}}, []string{"items[0].alt"}},
		{"ButtonLabelMissing", map[string]any{"name": "n", "items": []any{item("type", "button", "url", "/x")}}, []string{"items[0].label"}},
		{"ButtonURLScript", map[string]any{"name": "n", "items": []any{item("type", "button", "label", "x", "url", "javascript:alert(1)")}}, []string{"items[0].url"}},
		{"FormFieldsMissing", map[string]any{"name": "n", "items": []any{item("type", "form")}}, []string{"items[0].fields"}},
		{"FormFieldsEmpty", map[string]any{"name": "n", "items": []any{form()}}, []string{"items[0].fields"}},
		{"FormFieldsNotArray", map[string]any{"name": "n", "items": []any{item("type", "form", "fields", map[string]any{})}}, []string{"items[0].fields"}},
		{"FormTooManyFields", map[string]any{"name": "n", "items": []any{form(manyFields...)}}, []string{"items[0].fields"}},
		{"FormSubmitLabelNumber", map[string]any{"name": "n", "items": []any{item("type", "form", "fields", []any{field("a", "text")}, "submitLabel", 3)}}, []string{"items[0].submitLabel"}},
		{"FieldNotObject", map[string]any{"name": "n", "items": []any{form(field("a", "text"), "b")}}, []string{"items[0].fields[1]"}},
		{"FieldNameMissing", map[string]any{"name": "n", "items": []any{form(item("type", "text"))}}, []string{"items[0].fields[0].name"}},
		{"FieldTypeMissing", map[string]any{"name": "n", "items": []any{form(item("name", "a"))}}, []string{"items[0].fields[0].type"}},
		{"FieldTypeUnknown", map[string]any{"name": "n", "items": []any{form(field("a", "date"))}}, []string{"items[0].fields[0].type"}},
		{"SelectWithoutOptions", map[string]any{"name": "n", "items": []any{text, form(field("size", "select"))}}, []string{"items[1].fields[0].options"}},
		{"SelectEmptyOptions", map[string]any{"name": "n", "items": []any{text, form(field("a", "text"), field("size", "select", "options", []any{}))}}, []string{"items[1].fields[1].options"}},
		{"BadPattern", map[string]any{"name": "n", "items": []any{form(field("a", "text", "pattern", "(["))}}, []string{"items[0].fields[0].pattern"}},
		{"DuplicateFieldNames", map[string]any{"name": "n", "items": []any{form(field("email", "email"), field("email", "text"))}}, []string{"items[0].fields[1].name"}},
		{"MinLengthNegative", map[string]any{"name": "n", "items": []any{form(field("a", "text", "minLength", -1))}}, []string{"items[0].fields[0].minLength"}},
		{"MaxBelowMin", map[string]any{"name": "n", "items": []any{form(field("a", "text", "minLength", 5, "maxLength", 2))}}, []string{"items[0].fields[0].maxLength"}},
		{"SeveralAtOnce", map[string]any{"status": "live", "items": []any{
			item("type", "video"),
			form(field("size", "select"), field("size", "text", "pattern", "(")),
			item("type", "image", "url", "nope"),
			item("type", "button"),
			text,
		}}, []string{"name", "status", "items[0].type", "items[1].fields[0].options", "items[1].fields[1].name",
			"items[1].fields[1].pattern", "items[2].url", "items[3].label"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/content", e.App.ID), e.Admin, tc.body)
			foundationWantError(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			fields := fieldsOf(t, rec)
			var got []string
			for k, v := range fields {
				if s, _ := v.(string); s == "" {
					t.Fatalf("details.fields[%q]=%v, want a reason", k, v)
				}
				got = append(got, k)
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.fields))
			if !slices.Equal(got, want) {
				t.Fatalf("details.fields keys=%v, want %v; body=%s", got, want, rec.Body.String())
			}
		})
	}
	// Nothing invalid was stored.
	list := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/content", e.App.ID), e.Admin, nil)
	if got := list["data"].([]any); len(got) != 0 {
		t.Fatalf("invalid creates stored %d blocks", len(got))
	}
}

func TestContentPatchValidation(t *testing.T) {
	e := newEnv(t)
	id := e.mustContent("keep", store.ContentDraft)
	before := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", id), e.Admin, nil)
	for _, tc := range []struct {
		name   string
		body   any
		fields []string
	}{
		{"NameBlank", map[string]any{"name": ""}, []string{"name"}},
		{"NameTooLong", map[string]any{"name": strings.Repeat("x", store.MaxNameLen+1)}, []string{"name"}},
		{"StatusUnknown", map[string]any{"status": "deleted"}, []string{"status"}},
		{"ItemsNull", map[string]any{"items": nil}, []string{"items"}},
		{"ItemBad", map[string]any{"items": []any{map[string]any{"type": "image"}}}, []string{"items[0].url"}},
		{"Several", map[string]any{"name": " ", "status": "x", "items": []any{map[string]any{"type": "x"}}}, []string{"name", "status", "items[0].type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("PATCH", pathf("/v1/content/%d", id), e.Admin, tc.body)
			foundationWantError(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			var got []string
			for k := range fieldsOf(t, rec) {
				got = append(got, k)
			}
			slices.Sort(got)
			if want := slices.Sorted(slices.Values(tc.fields)); !slices.Equal(got, want) {
				t.Fatalf("details.fields keys=%v, want %v", got, want)
			}
		})
	}
	after := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", id), e.Admin, nil)
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("rejected patches changed the block: %v, was %v", after, before)
	}
}

func TestContentStateMoves(t *testing.T) {
	e := newEnv(t)
	clock := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	e.DB.Now = func() time.Time { return clock }
	id := e.mustContent("moving", store.ContentDraft)
	var lastPublished string
	for i, to := range []string{"published", "archived", "draft", "published", "draft", "archived", "published", "published", "archived", "archived", "draft"} {
		clock = clock.Add(time.Second)
		stamp := clock.Format(jsonjs.TimeLayout)
		path := pathf("/v1/content/%d", id)
		if i%2 == 1 {
			path = pathf("/v1/content/%d/%d", e.App.ID, id)
		}
		before := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", id), e.Admin, nil)
		m := e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"status": to})
		if got, want := m["status"], to; got != want {
			t.Fatalf("move %d: status=%v, want %v", i, got, want)
		}
		if got, want := m["updatedAt"], stamp; got != want {
			t.Fatalf("move %d: updatedAt=%v, want %v", i, got, want)
		}
		if to == "published" {
			if before["status"] != "published" {
				lastPublished = stamp // entering published stamps the time
			}
			if got, want := m["publishedAt"], lastPublished; got != want {
				t.Fatalf("move %d to published from %v: publishedAt=%v, want %v", i, before["status"], got, want)
			}
		}
		got := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", id), e.Admin, nil)
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("move %d: GET=%v, want the PATCH answer %v", i, got, m)
		}
	}
}

func TestContentUpdate(t *testing.T) {
	e := newEnv(t)
	id := e.mustContent("first", store.ContentDraft)
	created := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", id), e.Admin, nil)

	// An empty patch changes nothing but the update time.
	m := e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", id), e.Admin, map[string]any{})
	for _, k := range []string{"id", "appId", "name", "status", "items", "publishedAt", "createdAt"} {
		if !reflect.DeepEqual(m[k], created[k]) {
			t.Fatalf("empty patch changed %s: %v, was %v", k, m[k], created[k])
		}
	}

	items := []any{map[string]any{"type": "button", "label": "Go", "url": "https://example.com"}}
	m = e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", id), e.Admin, map[string]any{"name": " second ", "items": items})
	if got, want := m["name"], "second"; got != want {
		t.Fatalf("name=%v, want %v", got, want)
	}
	if got, want := m["items"], contentJSON(t, items); !reflect.DeepEqual(got, want) {
		t.Fatalf("items=%v, want %v", got, want)
	}
	if got, want := m["status"], "draft"; got != want {
		t.Fatalf("status=%v, want %v (untouched)", got, want)
	}

	// The in-app path is the same update.
	m = e.must(http.StatusOK, "PATCH", pathf("/api/v1/content/%d/%d", e.App.ID, id), e.Admin, map[string]any{"items": []any{}})
	if got, _ := json.Marshal(m["items"]); string(got) != "[]" {
		t.Fatalf("items=%s, want []", got)
	}
	if got, want := m["name"], "second"; got != want {
		t.Fatalf("name=%v, want %v (untouched)", got, want)
	}
	foundationWantError(t, e.do("PATCH", "/v1/content/999999", e.Admin, map[string]any{"name": "x"}), 404, "NOT_FOUND")
	foundationWantError(t, e.do("PATCH", pathf("/v1/content/%d/999999", e.App.ID), e.Admin, map[string]any{"name": "x"}), 404, "NOT_FOUND")
}

func TestContentListFilter(t *testing.T) {
	e := newEnv(t)
	list := pathf("/v1/apps/%d/content", e.App.ID)
	ids := map[string][]int64{}
	for _, s := range []string{"draft", "published", "archived", "published", "draft", "published"} {
		id := e.mustContent(s, s)
		ids[s] = append([]int64{id}, ids[s]...) // newest first
	}
	var all []int64
	for _, s := range []string{"draft", "published", "archived"} {
		t.Run(s, func(t *testing.T) {
			p := foundationList(e, list+"?status="+s, e.Admin)
			var got []int64
			for _, d := range p.Data {
				if d.Status != s {
					t.Fatalf("status=%s in a %s list", d.Status, s)
				}
				got = append(got, d.ID)
			}
			if !slices.Equal(got, ids[s]) {
				t.Fatalf("ids=%v, want %v", got, ids[s])
			}
			if *p.Pagination.Total != len(ids[s]) || *p.Pagination.HasMore {
				t.Fatalf("pagination=%+v, want total %d", p.Pagination, len(ids[s]))
			}
		})
		all = append(all, ids[s]...)
	}
	p := foundationList(e, list, e.Admin)
	var got []int64
	for _, d := range p.Data {
		got = append(got, d.ID)
	}
	slices.Sort(all)
	slices.Reverse(all)
	if !slices.Equal(got, all) {
		t.Fatalf("unfiltered ids=%v, want %v (newest first)", got, all)
	}
	p = foundationList(e, list+"?status=published&limit=2", e.Admin)
	if len(p.Data) != 2 || !*p.Pagination.HasMore || *p.Pagination.NextCursor != "2" || *p.Pagination.NextPage != 2 || *p.Pagination.Total != 3 {
		t.Fatalf("filtered page: %+v", p)
	}
	for _, bad := range []string{"live", "PUBLISHED", "active"} {
		rec := e.do("GET", list+"?status="+bad, e.Admin, nil)
		foundationWantError(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
		if _, ok := fieldsOf(t, rec)["status"]; !ok {
			t.Fatalf("status=%s: details.fields lacks status: %s", bad, rec.Body.String())
		}
	}
}

func TestContentDelete(t *testing.T) {
	e := newEnv(t)
	id := e.mustContent("doomed", store.ContentPublished)
	keep := e.mustContent("kept", store.ContentDraft)
	m := e.must(http.StatusOK, "DELETE", pathf("/v1/content/%d", id), e.Admin, nil)
	if got, want := m["success"], true; got != want {
		t.Fatalf("success=%v, want %v; body=%v", got, want, m)
	}
	for _, c := range []struct{ method, path, key string }{
		{"GET", pathf("/v1/content/%d", id), e.Admin},
		{"PATCH", pathf("/v1/content/%d", id), e.Admin},
		{"DELETE", pathf("/v1/content/%d", id), e.Admin},
		{"GET", pathf("/v1/apps-external/%d/content/%d", e.App.ID, id), e.Cli},
	} {
		var body any
		if c.method == "PATCH" {
			body = map[string]any{"name": "x"}
		}
		foundationWantError(t, e.do(c.method, c.path, c.key, body), http.StatusNotFound, "NOT_FOUND")
	}
	e.must(http.StatusOK, "GET", pathf("/v1/content/%d", keep), e.Admin, nil)
}

func TestContentExternal(t *testing.T) {
	e := newEnv(t)
	id := e.mustContent("sdk", store.ContentDraft)
	ext := pathf("/v1/apps-external/%d/content/%d", e.App.ID, id)
	for _, step := range []struct {
		status string
		want   int
	}{
		{"draft", 404}, {"published", 200}, {"archived", 404}, {"published", 200}, {"draft", 404},
	} {
		e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", id), e.Admin, map[string]any{"status": step.status})
		for _, key := range []string{e.Cli, e.Admin, e.Read} {
			rec := e.do("GET", ext, key, nil)
			if step.want == 404 {
				foundationWantError(t, rec, http.StatusNotFound, "NOT_FOUND")
				continue
			}
			if got := rec.Code; got != step.want {
				t.Fatalf("%s: status=%d, want %d; body=%s", step.status, got, step.want, rec.Body.String())
			}
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m["status"] != "published" || num(m, "id") != id {
				t.Fatalf("%s: body=%s", step.status, rec.Body.String())
			}
		}
	}
	foundationWantError(t, e.do("GET", pathf("/v1/apps-external/%d/content/999999", e.App.ID), e.Cli, nil), 404, "NOT_FOUND")
}
