package handlers

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"service/store"
)

// TestAppRetention: an instance key sets, reads and clears an app's
// eventRetentionDays and formRetentionDays; the answers of PATCH, GET and
// the list carry them, null while the app follows the server, and every
// change is in the audit log with the key, the old and the new values.
func TestAppRetention(t *testing.T) {
	e := newEnv(t)
	ik := e.instanceKey()
	ctx := context.Background()
	created := e.must(http.StatusCreated, "POST", "/v1/apps", ik, map[string]any{"name": "kept", "formRetentionDays": 3650})
	id := num(created, "id")
	if created["eventRetentionDays"] != nil || num(created, "formRetentionDays") != 3650 {
		t.Fatalf("created %v", created)
	}
	path := pathf("/v1/apps/%d", id)
	want := func(what string, got map[string]any, events, forms any) {
		t.Helper()
		if fmt.Sprint(got["eventRetentionDays"]) != fmt.Sprint(events) || fmt.Sprint(got["formRetentionDays"]) != fmt.Sprint(forms) {
			t.Fatalf("%s: eventRetentionDays=%v formRetentionDays=%v, want %v and %v", what, got["eventRetentionDays"], got["formRetentionDays"], events, forms)
		}
	}
	want("PATCH", e.must(http.StatusOK, "PATCH", path, ik, map[string]any{"eventRetentionDays": 30, "formRetentionDays": 1}), 30, 1)
	want("GET", e.must(http.StatusOK, "GET", path, ik, nil), 30, 1)
	list := e.must(http.StatusOK, "GET", "/v1/apps?limit=1", ik, nil)["data"].([]any)
	want("list", list[0].(map[string]any), 30, 1)
	// A body without them leaves them; null sets one back to the server's.
	want("PATCH name", e.must(http.StatusOK, "PATCH", path, ik, map[string]any{"name": "renamed"}), 30, 1)
	want("PATCH null", e.must(http.StatusOK, "PATCH", path, ik, `{"eventRetentionDays":null}`), nil, 1)
	want("PATCH both", e.must(http.StatusOK, "PATCH", path, ik, `{"eventRetentionDays":3650,"formRetentionDays":null}`), 3650, nil)
	// The same values again change nothing and log nothing.
	want("PATCH same", e.must(http.StatusOK, "PATCH", path, ik, `{"eventRetentionDays":3650,"formRetentionDays":null}`), 3650, nil)

	entries, err := e.DB.FindAuditLog(ctx, store.AuditFilter{AppID: id, Action: "app.updated"})
	if err != nil {
		t.Fatal(err)
	}
	type change struct{ before, after string }
	wantChanges := []map[string]change{
		{"eventRetentionDays": {"null", "3650"}, "formRetentionDays": {"1", "null"}},
		{"eventRetentionDays": {"30", "null"}},
		{"name": {`"kept"`, `"renamed"`}},
		{"eventRetentionDays": {"null", "30"}, "formRetentionDays": {"3650", "1"}},
	}
	if len(entries) != len(wantChanges) {
		t.Fatalf("%d app.updated entries, want %d: %+v", len(entries), len(wantChanges), entries)
	}
	for i, en := range entries {
		if en.Actor.Name != "tests" || en.Actor.Type != "key" {
			t.Errorf("entry %d: actor %+v, want the instance key", i, en.Actor)
		}
		if len(en.Changes) != len(wantChanges[i]) {
			t.Errorf("entry %d: changes %v, want %v", i, en.Changes, wantChanges[i])
		}
		for field, w := range wantChanges[i] {
			c := en.Changes[field]
			if string(c.Before) != w.before || string(c.After) != w.after {
				t.Errorf("entry %d: %s %s → %s, want %s → %s", i, field, c.Before, c.After, w.before, w.after)
			}
		}
	}
	created2, err := e.DB.FindAuditLog(ctx, store.AuditFilter{AppID: id, Action: "app.created"})
	if err != nil || len(created2) != 1 || string(created2[0].Changes["formRetentionDays"].After) != "3650" {
		t.Fatalf("app.created: %+v %v", created2, err)
	}
}

