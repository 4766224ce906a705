package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"service/store"
)

// metricCreate creates a metric with the admin key.
func metricCreate(e *testEnv, body map[string]any) map[string]any {
	e.t.Helper()
	return e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/metrics", e.App.ID), e.Admin, body)
}

func TestMetricCreateAndGet(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		body map[string]any
		want map[string]any
	}{
		{"Conversion", map[string]any{"key": "signup", "name": " Sign-ups ", "type": "conversion", "eventId": "signup"},
			map[string]any{"key": "signup", "name": "Sign-ups", "description": "", "type": "conversion", "eventId": "signup",
				"property": nil, "windowHours": nil, "direction": "increase", "cap": nil}},
		{"Count", map[string]any{"key": "errors.js-1_x", "name": "Errors", "type": "count", "eventId": "error", "direction": "decrease", "windowHours": 0.001},
			map[string]any{"type": "count", "direction": "decrease", "windowHours": 0.001, "property": nil}},
		{"Sum", map[string]any{"key": "revenue", "name": "Revenue", "description": "Money", "type": "sum", "eventId": "purchase",
			"property": "amount", "windowHours": 8760, "cap": 1000},
			map[string]any{"type": "sum", "property": "amount", "windowHours": float64(8760), "cap": float64(1000), "description": "Money"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := metricCreate(e, tc.body)
			got := e.must(http.StatusOK, "GET", pathf("/v1/metrics/%d", num(m, "id")), e.Read, nil)
			for k, want := range tc.want {
				if fmt.Sprint(got[k]) != fmt.Sprint(want) {
					t.Errorf("%s=%v, want %v", k, got[k], want)
				}
			}
			if num(got, "appId") != e.App.ID || got["createdAt"] == nil || got["updatedAt"] == nil {
				t.Fatalf("metric=%v", got)
			}
		})
	}
	list := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/metrics?limit=2", e.App.ID), e.Read, nil)
	data := list["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["key"] != "revenue" || num(list["pagination"].(map[string]any), "total") != 3 {
		t.Fatalf("list=%v, want the 2 newest of 3", list)
	}
}

