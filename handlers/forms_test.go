package handlers

import (
	"net/http"
	"strings"
	"testing"
)

// formTestFields is the form of the blocks these tests submit to.
var formTestFields = []any{
	map[string]any{"name": "email", "type": "email", "label": "Email", "required": true},
	map[string]any{"name": "name", "type": "text", "minLength": 2, "maxLength": 20},
	map[string]any{"name": "age", "type": "number"},
	map[string]any{"name": "consent", "type": "checkbox", "required": true},
	map[string]any{"name": "plan", "type": "select", "options": []string{"free", "pro"}},
	map[string]any{"name": "zip", "type": "text", "pattern": `[0-9]{5}`},
	map[string]any{"name": "message", "type": "textarea", "maxLength": 500},
}

// formBlock creates a block with a form and returns its id.
func formBlock(e *testEnv, status string) int64 {
	e.t.Helper()
	m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", e.App.ID), e.Admin, map[string]any{
		"name": "Contact", "status": status,
		"items": []any{map[string]any{"type": "form", "fields": formTestFields, "submitLabel": "Send"}},
	})
	return num(m, "id")
}

func formValid() map[string]any {
	return map[string]any{"email": "zoe@example.com", "consent": true}
}

func TestFormSubmitAPI(t *testing.T) {
	e := newEnv(t)
	block := formBlock(e, "published")
	ext := pathf("/v1/apps-external/%d/submit-form", e.App.ID)

	m := e.must(http.StatusCreated, "POST", ext, e.Cli, map[string]any{"contentViewId": block, "data": formValid(),
		"userId": "u1", "sessionId": "s1", "environment": "production"})
	if got, want := webhookKeys(m), "formSubmissionId,submittedAt,success"; got != want || m["success"] != true {
		t.Fatalf("answer=%v", m)
	}
	if !contentTimeRE.MatchString(m["submittedAt"].(string)) || num(m, "formSubmissionId") < 1 {
		t.Fatalf("answer=%v", m)
	}
	first := num(m, "formSubmissionId")
	// The app comes from the key; a matching appId in the body is fine.
	m = e.must(http.StatusCreated, "POST", "/v1/content/submit-form", e.Cli,
		map[string]any{"appId": e.App.ID, "contentViewId": block, "data": map[string]any{"email": "a@b.io", "consent": true, "age": "7"}})
	second := num(m, "formSubmissionId")
	e.must(http.StatusCreated, "POST", "/api/v1/content/submit-form", e.Admin, map[string]any{"contentViewId": block, "data": formValid()})

	_, _, _, otherCli := e.newApp("other", "enterprise", 1_000_000)
	for _, tc := range []struct {
		name, path, key string
		body            any
		status          int
		code            string
	}{
		{"Body appId of another app", "/v1/content/submit-form", e.Cli, map[string]any{"appId": e.App.ID + 1, "contentViewId": block, "data": formValid()}, 403, "FORBIDDEN"},
		{"Path app of another key", ext, otherCli, map[string]any{"contentViewId": block, "data": formValid()}, 403, "FORBIDDEN"},
		{"Block of another app", "/v1/content/submit-form", otherCli, map[string]any{"contentViewId": block, "data": formValid()}, 404, "NOT_FOUND"},
		{"Missing block", ext, e.Cli, map[string]any{"contentViewId": 9999, "data": formValid()}, 404, "NOT_FOUND"},
		{"Read key", ext, e.Read, map[string]any{"contentViewId": block, "data": formValid()}, 403, "FORBIDDEN"},
		{"No key", ext, "", map[string]any{"contentViewId": block, "data": formValid()}, 401, "UNAUTHORIZED"},
		{"Not JSON", ext, e.Cli, `{"contentViewId":`, 400, "INVALID_REQUEST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", tc.path, tc.key, tc.body)
			if rec.Code != tc.status || errCode(t, rec) != tc.code {
				t.Fatalf("status=%d, want %d %s: %s", rec.Code, tc.status, tc.code, rec.Body)
			}
		})
	}

	// Lists: newest first, paginated, filtered by block.
	other := formBlock(e, "published")
	e.must(http.StatusCreated, "POST", ext, e.Cli, map[string]any{"contentViewId": other, "data": formValid()})
	list := e.must(http.StatusOK, "GET", pathf("/v1/content/%d/submissions?limit=2", block), e.Read, nil)
	data := list["data"].([]any)
	p := list["pagination"].(map[string]any)
	if len(data) != 2 || p["total"] != float64(3) || p["hasMore"] != true {
		t.Fatalf("list=%v", list)
	}
	newest := data[1].(map[string]any)
	if got, want := webhookKeys(newest), "contentViewId,data,environment,id,sessionId,submittedAt,userId"; got != want {
		t.Fatalf("keys=%s, want %s", got, want)
	}
	if num(newest, "id") != second || newest["userId"] != nil || !webhookJSONEqual(newest["data"], map[string]any{"email": "a@b.io", "consent": true, "age": "7"}) {
		t.Fatalf("submission=%v", newest)
	}
	list = e.must(http.StatusOK, "GET", pathf("/v1/content/%d/submissions?page=2&limit=2", block), e.Admin, nil)
	oldest := list["data"].([]any)[0].(map[string]any)
	if num(oldest, "id") != first || oldest["userId"] != "u1" || oldest["sessionId"] != "s1" || oldest["environment"] != "production" ||
		num(oldest, "contentViewId") != block {
		t.Fatalf("oldest=%v", oldest)
	}
	all := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/form-submissions", e.App.ID), e.Admin, nil)
	if p := all["pagination"].(map[string]any); p["total"] != float64(4) {
		t.Fatalf("all=%v", all)
	}
	one := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/form-submissions?contentViewId=%d", e.App.ID, other), e.Admin, nil)
	if d := one["data"].([]any); len(d) != 1 || num(d[0].(map[string]any), "contentViewId") != other {
		t.Fatalf("filtered=%v", one)
	}
	for _, tc := range []struct {
		path, key string
		status    int
	}{
		{pathf("/v1/apps/%d/form-submissions?contentViewId=abc", e.App.ID), e.Admin, 400},
		{pathf("/v1/apps/%d/form-submissions", e.App.ID), e.Cli, 403},
		{pathf("/v1/content/%d/submissions", block), e.Cli, 403},
		{"/v1/content/9999/submissions", e.Admin, 404},
		{"/v1/content/abc/submissions", e.Admin, 400},
	} {
		if rec := e.do("GET", tc.path, tc.key, nil); rec.Code != tc.status {
			t.Fatalf("GET %s: status=%d, want %d", tc.path, rec.Code, tc.status)
		}
	}
}