// TestAppRetentionBadInput: a retention that is not a whole number of
// days from 1 to 3650, or null, is a 400 in the error envelope naming the
// field, beside any other bad field, and nothing is written.
func TestAppRetentionBadInput(t *testing.T) {
	e := newEnv(t)
	ik := e.instanceKey()
	ctx := context.Background()
	path := pathf("/v1/apps/%d", e.App.ID)
	e.must(http.StatusOK, "PATCH", path, ik, map[string]any{"eventRetentionDays": 5, "formRetentionDays": 6})
	for _, tc := range []struct {
		name, method, path, body string
		fields                   []string
	}{
		{"Zero", "PATCH", path, `{"eventRetentionDays":0}`, []string{"eventRetentionDays"}},
		{"Negative", "PATCH", path, `{"formRetentionDays":-1}`, []string{"formRetentionDays"}},
		{"OverTenYears", "PATCH", path, `{"eventRetentionDays":3651}`, []string{"eventRetentionDays"}},
		{"Fraction", "PATCH", path, `{"formRetentionDays":1.5}`, []string{"formRetentionDays"}},
		{"Huge", "PATCH", path, `{"eventRetentionDays":1e300}`, []string{"eventRetentionDays"}},
		{"String", "PATCH", path, `{"eventRetentionDays":"30"}`, []string{"eventRetentionDays"}},
		{"StringNull", "PATCH", path, `{"eventRetentionDays":"null"}`, []string{"eventRetentionDays"}},
		{"Bool", "PATCH", path, `{"formRetentionDays":true}`, []string{"formRetentionDays"}},
		{"Object", "PATCH", path, `{"formRetentionDays":{"days":3}}`, []string{"formRetentionDays"}},
		{"BothAndAName", "PATCH", path, `{"name":5,"eventRetentionDays":0,"formRetentionDays":[]}`, []string{"name", "eventRetentionDays", "formRetentionDays"}},
		// One good and one bad: the good one is not written either.
		{"OneGoodOneBad", "PATCH", path, `{"eventRetentionDays":7,"formRetentionDays":0}`, []string{"formRetentionDays"}},
		{"Create", "POST", "/v1/apps", `{"name":"x","eventRetentionDays":0,"formRetentionDays":"7"}`, []string{"eventRetentionDays", "formRetentionDays"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := instanceState(t, e) + retentionState(t, e)
			rec := e.do(tc.method, tc.path, ik, tc.body)
			foundationWantError(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			got := fieldsOf(t, rec)
			if len(got) != len(tc.fields) {
				t.Errorf("details.fields=%v, want exactly %v", got, tc.fields)
			}
			for _, f := range tc.fields {
				if _, ok := got[f]; !ok {
					t.Errorf("details.fields=%v, want %s among them", got, f)
				}
			}
			if after := instanceState(t, e) + retentionState(t, e); after != before {
				t.Fatalf("a refused request wrote: %s became %s", before, after)
			}
		})
	}
	if entries, err := e.DB.FindAuditLog(ctx, store.AuditFilter{AppID: e.App.ID, Action: "app.updated"}); err != nil || len(entries) != 1 {
		t.Fatalf("%d app.updated entries, %v; want the one good change", len(entries), err)
	}
}

// retentionState sums up the apps' retentions.
func retentionState(t *testing.T, e *testEnv) string {
	t.Helper()
	list, _, err := e.DB.FindAppsPage(context.Background(), store.ListOptions{Limit: 100, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := ""
	for _, a := range list {
		s += fmt.Sprintf("%d:%v/%v;", a.ID, days(a.EventRetentionDays), days(a.FormRetentionDays))
	}
	return s
}

func days(d *int) string {
	if d == nil {
		return "null"
	}
	return fmt.Sprint(*d)
}