func TestMetricValidation(t *testing.T) {
	e := newEnv(t)
	metricCreate(e, map[string]any{"key": "taken", "name": "Taken", "type": "count", "eventId": "x"})
	valid := func(over map[string]any) map[string]any {
		b := map[string]any{"key": "k", "name": "N", "type": "count", "eventId": "e"}
		for k, v := range over {
			if v == "-" {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	for _, tc := range []struct {
		name string
		body any
		want map[string]string
	}{
		{"Empty", map[string]any{}, map[string]string{"key": "is required", "name": "is required", "type": "is required", "eventId": "is required"}},
		{"KeyUpperCase", valid(map[string]any{"key": "Revenue"}), map[string]string{"key": ""}},
		{"KeySpace", valid(map[string]any{"key": "a b"}), map[string]string{"key": ""}},
		{"KeyEmpty", valid(map[string]any{"key": ""}), map[string]string{"key": ""}},
		{"KeyTooLong", valid(map[string]any{"key": strings.Repeat("k", 65)}), map[string]string{"key": ""}},
		{"KeyTaken", valid(map[string]any{"key": "taken"}), map[string]string{"key": ""}},
		{"KeyNotString", valid(map[string]any{"key": 5}), map[string]string{"key": "must be a string"}},
		{"NameBlank", valid(map[string]any{"name": "  "}), map[string]string{"name": "is required"}},
		{"NameTooLong", valid(map[string]any{"name": strings.Repeat("n", 201)}), map[string]string{"name": ""}},
		{"DescriptionTooLong", valid(map[string]any{"description": strings.Repeat("d", 2001)}), map[string]string{"description": ""}},
		{"Type", valid(map[string]any{"type": "average"}), map[string]string{"type": "must be one of conversion, count, sum"}},
		{"EventIDBlank", valid(map[string]any{"eventId": " "}), map[string]string{"eventId": "is required"}},
		{"EventIDTooLong", valid(map[string]any{"eventId": strings.Repeat("e", 201)}), map[string]string{"eventId": ""}},
		{"SumWithoutProperty", valid(map[string]any{"type": "sum"}), map[string]string{"property": ""}},
		{"SumNullProperty", valid(map[string]any{"type": "sum", "property": nil}), map[string]string{"property": ""}},
		{"CountWithProperty", valid(map[string]any{"property": "amount"}), map[string]string{"property": "must be null unless type is sum"}},
		{"ConversionWithProperty", valid(map[string]any{"type": "conversion", "property": "amount"}), map[string]string{"property": ""}},
		{"PropertyEmpty", valid(map[string]any{"type": "sum", "property": ""}), map[string]string{"property": ""}},
		{"PropertyNumber", valid(map[string]any{"type": "sum", "property": 5}), map[string]string{"property": ""}},
		{"WindowZero", valid(map[string]any{"windowHours": 0}), map[string]string{"windowHours": ""}},
		{"WindowTooShort", valid(map[string]any{"windowHours": 0.0009}), map[string]string{"windowHours": ""}},
		{"WindowTooLong", valid(map[string]any{"windowHours": 8760.5}), map[string]string{"windowHours": ""}},
		{"WindowString", valid(map[string]any{"windowHours": "24"}), map[string]string{"windowHours": ""}},
		{"Direction", valid(map[string]any{"direction": "up"}), map[string]string{"direction": "must be increase or decrease"}},
		{"CapZero", valid(map[string]any{"cap": 0}), map[string]string{"cap": "must be null or a number greater than 0"}},
		{"CapNegative", valid(map[string]any{"cap": -5}), map[string]string{"cap": ""}},
		{"CapString", valid(map[string]any{"cap": "10"}), map[string]string{"cap": ""}},
		{"Several", valid(map[string]any{"key": "B", "type": "sum", "cap": 0, "windowHours": 9000}),
			map[string]string{"key": "", "property": "", "cap": "", "windowHours": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/metrics", e.App.ID), e.Admin, tc.body)
			validationFields(t, rec, rec.Body.Bytes(), tc.want)
		})
	}
	// Nothing refused was written.
	list := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/metrics", e.App.ID), e.Admin, nil)
	if n := num(list["pagination"].(map[string]any), "total"); n != 1 {
		t.Fatalf("%d metrics after refused creates, want 1", n)
	}

	t.Run("Update", func(t *testing.T) {
		m := num(metricCreate(e, map[string]any{"key": "rev", "name": "Revenue", "type": "sum", "eventId": "buy", "property": "amount"}), "id")
		path := pathf("/v1/metrics/%d", m)
		for _, tc := range []struct {
			name string
			body any
			want map[string]string
		}{
			{"TypeLeavesProperty", map[string]any{"type": "count"}, map[string]string{"property": "must be null unless type is sum"}},
			{"PropertyRemoved", map[string]any{"property": nil}, map[string]string{"property": ""}},
			{"KeyTaken", map[string]any{"key": "taken"}, map[string]string{"key": ""}},
			{"NameBlank", map[string]any{"name": ""}, map[string]string{"name": ""}},
			{"Cap", map[string]any{"cap": -1, "direction": "sideways"}, map[string]string{"cap": "", "direction": ""}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := e.do("PATCH", path, e.Admin, tc.body)
				validationFields(t, rec, rec.Body.Bytes(), tc.want)
			})
		}
		got := e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"type": "count", "property": nil, "cap": 3, "windowHours": 24, "key": "rev2"})
		if got["type"] != "count" || got["property"] != nil || num(got, "cap") != 3 || num(got, "windowHours") != 24 || got["key"] != "rev2" || got["name"] != "Revenue" {
			t.Fatalf("updated=%v", got)
		}
		got = e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"cap": nil, "windowHours": nil})
		if got["cap"] != nil || got["windowHours"] != nil {
			t.Fatalf("cleared=%v", got)
		}
	})
}