func TestFormSubmitValidation(t *testing.T) {
	e := newEnv(t)
	block := formBlock(e, "published")
	draft := formBlock(e, "draft")
	noForm := e.mustContent("plain", "published")
	ext := pathf("/v1/apps-external/%d/submit-form", e.App.ID)
	with := func(extra map[string]any) map[string]any {
		d := formValid()
		for k, v := range extra {
			d[k] = v
		}
		return d
	}
	for _, tc := range []struct {
		name string
		body any
		want map[string]string
	}{
		{"Empty body", map[string]any{}, map[string]string{"contentViewId": "is required", "data": "is required"}},
		{"Data not an object", map[string]any{"contentViewId": block, "data": []int{1}}, map[string]string{"data": "must be an object"}},
		{"Data null", map[string]any{"contentViewId": block, "data": nil}, map[string]string{"data": "is required"}},
		{"Block id a string", `{"contentViewId":"1","data":{}}`, map[string]string{"contentViewId": "must be a number"}},
		{"Block id zero", map[string]any{"contentViewId": 0, "data": map[string]any{}}, map[string]string{"contentViewId": "must be a positive integer"}},
		{"User id a number", `{"contentViewId":1,"data":{},"userId":5}`, map[string]string{"userId": "must be a string"}},
		{"Long strings", map[string]any{"contentViewId": block, "data": formValid(), "userId": strings.Repeat("u", 257), "environment": strings.Repeat("e", 65)},
			map[string]string{"userId": "must be at most 256 characters", "environment": "must be at most 64 characters"}},
		{"Draft block", map[string]any{"contentViewId": draft, "data": formValid()}, map[string]string{"contentViewId": "content view is not published"}},
		{"No form", map[string]any{"contentViewId": noForm, "data": formValid()}, map[string]string{"contentViewId": "content view has no form"}},
		{"Required missing", map[string]any{"contentViewId": block, "data": map[string]any{}},
			map[string]string{"data.email": "is required", "data.consent": "is required"}},
		{"Every rule", map[string]any{"contentViewId": block, "data": map[string]any{
			"email": "zoe@", "name": "Z", "age": "ten", "consent": "yes", "plan": "gold", "zip": "1234", "message": strings.Repeat("m", 501), "extra": "x"}},
			map[string]string{
				"data.email": "must be an email address", "data.name": "must be at least 2 characters", "data.age": "must be a number",
				"data.consent": "must be a boolean", "data.plan": "must be one of free, pro", "data.zip": "must match the pattern [0-9]{5}",
				"data.message": "must be at most 500 characters", "data.extra": "is not a field of this form",
			}},
		{"Unchecked consent", map[string]any{"contentViewId": block, "data": with(map[string]any{"consent": false})}, map[string]string{"data.consent": "must be checked"}},
		{"Pattern is anchored", map[string]any{"contentViewId": block, "data": with(map[string]any{"zip": "123456"})}, map[string]string{"data.zip": "must match the pattern [0-9]{5}"}},
		{"Wrong value types", map[string]any{"contentViewId": block, "data": with(map[string]any{"name": 12, "plan": true, "age": []int{}})},
			map[string]string{"data.name": "must be a string", "data.plan": "must be one of free, pro", "data.age": "must be a number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", ext, e.Cli, tc.body)
			if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
				t.Fatalf("status=%d: %s", rec.Code, rec.Body)
			}
			fields := fieldsOf(t, rec)
			if len(fields) != len(tc.want) {
				t.Fatalf("fields=%v, want %v", fields, tc.want)
			}
			for k, v := range tc.want {
				if fields[k] != v {
					t.Fatalf("%s=%v, want %q (all %v)", k, fields[k], v, fields)
				}
			}
		})
	}
	if all := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/form-submissions", e.App.ID), e.Admin, nil); all["pagination"].(map[string]any)["total"] != float64(0) {
		t.Fatalf("refused submissions were stored: %v", all)
	}
}