func TestMetricRolesAndApps(t *testing.T) {
	e := newEnv(t)
	other, otherAdmin, _, _ := e.newApp("other", "enterprise", 1_000_000)
	theirs := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/metrics", other.ID), otherAdmin,
		map[string]any{"key": "theirs", "name": "Theirs", "type": "count", "eventId": "x"}), "id")
	mine := num(metricCreate(e, map[string]any{"key": "mine", "name": "Mine", "type": "count", "eventId": "x"}), "id")
	body := map[string]any{"key": "new", "name": "New", "type": "count", "eventId": "x"}
	for _, tc := range []struct {
		name, key, method, path string
		body                    any
		status                  int
		code                    string
	}{
		{"ReadList", e.Read, "GET", pathf("/v1/apps/%d/metrics", e.App.ID), nil, 200, ""},
		{"ReadGet", e.Read, "GET", pathf("/v1/metrics/%d", mine), nil, 200, ""},
		{"ReadCreate", e.Read, "POST", pathf("/v1/apps/%d/metrics", e.App.ID), body, 403, "FORBIDDEN"},
		{"ReadPatch", e.Read, "PATCH", pathf("/v1/metrics/%d", mine), map[string]any{"name": "x"}, 403, "FORBIDDEN"},
		{"ReadDelete", e.Read, "DELETE", pathf("/v1/metrics/%d", mine), nil, 403, "FORBIDDEN"},
		{"ClientList", e.Cli, "GET", pathf("/v1/apps/%d/metrics", e.App.ID), nil, 403, "FORBIDDEN"},
		{"ClientGet", e.Cli, "GET", pathf("/v1/metrics/%d", mine), nil, 403, "FORBIDDEN"},
		{"ClientCreate", e.Cli, "POST", pathf("/v1/apps/%d/metrics", e.App.ID), body, 403, "FORBIDDEN"},
		{"NoKey", "", "GET", pathf("/v1/metrics/%d", mine), nil, 401, "UNAUTHORIZED"},
		{"OtherAppList", e.Admin, "GET", pathf("/v1/apps/%d/metrics", other.ID), nil, 403, "FORBIDDEN"},
		{"OtherAppCreate", e.Admin, "POST", pathf("/v1/apps/%d/metrics", other.ID), body, 403, "FORBIDDEN"},
		{"OtherAppGet", e.Admin, "GET", pathf("/v1/metrics/%d", theirs), nil, 404, "NOT_FOUND"},
		{"OtherAppPatch", e.Admin, "PATCH", pathf("/v1/metrics/%d", theirs), map[string]any{"name": "x"}, 404, "NOT_FOUND"},
		{"OtherAppDelete", e.Admin, "DELETE", pathf("/v1/metrics/%d", theirs), nil, 404, "NOT_FOUND"},
		{"Missing", e.Admin, "GET", "/v1/metrics/999999", nil, 404, "NOT_FOUND"},
		{"NotNumeric", e.Admin, "GET", "/v1/metrics/abc", nil, 400, "INVALID_REQUEST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do(tc.method, tc.path, tc.key, tc.body)
			if rec.Code != tc.status {
				t.Fatalf("status=%d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != "" && errCode(t, rec) != tc.code {
				t.Fatalf("code=%s, want %s", errCode(t, rec), tc.code)
			}
		})
	}
	got := e.must(http.StatusOK, "GET", pathf("/v1/metrics/%d", theirs), otherAdmin, nil)
	if got["name"] != "Theirs" {
		t.Fatalf("the other app's metric changed: %v", got)
	}
	e.must(http.StatusOK, "DELETE", pathf("/v1/metrics/%d", mine), e.Admin, nil)
	if rec := e.do("GET", pathf("/v1/metrics/%d", mine), e.Admin, nil); rec.Code != http.StatusNotFound {
		t.Fatalf("deleted metric: status=%d", rec.Code)
	}
}

// metricDetails reads an error's details.campaigns ids and details.fields.
func metricDetails(t *testing.T, raw []byte) (ids []int64, fields map[string]string) {
	t.Helper()
	var body struct {
		Error struct {
			Details struct {
				Campaigns []struct {
					ID   int64  `json:"id"`
					Name string `json:"name"`
				} `json:"campaigns"`
				Fields map[string]string `json:"fields"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	for _, c := range body.Error.Details.Campaigns {
		if c.Name == "" {
			t.Fatalf("campaign %d without its name: %s", c.ID, raw)
		}
		ids = append(ids, c.ID)
	}
	return ids, body.Error.Details.Fields
}

func TestCampaignMetricsField(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	var ids []int64
	for i := range 12 {
		ids = append(ids, num(metricCreate(e, map[string]any{"key": fmt.Sprint("m", i), "name": fmt.Sprint("M", i), "type": "count", "eventId": "x"}), "id"))
	}
	other, otherAdmin, _, _ := e.newApp("other", "enterprise", 1_000_000)
	theirs := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/metrics", other.ID), otherAdmin,
		map[string]any{"key": "theirs", "name": "Theirs", "type": "count", "eventId": "x"}), "id")

	t.Run("Default", func(t *testing.T) {
		c := campaignCreate(e, campaignBody(blocks, nil))
		m := c["metrics"].(map[string]any)
		if len(m["secondary"].([]any)) != 0 || len(m["guardrails"].([]any)) != 0 {
			t.Fatalf("metrics=%v, want empty lists", c["metrics"])
		}
	})
	t.Run("Set", func(t *testing.T) {
		c := campaignCreate(e, campaignBody(blocks, map[string]any{
			"metrics": map[string]any{"secondary": []int64{ids[2], ids[0]}, "guardrails": []int64{ids[1]}}}))
		got := campaignGet(e, num(c, "id"))
		if fmt.Sprint(got["metrics"]) != fmt.Sprintf("map[guardrails:[%d] secondary:[%d %d]]", ids[1], ids[2], ids[0]) {
			t.Fatalf("metrics=%v", got["metrics"])
		}
		list := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, nil)
		first := list["data"].([]any)[0].(map[string]any)
		if fmt.Sprint(first["metrics"]) != fmt.Sprint(got["metrics"]) {
			t.Fatalf("listed metrics=%v, want %v", first["metrics"], got["metrics"])
		}
		// A draft's metrics may change, and null clears them.
		upd := e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", num(c, "id")), e.Admin, map[string]any{"metrics": map[string]any{"guardrails": []int64{ids[3]}}})
		if fmt.Sprint(upd["metrics"]) != fmt.Sprintf("map[guardrails:[%d] secondary:[]]", ids[3]) {
			t.Fatalf("updated metrics=%v", upd["metrics"])
		}
		upd = e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", num(c, "id")), e.Admin, map[string]any{"metrics": nil})
		if fmt.Sprint(upd["metrics"]) != "map[guardrails:[] secondary:[]]" {
			t.Fatalf("cleared metrics=%v", upd["metrics"])
		}
	})
	for _, tc := range []struct {
		name    string
		metrics any
		want    map[string]string
	}{
		{"NotObject", []int64{ids[0]}, map[string]string{"metrics": ""}},
		{"UnknownList", map[string]any{"primary": []int64{ids[0]}}, map[string]string{"metrics.primary": ""}},
		{"NotArray", map[string]any{"secondary": ids[0]}, map[string]string{"metrics.secondary": "must be an array of metric ids"}},
		{"TooMany", map[string]any{"guardrails": ids[:11]}, map[string]string{"metrics.guardrails": "must have at most 10 metrics"}},
		{"NotID", map[string]any{"secondary": []any{"x", 0, 1.5}}, map[string]string{"metrics.secondary[0]": "", "metrics.secondary[1]": "", "metrics.secondary[2]": ""}},
		{"Twice", map[string]any{"secondary": []int64{ids[0]}, "guardrails": []int64{ids[0]}}, map[string]string{"metrics.guardrails[0]": ""}},
		{"OtherApp", map[string]any{"secondary": []int64{ids[0], theirs}}, map[string]string{"metrics.secondary[1]": "no such metric in this app"}},
		{"Missing", map[string]any{"guardrails": []int64{999999}}, map[string]string{"metrics.guardrails[0]": "no such metric in this app"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks, map[string]any{"metrics": tc.metrics}))
			validationFields(t, rec, rec.Body.Bytes(), tc.want)
		})
	}
	t.Run("ByState", func(t *testing.T) {
		for _, state := range []string{store.CampaignActive, store.CampaignPaused, store.CampaignCompleted} {
			id := campaignInState(e, blocks, state, map[string]any{"metrics": map[string]any{"secondary": []int64{ids[4]}}})
			rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"metrics": map[string]any{"secondary": []int64{ids[5]}}})
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "metrics cannot be changed while the campaign is "+state) {
				t.Fatalf("%s: metrics changed: %d %s", state, rec.Code, rec.Body)
			}
		}
	})
}

// A metric in use keeps what defines its values: a draft, active or paused
// campaign keeps it from being deleted, and an active or paused one lets
// only its name and description change.
func TestMetricInUse(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	m := num(metricCreate(e, map[string]any{"key": "rev", "name": "Revenue", "type": "sum", "eventId": "buy", "property": "amount"}), "id")
	path := pathf("/v1/metrics/%d", m)
	uses := map[string]any{"metrics": map[string]any{"guardrails": []int64{m}}}
	draft := campaignInState(e, blocks, store.CampaignDraft, uses)

	rec := e.do("DELETE", path, e.Admin, nil)
	if ids, _ := metricDetails(t, rec.Body.Bytes()); rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" || fmt.Sprint(ids) != fmt.Sprint([]int64{draft}) {
		t.Fatalf("delete used by a draft: %d %s", rec.Code, rec.Body)
	}
	// A draft has no values yet: every field may change.
	e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"cap": 100, "windowHours": 48})

	active := campaignInState(e, blocks, store.CampaignActive, uses)
	paused := campaignInState(e, blocks, store.CampaignPaused, uses)
	for _, body := range []map[string]any{{"cap": 50}, {"key": "rev2"}, {"eventId": "order"}, {"windowHours": nil}, {"direction": "decrease"},
		{"type": "count", "property": nil}, {"name": "Renamed", "cap": 50}} {
		rec := e.do("PATCH", path, e.Admin, body)
		ids, fields := metricDetails(t, rec.Body.Bytes())
		if rec.Code != http.StatusBadRequest || fmt.Sprint(ids) != fmt.Sprint([]int64{active, paused}) {
			t.Fatalf("PATCH %v while running: %d %s", body, rec.Code, rec.Body)
		}
		for k := range body {
			if _, named := fields[k]; !named && k != "name" && k != "property" {
				t.Fatalf("PATCH %v: fields %v do not name %s", body, fields, k)
			}
		}
		if _, named := fields["name"]; named {
			t.Fatalf("PATCH %v: name refused: %v", body, fields)
		}
	}
	got := e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"name": "Revenue per user", "description": "Sum of amount", "cap": 100})
	if got["name"] != "Revenue per user" || got["description"] != "Sum of amount" || num(got, "cap") != 100 || num(got, "windowHours") != 48 {
		t.Fatalf("name and description change: %v", got)
	}
	rec = e.do("DELETE", path, e.Admin, nil)
	if ids, _ := metricDetails(t, rec.Body.Bytes()); rec.Code != http.StatusBadRequest || fmt.Sprint(ids) != fmt.Sprint([]int64{draft, active, paused}) {
		t.Fatalf("delete used by running campaigns: %d %s", rec.Code, rec.Body)
	}

	// Once no draft, active or paused campaign uses it, it may change and
	// go; the completed campaign loses it.
	campaignSetStatus(e, active, "completed")
	campaignSetStatus(e, paused, "completed")
	e.must(http.StatusOK, "PATCH", path, e.Admin, map[string]any{"cap": 7})
	e.must(http.StatusOK, "DELETE", pathf("/v1/campaigns/%d", draft), e.Admin, nil)
	e.must(http.StatusOK, "DELETE", path, e.Admin, nil)
	if got := campaignGet(e, active)["metrics"]; fmt.Sprint(got) != "map[guardrails:[] secondary:[]]" {
		t.Fatalf("completed campaign's metrics after the delete: %v", got)
	}
}

// The analytics carry each metric of the campaign, in its units, with
// Welch's comparison per treatment and, for guardrails, whether it
// regressed.
func TestAnalyticsMetrics(t *testing.T) {
	e, clock := evSetup(t)
	rev := num(metricCreate(e, map[string]any{"key": "rev", "name": "Revenue", "type": "sum", "eventId": "buy", "property": "amount"}), "id")
	clicks := num(metricCreate(e, map[string]any{"key": "clicks", "name": "Clicks", "type": "count", "eventId": "click"}), "id")
	c := e.evCreateCampaign("signup", map[string]any{"metrics": map[string]any{"secondary": []int64{clicks}, "guardrails": []int64{rev}}})
	for i := range 40 {
		e.evAssign(c.id, map[string]any{"userId": fmt.Sprint("u", i)})
	}
	clock.Add(time.Second)
	// The treatment (odd users) spends about 9 less per user: a
	// regression the always-valid sequence sees at 40 users.
	for i := range 40 {
		amount := 10 + i%4/2
		if i%2 == 1 {
			amount -= 9
		}
		e.evLog(map[string]any{"eventId": "buy", "userId": fmt.Sprint("u", i), "metadata": map[string]any{"amount": amount}})
		if i < 4 {
			e.evLog(map[string]any{"eventId": "click", "userId": fmt.Sprint("u", i)})
		}
	}
	m := e.anaGet(c.id, e.Read)
	ms, _ := m["metrics"].([]any)
	if len(ms) != 2 {
		t.Fatalf("metrics=%v, want 2 entries", m["metrics"])
	}
	keysOf := func(v any) string {
		var ks []string
		for k := range v.(map[string]any) {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}
	for i, want := range []struct {
		id         int64
		key, role  string
		regressed  any
		treatment  string
		meanC      float64
		meanT      float64
		difference float64
	}{
		{clicks, "clicks", "secondary", nil, "difference,differenceInterval,pValue,stdDev,total,uplift,users,variantId,mean", 0.1, 0.1, 0},
		{rev, "rev", "guardrail", true, "difference,differenceInterval,mean,pValue,regressed,stdDev,total,uplift,users,variantId", 10.5, 1.5, -9},
	} {
		entry := ms[i].(map[string]any)
		if num(entry, "metricId") != want.id || entry["key"] != want.key || entry["role"] != want.role || entry["direction"] != "increase" || entry["name"] == nil || entry["type"] == nil {
			t.Fatalf("metrics[%d]=%v", i, entry)
		}
		if got := keysOf(entry); got != "direction,key,metricId,name,role,type,variants" {
			t.Fatalf("metrics[%d] fields %s", i, got)
		}
		vs := entry["variants"].([]any)
		ctrl, tr := vs[0].(map[string]any), vs[1].(map[string]any)
		if got := keysOf(ctrl); got != "mean,stdDev,total,users,variantId" {
			t.Fatalf("control fields %s", got)
		}
		wantT := strings.Split(want.treatment, ",")
		sort.Strings(wantT)
		if got := keysOf(tr); got != strings.Join(wantT, ",") {
			t.Fatalf("%s treatment fields %s, want %s", want.key, got, strings.Join(wantT, ","))
		}
		if num(ctrl, "users") != 20 || num(tr, "users") != 20 || num(ctrl, "variantId") != c.variants[0] {
			t.Fatalf("users %v/%v", ctrl["users"], tr["users"])
		}
		anaClose(t, want.key+" control mean", anaNum(t, ctrl, "mean"), want.meanC)
		anaClose(t, want.key+" treatment mean", anaNum(t, tr, "mean"), want.meanT)
		anaClose(t, want.key+" difference", anaNum(t, tr, "difference"), want.difference)
		if want.regressed != nil && tr["regressed"] != want.regressed {
			t.Fatalf("%s regressed=%v, want %v", want.key, tr["regressed"], want.regressed)
		}
	}
	// Revenue: per-user values 10,10,11,11… against 1,1,2,2…: equal
	// variances, so Welch's p is that of the t-test with 38 df.
	tr := ms[1].(map[string]any)["variants"].([]any)[1].(map[string]any)
	if p := anaNum(t, tr, "pValue"); p > 1e-20 {
		t.Fatalf("revenue pValue=%v, want tiny", p)
	}
	if iv := tr["differenceInterval"].([]any); iv[0].(float64) > -9 || iv[1].(float64) < -9 {
		t.Fatalf("interval %v does not hold -9", iv)
	}
}
