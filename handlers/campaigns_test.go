package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"service/assign"
	"service/internal/testclock"
	"service/store"
)

// campaignFarEnd is an endDate no test clock reaches.
const campaignFarEnd = "2099-01-01T00:00:00.000Z"

// campaignUseClock makes the store read its time from a clock set to t.
func campaignUseClock(e *testEnv, t time.Time) *testclock.Clock {
	c := testclock.New(t)
	e.DB.Now = c.Now
	return c
}

// campaignEnvAt is newEnv on a database file the test names, so that it
// can reopen it.
func campaignEnvAt(t testing.TB, path string) *testEnv {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &testEnv{t: t, DB: db, Srv: newServer(db)}
	e.App, e.Admin, e.Read, e.Cli = e.newApp("test", "enterprise", 1_000_000)
	return e
}

// campaignReopen closes e's database and serves the same file, keys and
// app from a fresh store, as a restarted process would.
func campaignReopen(e *testEnv, path string) *testEnv {
	e.t.Helper()
	if err := e.DB.Close(); err != nil {
		e.t.Fatal(err)
	}
	db, err := store.Open(context.Background(), path)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	return &testEnv{t: e.t, DB: db, Srv: newServer(db),
		App: e.App, Admin: e.Admin, Read: e.Read, Cli: e.Cli}
}

// campaignBlocks creates n published content blocks in e's app.
func campaignBlocks(e *testEnv, n int) []int64 {
	e.t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = e.mustContent(fmt.Sprintf("block %c", 'A'+i), store.ContentPublished)
	}
	return ids
}

// campaignBody is a valid create body over blocks, with extra fields
// merged in (a nil value deletes the field).
func campaignBody(blocks []int64, extra map[string]any) map[string]any {
	vs := make([]any, len(blocks))
	for i, b := range blocks {
		vs[i] = map[string]any{"contentViewId": b}
	}
	m := map[string]any{"name": "Spring sale", "endDate": campaignFarEnd, "variants": vs}
	for k, v := range extra {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	return m
}

// campaignCreate creates a campaign in e's app and returns the answer.
func campaignCreate(e *testEnv, body map[string]any) map[string]any {
	e.t.Helper()
	return e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, body)
}

// campaignGet returns the campaign as GET answers it.
func campaignGet(e *testEnv, id int64) map[string]any {
	e.t.Helper()
	return e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d", id), e.Admin, nil)
}

// campaignVariantIDs returns the ids of the campaign's variants in
// ascending order, the order of the hash ranges.
func campaignVariantIDs(e *testEnv, id int64) []int64 {
	e.t.Helper()
	var ids []int64
	for _, v := range campaignGet(e, id)["variants"].([]any) {
		ids = append(ids, num(v.(map[string]any), "id"))
	}
	return ids
}

// campaignSetStatus moves a campaign through the status endpoint.
func campaignSetStatus(e *testEnv, id int64, status string) {
	e.t.Helper()
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", id), e.Admin, map[string]any{"status": status})
}

// campaignInState creates a two-variant campaign and walks it to state,
// which may also be "archived-from-completed".
func campaignInState(e *testEnv, blocks []int64, state string, extra map[string]any) int64 {
	e.t.Helper()
	id := num(campaignCreate(e, campaignBody(blocks, extra)), "id")
	path := map[string][]string{
		store.CampaignDraft:       nil,
		store.CampaignActive:      {"active"},
		store.CampaignPaused:      {"active", "paused"},
		store.CampaignCompleted:   {"active", "completed"},
		store.CampaignArchived:    {"archived"},
		"archived-from-completed": {"active", "completed", "archived"},
	}[state]
	for _, s := range path {
		campaignSetStatus(e, id, s)
	}
	return id
}

// campaignDetails returns error.details of an error answer.
func campaignDetails(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("bad error body: %s", rec.Body.String())
	}
	return body.Error.Details
}

// campaignWantFields fails unless rec is a 400 INVALID_REQUEST whose
// details.fields names exactly want.
func campaignWantFields(t testing.TB, rec *httptest.ResponseRecorder, want ...string) {
	t.Helper()
	if got, wantCode := rec.Code, http.StatusBadRequest; got != wantCode {
		t.Fatalf("status=%d, want %d; body=%s", got, wantCode, rec.Body.String())
	}
	if got, wantCode := errCode(t, rec), "INVALID_REQUEST"; got != wantCode {
		t.Fatalf("code=%s, want %s", got, wantCode)
	}
	var got []string
	for k := range fieldsOf(t, rec) {
		got = append(got, k)
	}
	sort.Strings(got)
	want = slices.Clone(want)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("details.fields names %v, want %v; body=%s", got, want, rec.Body.String())
	}
}

// campaignWantRefusedMove fails unless rec refuses the move from -> to.
func campaignWantRefusedMove(t testing.TB, rec *httptest.ResponseRecorder, from, to string) {
	t.Helper()
	if got, want := rec.Code, http.StatusBadRequest; got != want {
		t.Fatalf("%s->%s: status=%d, want %d; body=%s", from, to, got, want, rec.Body.String())
	}
	if got, want := errCode(t, rec), "INVALID_REQUEST"; got != want {
		t.Fatalf("%s->%s: code=%s, want %s", from, to, got, want)
	}
	d := campaignDetails(t, rec)
	if d["from"] != from || d["to"] != to {
		t.Fatalf("details=%v, want from %q to %q", d, from, to)
	}
}

// campaignAsk sends an SDK variant request with the client key and returns
// the raw answer.
func campaignAsk(e *testEnv, campaignID int64, body any) *httptest.ResponseRecorder {
	e.t.Helper()
	return e.do("POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, campaignID), e.Cli, body)
}

// campaignAnswer is a decoded variant answer.
type campaignAnswer struct {
	CampaignID    int64  `json:"campaignId"`
	VariantID     *int64 `json:"variantId"`
	VariantName   string `json:"variantName"`
	ContentViewID int64  `json:"contentViewId"`
	ContentView   *struct {
		ID     int64             `json:"id"`
		Name   string            `json:"name"`
		Status string            `json:"status"`
		Items  []json.RawMessage `json:"items"`
	} `json:"contentView"`
	ImpressionRecorded *bool   `json:"impressionRecorded"`
	Reason             *string `json:"reason"`
}

// campaignAssign asks for a user's variant and fails unless one is given.
func campaignAssign(e *testEnv, campaignID int64, body any) campaignAnswer {
	e.t.Helper()
	rec := campaignAsk(e, campaignID, body)
	if rec.Code != http.StatusOK {
		e.t.Fatalf("variant: status=%d; body=%s", rec.Code, rec.Body.String())
	}
	var a campaignAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		e.t.Fatalf("variant: %v; body=%s", err, rec.Body.String())
	}
	if a.VariantID == nil || a.ImpressionRecorded == nil || a.ContentView == nil {
		e.t.Fatalf("variant: not assigned: %s", rec.Body.String())
	}
	return a
}

// campaignWantNotActive fails unless the user is refused with the exact
// not-active answer.
func campaignWantNotActive(e *testEnv, campaignID int64, body any) {
	e.t.Helper()
	rec := campaignAsk(e, campaignID, body)
	want := fmt.Sprintf(`{"campaignId":%d,"variantId":null,"reason":"campaign_not_active"}`, campaignID)
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		e.t.Fatalf("variant: status=%d body=%s, want 200 %s", rec.Code, rec.Body.String(), want)
	}
}

// campaignImpressions returns the campaign's totalImpressions from both the
// campaign and the analytics endpoints, which must agree.
func campaignImpressions(e *testEnv, id int64) int64 {
	e.t.Helper()
	a := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", id), e.Admin, nil)
	c := campaignGet(e, id)["analytics"].(map[string]any)
	if num(a, "totalImpressions") != num(c, "totalImpressions") {
		e.t.Fatalf("analytics totalImpressions=%v, campaign analytics=%v", a["totalImpressions"], c["totalImpressions"])
	}
	return num(a, "totalImpressions")
}

func TestCampaignCreateDefaultsAndShapes(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 3)
	m := campaignCreate(e, campaignBody(blocks, nil))
	for _, k := range []string{"id", "name", "status", "createdAt"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("create answer lacks %s: %v", k, m)
		}
	}
	if got, want := m["status"], "draft"; got != want {
		t.Fatalf("status=%v, want %v (the default)", got, want)
	}
	if s, _ := m["createdAt"].(string); !contentTimeRE.MatchString(s) {
		t.Fatalf("createdAt=%v, want RFC 3339 UTC with milliseconds", m["createdAt"])
	}
	id := num(m, "id")

	c := campaignGet(e, id)
	for k, want := range map[string]any{"assignmentType": "weighted", "timezone": "UTC", "audienceId": nil,
		"goalEventId": nil, "startDate": nil, "endDate": campaignFarEnd, "description": "", "name": "Spring sale"} {
		if got := c[k]; got != want {
			t.Fatalf("%s=%v, want %v", k, got, want)
		}
	}
	if got, want := c["analytics"], map[string]any{"totalImpressions": 0.0, "totalConversions": 0.0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("analytics=%v, want %v", got, want)
	}
	vs := c["variants"].([]any)
	wantAlloc := []float64{33.33, 33.33, 33.34}
	for i, v := range vs {
		v := v.(map[string]any)
		if got, want := v["name"], "Variant "+string(rune('A'+i)); got != want {
			t.Fatalf("variants[%d].name=%v, want %v", i, got, want)
		}
		if got, want := v["trafficAllocation"], wantAlloc[i]; got != want {
			t.Fatalf("variants[%d].trafficAllocation=%v, want %v", i, got, want)
		}
		if got, want := v["isControl"], i == 0; got != want {
			t.Fatalf("variants[%d].isControl=%v, want %v", i, got, want)
		}
		if got, want := num(v, "contentViewId"), blocks[i]; got != want {
			t.Fatalf("variants[%d].contentViewId=%d, want %d", i, got, want)
		}
		if got, want := num(v, "campaignId"), id; got != want {
			t.Fatalf("variants[%d].campaignId=%d, want %d", i, got, want)
		}
	}

	t.Run("ExplicitValuesKept", func(t *testing.T) {
		body := campaignBody(nil, map[string]any{"variants": []any{
			map[string]any{"contentViewId": blocks[0], "name": "Old", "trafficAllocation": 25},
			map[string]any{"contentViewId": blocks[1], "name": "New", "trafficAllocation": 75, "isControl": true},
		}, "description": "d", "goalEventId": "purchase", "assignmentType": "round_robin", "startDate": "2030-01-01T00:00:00Z"})
		c := campaignGet(e, num(campaignCreate(e, body), "id"))
		if c["description"] != "d" || c["goalEventId"] != "purchase" || c["assignmentType"] != "round_robin" ||
			c["startDate"] != "2030-01-01T00:00:00.000Z" {
			t.Fatalf("campaign=%v", c)
		}
		vs := c["variants"].([]any)
		for i, want := range []struct {
			name    string
			alloc   float64
			control bool
		}{{"Old", 25, false}, {"New", 75, true}} {
			v := vs[i].(map[string]any)
			if v["name"] != want.name || v["trafficAllocation"] != want.alloc || v["isControl"] != want.control {
				t.Fatalf("variants[%d]=%v, want %+v", i, v, want)
			}
		}
	})

	t.Run("ListShape", func(t *testing.T) {
		l := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Read, nil)
		data := l["data"].([]any)
		if len(data) == 0 {
			t.Fatalf("empty list: %v", l)
		}
		for _, item := range data {
			item := item.(map[string]any)
			for _, k := range []string{"id", "name", "status", "startDate", "endDate", "variants"} {
				if _, ok := item[k]; !ok {
					t.Fatalf("list item lacks %s: %v", k, item)
				}
			}
			for _, v := range item["variants"].([]any) {
				for _, k := range []string{"id", "contentViewId", "name"} {
					if _, ok := v.(map[string]any)[k]; !ok {
						t.Fatalf("list variant lacks %s: %v", k, v)
					}
				}
			}
		}
	})
}

func TestCampaignCreateValidation(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 3)
	archived := e.mustContent("old", store.ContentArchived)
	app2, admin2, _, _ := e.newApp("other", "enterprise", 1_000_000)
	foreign := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", app2.ID), admin2, map[string]any{"name": "theirs"}), "id")
	ctx := context.Background()
	def := json.RawMessage(`{"logic":"AND","rules":[{"field":"plan","operator":"equals","value":"pro"}]}`)
	name, archivedStatus := "aud", store.AudienceArchived
	foreignAud, err := e.DB.CreateAudience(ctx, app2.ID, store.AudienceInput{Name: &name, Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	archivedAud, err := e.DB.CreateAudience(ctx, e.App.ID, store.AudienceInput{Name: &name, Status: &archivedStatus, Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	liveAud, err := e.DB.CreateAudience(ctx, e.App.ID, store.AudienceInput{Name: &name, Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	v := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cv := func(i int) map[string]any { return v("contentViewId", blocks[i]) }
	many := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = cv(i % len(blocks))
		}
		return out
	}

	for _, tc := range []struct {
		name   string
		extra  map[string]any // merged into a valid body; nil values delete
		fields []string       // nil: the body is valid
	}{
		{"NameMissing", map[string]any{"name": nil}, []string{"name"}},
		{"NameBlank", map[string]any{"name": "   "}, []string{"name"}},
		{"NameWrongType", map[string]any{"name": 5}, []string{"name"}},
		{"VariantsMissing", map[string]any{"variants": nil}, []string{"variants"}},
		{"VariantsEmpty", map[string]any{"variants": []any{}}, []string{"variants"}},
		{"VariantsOne", map[string]any{"variants": many(1)}, []string{"variants"}},
		{"VariantsTwenty", map[string]any{"variants": many(20)}, nil},
		{"VariantsTwentyOne", map[string]any{"variants": many(21)}, []string{"variants"}},
		{"VariantsNotArray", map[string]any{"variants": "x"}, []string{"variants"}},
		{"ContentViewMissing", map[string]any{"variants": []any{cv(0), v("name", "B")}}, []string{"variants[1].contentViewId"}},
		{"ContentViewZero", map[string]any{"variants": []any{cv(0), v("contentViewId", 0)}}, []string{"variants[1].contentViewId"}},
		{"ContentViewUnknown", map[string]any{"variants": []any{cv(0), v("contentViewId", 99999)}}, []string{"variants[1].contentViewId"}},
		{"ContentViewOtherApp", map[string]any{"variants": []any{v("contentViewId", foreign), cv(1)}}, []string{"variants[0].contentViewId"}},
		{"ContentViewArchived", map[string]any{"variants": []any{cv(0), v("contentViewId", archived)}}, []string{"variants[1].contentViewId"}},
		{"ContentViewDraftAllowed", map[string]any{"variants": []any{cv(0), v("contentViewId", e.mustContent("draft", store.ContentDraft))}}, nil},
		{"AllocationNegative", map[string]any{"variants": []any{v("contentViewId", blocks[0], "trafficAllocation", -1), v("contentViewId", blocks[1], "trafficAllocation", 101)}},
			[]string{"variants[0].trafficAllocation", "variants[1].trafficAllocation"}},
		{"AllocationNotSumming", map[string]any{"variants": []any{v("contentViewId", blocks[0], "trafficAllocation", 50), v("contentViewId", blocks[1], "trafficAllocation", 49.98)}}, []string{"variants"}},
		{"AllocationWithinTolerance", map[string]any{"variants": []any{v("contentViewId", blocks[0], "trafficAllocation", 50), v("contentViewId", blocks[1], "trafficAllocation", 49.995)}}, nil},
		{"AllocationZeroAllowed", map[string]any{"variants": []any{v("contentViewId", blocks[0], "trafficAllocation", 0), v("contentViewId", blocks[1], "trafficAllocation", 100)}}, nil},
		{"AllocationForSomeOnly", map[string]any{"variants": []any{v("contentViewId", blocks[0], "trafficAllocation", 100), cv(1)}}, []string{"variants"}},
		{"AllocationWrongType", map[string]any{"variants": []any{v("contentViewId", blocks[0], "trafficAllocation", "50"), cv(1)}}, []string{"variants[0].trafficAllocation"}},
		{"TwoControls", map[string]any{"variants": []any{v("contentViewId", blocks[0], "isControl", true), v("contentViewId", blocks[1], "isControl", true)}}, []string{"variants"}},
		{"VariantNameBlank", map[string]any{"variants": []any{v("contentViewId", blocks[0], "name", " "), cv(1)}}, []string{"variants[0].name"}},
		{"StatusPaused", map[string]any{"status": "paused"}, []string{"status"}},
		{"StatusCompleted", map[string]any{"status": "completed"}, []string{"status"}},
		{"StatusArchived", map[string]any{"status": "archived"}, []string{"status"}},
		{"StatusUnknown", map[string]any{"status": "running"}, []string{"status"}},
		{"TimezoneUnknown", map[string]any{"timezone": "Mars/Olympus_Mons"}, []string{"timezone"}},
		{"TimezoneLocal", map[string]any{"timezone": "Local"}, []string{"timezone"}},
		{"TimezoneEmpty", map[string]any{"timezone": ""}, []string{"timezone"}},
		{"EndBeforeStart", map[string]any{"startDate": "2030-02-01T00:00:00Z", "endDate": "2030-01-01T00:00:00Z"}, []string{"endDate"}},
		{"EndEqualsStart", map[string]any{"startDate": "2030-02-01T00:00:00Z", "endDate": "2030-02-01T00:00:00Z"}, []string{"endDate"}},
		{"StartNotADate", map[string]any{"startDate": "next tuesday"}, []string{"startDate"}},
		{"EndWrongType", map[string]any{"endDate": 1700000000}, []string{"endDate"}},
		{"AudienceString", map[string]any{"audienceId": "abc"}, []string{"audienceId"}},
		{"AudienceNegative", map[string]any{"audienceId": -1}, []string{"audienceId"}},
		{"AudienceUnknown", map[string]any{"audienceId": 99999}, []string{"audienceId"}},
		{"AudienceOtherApp", map[string]any{"audienceId": foreignAud.ID}, []string{"audienceId"}},
		{"AudienceArchived", map[string]any{"audienceId": archivedAud.ID}, []string{"audienceId"}},
		{"AudienceActive", map[string]any{"audienceId": liveAud.ID}, nil},
		{"AssignmentUnknown", map[string]any{"assignmentType": "random"}, []string{"assignmentType"}},
		{"GoalBlank", map[string]any{"goalEventId": ""}, []string{"goalEventId"}},
		{"GoalWrongType", map[string]any{"goalEventId": 7}, []string{"goalEventId"}},
		{"DescriptionTooLong", map[string]any{"description": strings.Repeat("x", 5001)}, []string{"description"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks[:2], tc.extra))
			if tc.fields == nil {
				if rec.Code != http.StatusCreated {
					t.Fatalf("status=%d, want 201; body=%s", rec.Code, rec.Body.String())
				}
				return
			}
			campaignWantFields(t, rec, tc.fields...)
		})
	}

	t.Run("EveryBadFieldAtOnce", func(t *testing.T) {
		body := map[string]any{
			"status": "paused", "timezone": "Nowhere/City", "startDate": "2030-02-01T00:00:00Z", "endDate": "2030-01-01T00:00:00Z",
			"audienceId": "x", "assignmentType": "random", "goalEventId": "", "description": strings.Repeat("x", 5001),
			"variants": []any{
				v("trafficAllocation", 150, "isControl", true),
				v("contentViewId", blocks[1], "isControl", true),
			},
		}
		campaignWantFields(t, e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, body),
			"name", "status", "timezone", "endDate", "audienceId", "assignmentType", "goalEventId", "description",
			"variants", "variants[0].contentViewId", "variants[0].trafficAllocation")
	})

	// Fields whose fault only the database knows are reported together
	// with the ones any request shows.
	t.Run("EveryBadFieldAtOnceWithReferences", func(t *testing.T) {
		body := map[string]any{
			"audienceId": 99999,
			"variants":   []any{v("contentViewId", foreign), v("contentViewId", archived)},
		}
		campaignWantFields(t, e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, body),
			"name", "audienceId", "variants[0].contentViewId", "variants[1].contentViewId")
	})

	t.Run("ActiveWithoutEndDate", func(t *testing.T) {
		before := num(e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, nil)["pagination"].(map[string]any), "total")
		rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks[:2], map[string]any{"status": "active", "endDate": nil}))
		if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
			t.Fatalf("status=%d, want 400; body=%s", rec.Code, rec.Body.String())
		}
		after := num(e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, nil)["pagination"].(map[string]any), "total")
		if after != before {
			t.Fatalf("a refused create left a campaign behind: total %d -> %d", before, after)
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		for _, body := range []string{"", "[]", "{", `{"name":"x",}`} {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, body)
			if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
				t.Fatalf("body %q: status=%d; body=%s", body, rec.Code, rec.Body.String())
			}
		}
	})
}

func TestCampaignTimezone(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	for _, tc := range []struct {
		name, tz, start, want string
	}{
		{"BerlinWinter", "Europe/Berlin", "2026-12-01T00:00:00", "2026-11-30T23:00:00.000Z"},
		{"BerlinSummer", "Europe/Berlin", "2026-07-01T00:00:00", "2026-06-30T22:00:00.000Z"},
		{"BerlinMinutes", "Europe/Berlin", "2026-12-01T09:30", "2026-12-01T08:30:00.000Z"},
		{"BerlinDateOnly", "Europe/Berlin", "2026-12-01", "2026-11-30T23:00:00.000Z"},
		{"NewYork", "America/New_York", "2026-12-01T00:00:00", "2026-12-01T05:00:00.000Z"},
		{"OffsetWins", "Europe/Berlin", "2026-12-01T00:00:00+05:00", "2026-11-30T19:00:00.000Z"},
		{"ZuluWins", "Europe/Berlin", "2026-12-01T00:00:00Z", "2026-12-01T00:00:00.000Z"},
		{"DefaultUTC", "", "2026-12-01T00:00:00", "2026-12-01T00:00:00.000Z"},
		{"Fraction", "UTC", "2026-12-01T00:00:00.123456Z", "2026-12-01T00:00:00.123Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]any{"startDate": tc.start}
			if tc.tz != "" {
				extra["timezone"] = tc.tz
			}
			c := campaignGet(e, num(campaignCreate(e, campaignBody(blocks, extra)), "id"))
			if got := c["startDate"]; got != tc.want {
				t.Fatalf("startDate=%v, want %v", got, tc.want)
			}
			wantTZ := tc.tz
			if wantTZ == "" {
				wantTZ = "UTC"
			}
			if got := c["timezone"]; got != wantTZ {
				t.Fatalf("timezone=%v, want %v", got, wantTZ)
			}
		})
	}

	t.Run("PatchReadsInCampaignZone", func(t *testing.T) {
		id := num(campaignCreate(e, campaignBody(blocks, map[string]any{"timezone": "Europe/Berlin"})), "id")
		c := e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"startDate": "2026-12-01T00:00:00"})
		if got, want := c["startDate"], "2026-11-30T23:00:00.000Z"; got != want {
			t.Fatalf("startDate=%v, want %v", got, want)
		}
		// A new zone in the same body is the one the date is read in.
		c = e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin,
			map[string]any{"timezone": "Asia/Tokyo", "startDate": "2026-12-01T00:00:00"})
		if got, want := c["startDate"], "2026-11-30T15:00:00.000Z"; got != want {
			t.Fatalf("startDate=%v, want %v", got, want)
		}
	})
}

func TestCampaignMoves(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	type via struct {
		name string
		move func(id int64, to string) *httptest.ResponseRecorder
	}
	vias := []via{
		{"StatusEndpoint", func(id int64, to string) *httptest.ResponseRecorder {
			return e.do("PATCH", pathf("/v1/campaigns/%d/status", id), e.Admin, map[string]any{"status": to})
		}},
		{"Patch", func(id int64, to string) *httptest.ResponseRecorder {
			return e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"status": to})
		}},
	}

	t.Run("Allowed", func(t *testing.T) {
		for _, tc := range []struct{ from, to string }{
			{"draft", "active"}, {"active", "paused"}, {"paused", "active"}, {"active", "completed"},
			{"paused", "completed"}, {"draft", "archived"}, {"completed", "archived"},
		} {
			for _, v := range vias {
				t.Run(v.name+"/"+tc.from+"To"+tc.to, func(t *testing.T) {
					id := campaignInState(e, blocks, tc.from, nil)
					rec := v.move(id, tc.to)
					if rec.Code != http.StatusOK {
						t.Fatalf("status=%d, want 200; body=%s", rec.Code, rec.Body.String())
					}
					var c map[string]any
					if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil {
						t.Fatal(err)
					}
					if got := c["status"]; got != tc.to {
						t.Fatalf("answer status=%v, want %v", got, tc.to)
					}
					if got := campaignGet(e, id)["status"]; got != tc.to {
						t.Fatalf("stored status=%v, want %v", got, tc.to)
					}
				})
			}
		}
	})

	t.Run("ActivationStartsNow", func(t *testing.T) {
		id := campaignInState(e, blocks, "draft", map[string]any{"startDate": "2098-01-01T00:00:00Z"})
		before := time.Now().Add(-time.Second)
		campaignSetStatus(e, id, "active")
		start, err := time.Parse(time.RFC3339, campaignGet(e, id)["startDate"].(string))
		if err != nil || start.Before(before) || start.After(time.Now().Add(time.Second)) {
			t.Fatalf("startDate=%v, want the moment of activation", start)
		}
	})

	t.Run("Unarchive", func(t *testing.T) {
		for _, tc := range []struct{ state, back string }{
			{"archived", "draft"}, {"archived-from-completed", "completed"},
		} {
			id := campaignInState(e, blocks, tc.state, nil)
			c := e.must(http.StatusOK, "POST", pathf("/v1/campaigns/%d/unarchive", id), e.Admin, nil)
			if got := c["status"]; got != tc.back {
				t.Fatalf("%s: unarchived to %v, want %v", tc.state, got, tc.back)
			}
		}
		// Unarchiving what is not archived names the move asked for, not
		// the state an archived campaign would return to.
		for _, state := range []string{"draft", "active", "paused", "completed"} {
			id := campaignInState(e, blocks, state, nil)
			rec := e.do("POST", pathf("/v1/campaigns/%d/unarchive", id), e.Admin, nil)
			if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
				t.Fatalf("%s: unarchive answered %d %s", state, rec.Code, rec.Body.String())
			}
			d := campaignDetails(t, rec)
			if d["from"] != state || d["move"] != "unarchive" || d["to"] != nil {
				t.Fatalf("%s: details=%v, want from %s, move unarchive", state, d, state)
			}
			if msg := rec.Body.String(); !strings.Contains(msg, "cannot be unarchived: it is "+state+", not archived") {
				t.Fatalf("%s: message %s", state, msg)
			}
		}
	})

	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct{ from, to string }{
			{"draft", "paused"}, {"draft", "completed"}, {"active", "draft"}, {"active", "archived"},
			{"paused", "draft"}, {"paused", "archived"}, {"completed", "active"}, {"completed", "paused"},
			{"completed", "draft"}, {"archived", "active"}, {"archived", "draft"}, {"archived", "completed"},
		} {
			for _, v := range vias {
				t.Run(v.name+"/"+tc.from+"To"+tc.to, func(t *testing.T) {
					id := campaignInState(e, blocks, tc.from, nil)
					campaignWantRefusedMove(t, v.move(id, tc.to), tc.from, tc.to)
					if got := campaignGet(e, id)["status"]; got != tc.from {
						t.Fatalf("status after a refused move=%v, want %v", got, tc.from)
					}
				})
			}
		}
	})

	// The status endpoint asks for a move, so staying put is refused;
	// PATCH /campaigns/{id} sets fields, so an unchanged status is a no-op
	// that lets clients send back the object they read.
	t.Run("SameState", func(t *testing.T) {
		for _, s := range []string{"draft", "active", "paused", "completed", "archived"} {
			id := campaignInState(e, blocks, s, nil)
			campaignWantRefusedMove(t, vias[0].move(id, s), s, s)
			if rec := vias[1].move(id, s); rec.Code != http.StatusOK {
				t.Fatalf("PATCH %s with unchanged status: %d %s", s, rec.Code, rec.Body.String())
			}
		}
	})

	t.Run("BadStatus", func(t *testing.T) {
		id := campaignInState(e, blocks, "draft", nil)
		for _, body := range []any{map[string]any{"status": "running"}, map[string]any{}, map[string]any{"status": 1}} {
			campaignWantFields(t, e.do("PATCH", pathf("/v1/campaigns/%d/status", id), e.Admin, body), "status")
		}
		campaignWantFields(t, vias[1].move(id, "running"), "status")
	})

	t.Run("ActivationNeedsFutureEnd", func(t *testing.T) {
		for _, extra := range []map[string]any{
			{"endDate": nil},
			{"startDate": "2020-01-01T00:00:00Z", "endDate": "2020-02-01T00:00:00Z"},
		} {
			for _, v := range vias {
				id := campaignInState(e, blocks, "draft", extra)
				rec := v.move(id, "active")
				campaignWantRefusedMove(t, rec, "draft", "active")
				if _, ok := fieldsOf(t, rec)["endDate"]; !ok {
					t.Fatalf("%s: details.fields lacks endDate: %s", v.name, rec.Body.String())
				}
			}
		}
		// Resuming once the endDate has passed is an activation too.
		id := campaignInState(e, blocks, "paused", map[string]any{"endDate": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		campaignUseClock(e, time.Now().Add(2*time.Hour))
		defer func() { e.DB.Now = time.Now }()
		campaignWantRefusedMove(t, vias[0].move(id, "active"), "paused", "active")
	})

	t.Run("NotFound", func(t *testing.T) {
		_, admin2, _, _ := e.newApp("other", "enterprise", 1_000_000)
		id := campaignInState(e, blocks, "draft", nil)
		for _, tc := range []struct{ method, path string }{
			{"PATCH", "/v1/campaigns/%d/status"}, {"PATCH", "/v1/campaigns/%d"}, {"GET", "/v1/campaigns/%d"},
			{"DELETE", "/v1/campaigns/%d"}, {"POST", "/v1/campaigns/%d/unarchive"}, {"GET", "/v1/campaigns/%d/analytics"},
		} {
			for _, target := range []int64{id, 99999} {
				key := admin2
				if target == 99999 {
					key = e.Admin
				}
				rec := e.do(tc.method, pathf(tc.path, target), key, map[string]any{"status": "active"})
				if rec.Code != http.StatusNotFound || errCode(t, rec) != "NOT_FOUND" {
					t.Fatalf("%s %s: status=%d, want 404; body=%s", tc.method, pathf(tc.path, target), rec.Code, rec.Body.String())
				}
			}
		}
		if got := campaignGet(e, id)["status"]; got != "draft" {
			t.Fatalf("another app's key moved the campaign to %v", got)
		}
	})
}

func TestCampaignEditRules(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 3)
	name, def := "aud", json.RawMessage(`{"logic":"AND","rules":[{"field":"plan","operator":"equals","value":"pro"}]}`)
	aud, err := e.DB.CreateAudience(context.Background(), e.App.ID, store.AudienceInput{Name: &name, Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	newVariants := []any{map[string]any{"contentViewId": blocks[2], "name": "X"}, map[string]any{"contentViewId": blocks[0], "name": "Y"}}
	later, earlier := "2099-06-01T00:00:00.000Z", "2098-06-01T00:00:00.000Z"

	for _, tc := range []struct {
		state   string
		body    map[string]any
		refused string // "" when allowed; else the field details.fields names
		check   func(c map[string]any) bool
	}{
		{"draft", map[string]any{"name": "Renamed"}, "", func(c map[string]any) bool { return c["name"] == "Renamed" }},
		{"draft", map[string]any{"description": "d"}, "", func(c map[string]any) bool { return c["description"] == "d" }},
		{"draft", map[string]any{"variants": newVariants}, "", func(c map[string]any) bool {
			vs := c["variants"].([]any)
			return len(vs) == 2 && vs[0].(map[string]any)["name"] == "X" && num(vs[0].(map[string]any), "contentViewId") == blocks[2]
		}},
		{"draft", map[string]any{"goalEventId": "purchase"}, "", func(c map[string]any) bool { return c["goalEventId"] == "purchase" }},
		{"draft", map[string]any{"audienceId": aud.ID}, "", func(c map[string]any) bool { return num(c, "audienceId") == aud.ID }},
		{"draft", map[string]any{"assignmentType": "round_robin"}, "", func(c map[string]any) bool { return c["assignmentType"] == "round_robin" }},
		{"draft", map[string]any{"startDate": "2030-01-01T00:00:00Z", "endDate": earlier}, "", func(c map[string]any) bool {
			return c["startDate"] == "2030-01-01T00:00:00.000Z" && c["endDate"] == earlier
		}},
		{"draft", map[string]any{"endDate": nil}, "", func(c map[string]any) bool { return c["endDate"] == nil }},
		{"draft", map[string]any{"timezone": "Europe/Berlin"}, "", func(c map[string]any) bool { return c["timezone"] == "Europe/Berlin" }},

		{"active", map[string]any{"name": "Renamed", "description": "d"}, "", func(c map[string]any) bool { return c["name"] == "Renamed" && c["description"] == "d" }},
		{"active", map[string]any{"endDate": later}, "", func(c map[string]any) bool { return c["endDate"] == later }},
		{"active", map[string]any{"endDate": earlier}, "endDate", nil},
		{"active", map[string]any{"endDate": nil}, "endDate", nil},
		{"active", map[string]any{"variants": newVariants}, "variants", nil},
		{"active", map[string]any{"goalEventId": "purchase"}, "goalEventId", nil},
		{"active", map[string]any{"audienceId": aud.ID}, "audienceId", nil},
		{"active", map[string]any{"audienceId": nil}, "audienceId", nil},
		{"active", map[string]any{"assignmentType": "round_robin"}, "assignmentType", nil},
		{"active", map[string]any{"startDate": "2030-01-01T00:00:00Z"}, "startDate", nil},

		{"paused", map[string]any{"name": "Renamed", "description": "d"}, "", func(c map[string]any) bool { return c["name"] == "Renamed" && c["description"] == "d" }},
		{"paused", map[string]any{"endDate": later}, "", func(c map[string]any) bool { return c["endDate"] == later }},
		{"paused", map[string]any{"endDate": earlier}, "endDate", nil},
		{"paused", map[string]any{"variants": newVariants}, "variants", nil},
		{"paused", map[string]any{"goalEventId": "purchase"}, "goalEventId", nil},
		{"paused", map[string]any{"audienceId": aud.ID}, "audienceId", nil},
		{"paused", map[string]any{"assignmentType": "round_robin"}, "assignmentType", nil},

		{"completed", map[string]any{"name": "Renamed", "description": "d"}, "", func(c map[string]any) bool { return c["name"] == "Renamed" && c["description"] == "d" }},
		{"completed", map[string]any{"endDate": later}, "endDate", nil},
		{"completed", map[string]any{"variants": newVariants}, "variants", nil},
		{"completed", map[string]any{"goalEventId": "purchase"}, "goalEventId", nil},
		{"completed", map[string]any{"assignmentType": "round_robin"}, "assignmentType", nil},

		{"archived", map[string]any{"name": "Renamed", "description": "d"}, "", func(c map[string]any) bool { return c["name"] == "Renamed" && c["description"] == "d" }},
		{"archived", map[string]any{"endDate": later}, "endDate", nil},
		{"archived", map[string]any{"variants": newVariants}, "variants", nil},
		{"archived", map[string]any{"audienceId": aud.ID}, "audienceId", nil},
	} {
		keys := make([]string, 0, len(tc.body))
		for k := range tc.body {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Run(tc.state+"/"+strings.Join(keys, "+"), func(t *testing.T) {
			id := campaignInState(e, blocks, tc.state, nil)
			before := campaignGet(e, id)
			rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, tc.body)
			if tc.refused != "" {
				if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
					t.Fatalf("status=%d, want 400; body=%s", rec.Code, rec.Body.String())
				}
				if _, ok := fieldsOf(t, rec)[tc.refused]; !ok {
					t.Fatalf("details.fields lacks %s: %s", tc.refused, rec.Body.String())
				}
				after := campaignGet(e, id)
				delete(before, "updatedAt")
				delete(after, "updatedAt")
				if !reflect.DeepEqual(before, after) {
					t.Fatalf("a refused edit changed the campaign:\n%v\n%v", before, after)
				}
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status=%d, want 200; body=%s", rec.Code, rec.Body.String())
			}
			var answer map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
				t.Fatal(err)
			}
			if !tc.check(answer) || !tc.check(campaignGet(e, id)) {
				t.Fatalf("edit not applied: %s", rec.Body.String())
			}
			if got := answer["status"]; got != before["status"] {
				t.Fatalf("an edit moved the campaign from %v to %v", before["status"], got)
			}
		})
	}

	t.Run("PatchValidation", func(t *testing.T) {
		id := campaignInState(e, blocks, "draft", nil)
		campaignWantFields(t, e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin,
			map[string]any{"name": "", "timezone": "X/Y", "variants": []any{map[string]any{"contentViewId": blocks[0]}}, "assignmentType": "z"}),
			"name", "timezone", "variants", "assignmentType")
		campaignWantFields(t, e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin,
			map[string]any{"startDate": "2030-02-01T00:00:00Z", "endDate": "2030-01-01T00:00:00Z"}), "endDate")
		// The stored endDate counts against a new startDate alone.
		campaignWantFields(t, e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin,
			map[string]any{"startDate": "2099-02-01T00:00:00Z"}), "endDate")
		for _, bad := range []string{"abc", "0", "-1"} {
			rec := e.do("PATCH", "/v1/campaigns/"+bad, e.Admin, map[string]any{"name": "x"})
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("PATCH /campaigns/%s: status=%d, want 400", bad, rec.Code)
			}
		}
	})

	// As on create, faults only the database knows are named together
	// with the others.
	t.Run("PatchEveryBadFieldAtOnceWithReferences", func(t *testing.T) {
		archived := e.mustContent("old", store.ContentArchived)
		id := campaignInState(e, blocks, "draft", nil)
		campaignWantFields(t, e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{
			"name": "", "audienceId": 99999,
			"variants": []any{map[string]any{"contentViewId": archived}, map[string]any{"contentViewId": 99999}},
		}), "name", "audienceId", "variants[0].contentViewId", "variants[1].contentViewId")
	})

	// A move and an edit in one PATCH happen together, or not at all.
	t.Run("EditAndMove", func(t *testing.T) {
		id := campaignInState(e, blocks, "draft", nil)
		c := e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"name": "Go", "status": "active"})
		if c["name"] != "Go" || c["status"] != "active" {
			t.Fatalf("campaign=%v", c)
		}
		rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"name": "Nope", "status": "draft"})
		campaignWantRefusedMove(t, rec, "active", "draft")
		if got := campaignGet(e, id)["name"]; got != "Go" {
			t.Fatalf("name=%v after a refused move, want the edit rolled back", got)
		}
	})
}

func TestCampaignDelete(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	for _, tc := range []struct {
		state string
		ok    bool
	}{
		{"draft", true}, {"completed", true}, {"archived", true}, {"archived-from-completed", true},
		{"active", false}, {"paused", false},
	} {
		t.Run(tc.state, func(t *testing.T) {
			id := campaignInState(e, blocks, tc.state, nil)
			rec := e.do("DELETE", pathf("/v1/campaigns/%d", id), e.Admin, nil)
			if !tc.ok {
				if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
					t.Fatalf("status=%d, want 400; body=%s", rec.Code, rec.Body.String())
				}
				campaignGet(e, id)
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status=%d, want 200; body=%s", rec.Code, rec.Body.String())
			}
			var body map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["success"] != true {
				t.Fatalf("body=%s, want success true", rec.Body.String())
			}
			e.must(http.StatusNotFound, "GET", pathf("/v1/campaigns/%d", id), e.Admin, nil)
			e.must(http.StatusNotFound, "DELETE", pathf("/v1/campaigns/%d", id), e.Admin, nil)
		})
	}
	t.Run("FreesBlocks", func(t *testing.T) {
		own := campaignBlocks(e, 2)
		id := campaignInState(e, own, "draft", nil)
		e.must(http.StatusBadRequest, "PATCH", pathf("/v1/content/%d", own[0]), e.Admin, map[string]any{"status": "archived"})
		e.must(http.StatusOK, "DELETE", pathf("/v1/campaigns/%d", id), e.Admin, nil)
		e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", own[0]), e.Admin, map[string]any{"status": "archived"})
	})
}

func TestCampaignList(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	byState := map[string]int64{}
	for _, s := range []string{"draft", "active", "paused", "completed", "archived"} {
		byState[s] = campaignInState(e, blocks, s, nil)
	}
	other, admin2, _, _ := e.newApp("other", "enterprise", 1_000_000)
	cv2 := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", other.ID), admin2, map[string]any{"name": "x"}), "id")
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", other.ID), admin2, campaignBody([]int64{cv2, cv2}, nil))

	ids := func(q string) []int64 {
		t.Helper()
		p := foundationList(e, pathf("/v1/apps/%d/campaigns", e.App.ID)+q, e.Read)
		var out []int64
		for _, d := range p.Data {
			out = append(out, d.ID)
		}
		return out
	}
	if got, want := ids(""), []int64{byState["completed"], byState["paused"], byState["active"], byState["draft"]}; !slices.Equal(got, want) {
		t.Fatalf("default list=%v, want %v (archived hidden, newest first)", got, want)
	}
	for s, id := range byState {
		if got, want := ids("?status="+s), []int64{id}; !slices.Equal(got, want) {
			t.Fatalf("status=%s: %v, want %v", s, got, want)
		}
	}
	for _, q := range []string{"?status=running", "?status=ACTIVE", "?limit=0", "?limit=x", "?page=0"} {
		if rec := e.do("GET", pathf("/v1/apps/%d/campaigns", e.App.ID)+q, e.Admin, nil); rec.Code != http.StatusBadRequest {
			t.Fatalf("GET %s: status=%d, want 400", q, rec.Code)
		}
	}

	p := foundationList(e, pathf("/v1/apps/%d/campaigns?limit=3", e.App.ID), e.Admin)
	if len(p.Data) != 3 || !*p.Pagination.HasMore || *p.Pagination.NextCursor != "2" || *p.Pagination.NextPage != 2 || *p.Pagination.Total != 4 {
		t.Fatalf("page 1: %d items, pagination %+v", len(p.Data), p.Pagination)
	}
	p = foundationList(e, pathf("/v1/apps/%d/campaigns?limit=3&page=2", e.App.ID), e.Admin)
	if len(p.Data) != 1 || p.Data[0].ID != byState["draft"] || *p.Pagination.HasMore || p.Pagination.NextCursor != nil || p.Pagination.NextPage != nil {
		t.Fatalf("page 2: %+v, pagination %+v", p.Data, p.Pagination)
	}
	p = foundationList(e, pathf("/v1/apps/%d/campaigns?status=archived&limit=1", e.App.ID), e.Admin)
	if len(p.Data) != 1 || *p.Pagination.HasMore || *p.Pagination.Total != 1 {
		t.Fatalf("archived: %+v, pagination %+v", p.Data, p.Pagination)
	}
	if rec := e.do("GET", pathf("/v1/apps/%d/campaigns", other.ID), e.Admin, nil); rec.Code != http.StatusForbidden {
		t.Fatalf("another app's list: status=%d, want 403", rec.Code)
	}
}

func TestCampaignVariantAssigned(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	id := campaignInState(e, blocks, "active", nil)

	first := campaignAssign(e, id, map[string]any{"userId": "u1", "attributes": map[string]any{"plan": "pro"}})
	if !*first.ImpressionRecorded {
		t.Fatalf("first answer impressionRecorded=false, want true")
	}
	if first.CampaignID != id || first.ContentView.ID != first.ContentViewID || first.ContentView.Status != "published" ||
		!slices.Contains(blocks, first.ContentViewID) || first.VariantName == "" || len(first.ContentView.Items) != 1 {
		t.Fatalf("answer=%+v", first)
	}
	for range 3 {
		again := campaignAssign(e, id, map[string]any{"userId": "u1"})
		if *again.ImpressionRecorded || *again.VariantID != *first.VariantID {
			t.Fatalf("repeat: variant %d recorded %v, want variant %d recorded false", *again.VariantID, *again.ImpressionRecorded, *first.VariantID)
		}
	}
	if got, want := campaignImpressions(e, id), int64(1); got != want {
		t.Fatalf("totalImpressions=%d, want %d", got, want)
	}
	// The key order of the answer is part of the contract.
	rec := campaignAsk(e, id, `{"userId":"u1"}`)
	want := fmt.Sprintf(`{"campaignId":%d,"variantId":%d,"variantName":`, id, *first.VariantID)
	if !strings.HasPrefix(rec.Body.String(), want) || !strings.HasSuffix(rec.Body.String(), `,"impressionRecorded":false}`) {
		t.Fatalf("body=%s, want it to start %s", rec.Body.String(), want)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json" {
		t.Fatalf("Content-Type=%q", got)
	}

	t.Run("AdminKeyToo", func(t *testing.T) {
		e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, id), e.Admin, map[string]any{"userId": "u1"})
		if rec := e.do("POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, id), e.Read, map[string]any{"userId": "u1"}); rec.Code != http.StatusForbidden {
			t.Fatalf("read key: status=%d, want 403", rec.Code)
		}
	})
}

func TestCampaignVariantNotActive(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	for _, state := range []string{"draft", "paused", "completed", "archived"} {
		t.Run(state, func(t *testing.T) {
			id := campaignInState(e, blocks, state, nil)
			for range 2 {
				campaignWantNotActive(e, id, map[string]any{"userId": "u-" + state})
				campaignWantNotActive(e, id, map[string]any{"sessionId": "s-" + state})
			}
			if got := campaignImpressions(e, id); got != 0 {
				t.Fatalf("totalImpressions=%d, want 0", got)
			}
		})
	}
}

func TestCampaignVariantOutsideWindow(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := campaignUseClock(e, t0)
	id := campaignInState(e, blocks, "active", map[string]any{"endDate": t0.Add(time.Hour).Format(time.RFC3339)})

	clock.Set(t0.Add(time.Hour)) // endDate itself is outside: [start, end)
	campaignWantNotActive(e, id, map[string]any{"userId": "late"})
	clock.Set(t0.Add(-time.Minute))
	campaignWantNotActive(e, id, map[string]any{"userId": "early"})
	if got := campaignImpressions(e, id); got != 0 {
		t.Fatalf("totalImpressions=%d outside the window, want 0", got)
	}

	clock.Set(t0.Add(30 * time.Minute))
	a := campaignAssign(e, id, map[string]any{"userId": "inside"})
	if !*a.ImpressionRecorded {
		t.Fatal("inside the window: impressionRecorded=false")
	}
	clock.Set(t0.Add(2 * time.Hour))
	campaignWantNotActive(e, id, map[string]any{"userId": "inside"})
	campaignWantNotActive(e, id, map[string]any{"userId": "late"})
	if got, want := campaignImpressions(e, id), int64(1); got != want {
		t.Fatalf("totalImpressions=%d, want %d", got, want)
	}
	if got := campaignGet(e, id)["status"]; got != "active" {
		t.Fatalf("status=%v: nothing but the scheduler may complete it", got)
	}
}

func TestCampaignVariantBadRequest(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	id := campaignInState(e, blocks, "active", nil)
	for _, tc := range []struct {
		name   string
		body   any
		fields []string // nil: any 400 INVALID_REQUEST
	}{
		{"Empty", map[string]any{}, []string{"userId"}},
		{"BlankIDs", map[string]any{"userId": "", "sessionId": ""}, []string{"userId"}},
		{"AttributesOnly", map[string]any{"attributes": map[string]any{"a": 1}}, []string{"userId"}},
		{"UserIDNumber", map[string]any{"userId": 5}, []string{"userId"}},
		{"UserIDTooLong", map[string]any{"userId": strings.Repeat("u", 257)}, []string{"userId"}},
		{"SessionTooLong", map[string]any{"sessionId": strings.Repeat("s", 257)}, []string{"sessionId"}},
		{"AttributesArray", map[string]any{"userId": "u", "attributes": []any{1}}, []string{"attributes"}},
		{"NotJSON", "userId=u", nil},
		{"NoBody", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{
				pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, id),
				pathf("/v1/apps-external/%d/variants", e.App.ID),
			} {
				rec := e.do("POST", path, e.Cli, tc.body)
				if tc.fields != nil {
					campaignWantFields(t, rec, tc.fields...)
					continue
				}
				if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
					t.Fatalf("%s: status=%d; body=%s", path, rec.Code, rec.Body.String())
				}
			}
		})
	}
	if got := campaignImpressions(e, id); got != 0 {
		t.Fatalf("totalImpressions=%d after bad requests, want 0", got)
	}
}

func TestCampaignVariantSession(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	id := campaignInState(e, blocks, "active", nil)
	vids := campaignVariantIDs(e, id)
	weights := []float64{50, 50}

	a := campaignAssign(e, id, map[string]any{"sessionId": "sess-abc"})
	if !*a.ImpressionRecorded {
		t.Fatal("first session answer: impressionRecorded=false")
	}
	if got, want := *a.VariantID, vids[assign.Pick(assign.Bucket(id, "sess-abc"), weights)]; got != want {
		t.Fatalf("variant=%d, want %d (hash of the sessionId)", got, want)
	}
	if b := campaignAssign(e, id, map[string]any{"sessionId": "sess-abc"}); *b.ImpressionRecorded || *b.VariantID != *a.VariantID {
		t.Fatalf("repeat session: %+v", b)
	}
	// userId, when given, is the key; a request naming both ids links the
	// session to the user, who takes the session's assignment: no new
	// impression.
	u := campaignAssign(e, id, map[string]any{"userId": "alice", "sessionId": "sess-abc"})
	if *u.ImpressionRecorded || *u.VariantID != *a.VariantID {
		t.Fatalf("userId with the session: %+v, want the session's variant %d and no impression", u, *a.VariantID)
	}
	if u2 := campaignAssign(e, id, map[string]any{"userId": "alice", "sessionId": "another"}); *u2.ImpressionRecorded || *u2.VariantID != *u.VariantID {
		t.Fatalf("same userId, other session: %+v", u2)
	}
	// A user without a session is a key of its own, by the hash of the
	// userId.
	b := campaignAssign(e, id, map[string]any{"userId": "bob"})
	if !*b.ImpressionRecorded {
		t.Fatal("new userId: impressionRecorded=false")
	}
	if got, want := *b.VariantID, vids[assign.Pick(assign.Bucket(id, "bob"), weights)]; got != want {
		t.Fatalf("variant=%d, want %d (hash of the userId)", got, want)
	}
	if got, want := campaignImpressions(e, id), int64(2); got != want {
		t.Fatalf("totalImpressions=%d, want %d", got, want)
	}
}

func TestCampaignVariantOtherApp(t *testing.T) {
	e := newEnv(t)
	other, admin2, _, cli2 := e.newApp("other", "enterprise", 1_000_000)
	cv2 := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", other.ID), admin2, map[string]any{"name": "x", "status": "published"}), "id")
	theirs := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", other.ID), admin2,
		campaignBody([]int64{cv2, cv2}, map[string]any{"status": "active"})), "id")
	for _, tc := range []struct {
		path string
		want int
	}{
		{pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, theirs), http.StatusNotFound},
		{pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, 99999), http.StatusNotFound},
		{pathf("/v1/apps-external/%d/campaigns/abc/variant", e.App.ID), http.StatusNotFound},
		{pathf("/v1/apps-external/%d/campaigns/spring-sale/variant", e.App.ID), http.StatusNotFound}, // their key, not ours
		{pathf("/v1/apps-external/%d/campaigns/0/variant", e.App.ID), http.StatusBadRequest},
		{pathf("/v1/apps-external/%d/campaigns/99999999999999999999/variant", e.App.ID), http.StatusBadRequest},
		{pathf("/v1/apps-external/%d/campaigns/%d/variant", other.ID, theirs), http.StatusForbidden},
	} {
		rec := e.do("POST", tc.path, e.Cli, map[string]any{"userId": "u"})
		if rec.Code != tc.want {
			t.Fatalf("POST %s: status=%d, want %d; body=%s", tc.path, rec.Code, tc.want, rec.Body.String())
		}
		errCode(t, rec)
	}
	// Their own key is served, and our probing counted nothing there.
	e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", other.ID, theirs), cli2, map[string]any{"userId": "u"})
	a := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", theirs), admin2, nil)
	if got, want := num(a, "totalImpressions"), int64(1); got != want {
		t.Fatalf("their totalImpressions=%d, want %d", got, want)
	}
}

func TestCampaignVariantsAll(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	active1 := campaignInState(e, blocks, "active", nil)
	campaignInState(e, blocks, "draft", nil)
	campaignInState(e, blocks, "paused", nil)
	campaignInState(e, blocks, "completed", nil)
	active2 := campaignInState(e, blocks, "active", map[string]any{"assignmentType": "round_robin"})
	other, admin2, _, cli2 := e.newApp("other", "enterprise", 1_000_000)
	cv2 := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", other.ID), admin2, map[string]any{"name": "x", "status": "published"}), "id")
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", other.ID), admin2, campaignBody([]int64{cv2, cv2}, map[string]any{"status": "active"}))

	all := func(key string, app int64, body any) []campaignAnswer {
		t.Helper()
		rec := e.do("POST", pathf("/v1/apps-external/%d/variants", app), key, body)
		if rec.Code != http.StatusOK {
			t.Fatalf("variants: status=%d; body=%s", rec.Code, rec.Body.String())
		}
		var out struct {
			Data []campaignAnswer `json:"data"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Data == nil {
			t.Fatalf("variants: %v; body=%s", err, rec.Body.String())
		}
		return out.Data
	}
	first := all(e.Cli, e.App.ID, map[string]any{"userId": "u1"})
	if len(first) != 2 || first[0].CampaignID != active1 || first[1].CampaignID != active2 {
		t.Fatalf("data=%+v, want the active campaigns %d and %d", first, active1, active2)
	}
	for _, a := range first {
		if a.VariantID == nil || a.ImpressionRecorded == nil || !*a.ImpressionRecorded || a.ContentView == nil {
			t.Fatalf("answer=%+v, want an assigned variant with an impression", a)
		}
		// The single-campaign route agrees with the bulk one.
		if one := campaignAssign(e, a.CampaignID, map[string]any{"userId": "u1"}); *one.VariantID != *a.VariantID || *one.ImpressionRecorded {
			t.Fatalf("single answer %+v disagrees with %+v", one, a)
		}
	}
	for i, a := range all(e.Cli, e.App.ID, map[string]any{"userId": "u1"}) {
		if *a.ImpressionRecorded || *a.VariantID != *first[i].VariantID {
			t.Fatalf("repeat: %+v, want %d unrecorded", a, *first[i].VariantID)
		}
	}

	// Pausing one removes it from the answer at once.
	campaignSetStatus(e, active1, "paused")
	if got := all(e.Cli, e.App.ID, map[string]any{"sessionId": "s1"}); len(got) != 1 || got[0].CampaignID != active2 {
		t.Fatalf("after pause: %+v", got)
	}
	if got := campaignImpressions(e, active1); got != 1 {
		t.Fatalf("paused campaign impressions=%d, want 1", got)
	}

	// An app with no active campaign answers an empty list.
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", num(e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns?status=active", other.ID), admin2, nil)["data"].([]any)[0].(map[string]any), "id")), admin2, map[string]any{"status": "paused"})
	rec := e.do("POST", pathf("/v1/apps-external/%d/variants", other.ID), cli2, map[string]any{"userId": "u"})
	if rec.Code != http.StatusOK || rec.Body.String() != `{"data":[]}` {
		t.Fatalf("no active campaign: %d %s", rec.Code, rec.Body.String())
	}
}

func TestCampaignVariantWeightedHash(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 3)
	weights := []float64{20, 30, 50}
	vs := make([]any, 3)
	for i := range vs {
		vs[i] = map[string]any{"contentViewId": blocks[i], "trafficAllocation": weights[i]}
	}
	id := campaignInState(e, blocks, "active", map[string]any{"variants": vs})
	vids := campaignVariantIDs(e, id)
	counts := make([]int, len(vids))
	for i := range 200 {
		user := fmt.Sprintf("user-%d", i)
		idx := assign.Pick(assign.Bucket(id, user), weights)
		a := campaignAssign(e, id, map[string]any{"userId": user})
		if got, want := *a.VariantID, vids[idx]; got != want {
			t.Fatalf("%s: variant=%d, want %d (bucket %d)", user, got, want, assign.Bucket(id, user))
		}
		counts[idx]++
	}
	// The test means something only if every range got users.
	for i, c := range counts {
		if c == 0 {
			t.Fatalf("no user fell in variant %d: %v", i, counts)
		}
	}
	if got, want := campaignImpressions(e, id), int64(200); got != want {
		t.Fatalf("totalImpressions=%d, want %d", got, want)
	}
	a := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", id), e.Admin, nil)
	for i, v := range a["variants"].([]any) {
		if got, want := num(v.(map[string]any), "impressions"), int64(counts[i]); got != want {
			t.Fatalf("variants[%d].impressions=%d, want %d", i, got, want)
		}
	}
}

func TestCampaignVariantRoundRobin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rr.db")
	e := campaignEnvAt(t, path)
	blocks := campaignBlocks(e, 3)
	id := campaignInState(e, blocks, "active", map[string]any{"assignmentType": "round_robin",
		"variants": []any{
			map[string]any{"contentViewId": blocks[0], "trafficAllocation": 98},
			map[string]any{"contentViewId": blocks[1], "trafficAllocation": 1},
			map[string]any{"contentViewId": blocks[2], "trafficAllocation": 1},
		}})
	vids := campaignVariantIDs(e, id)
	want := func(e *testEnv, user string, idx int, recorded bool) {
		t.Helper()
		a := campaignAssign(e, id, map[string]any{"userId": user})
		if *a.VariantID != vids[idx] || *a.ImpressionRecorded != recorded {
			t.Fatalf("%s: variant %d recorded %v, want %d recorded %v", user, *a.VariantID, *a.ImpressionRecorded, vids[idx], recorded)
		}
	}
	for i := range 6 {
		want(e, fmt.Sprintf("r%d", i), i%3, true) // weights are ignored
	}
	want(e, "r0", 0, false) // repeats do not advance the rotation
	want(e, "r4", 1, false)
	want(e, "r6", 0, true)

	e = campaignReopen(e, path)
	want(e, "r7", 1, true)
	want(e, "r0", 0, false)
	want(e, "r8", 2, true)
	if got, wantN := campaignImpressions(e, id), int64(9); got != wantN {
		t.Fatalf("totalImpressions=%d, want %d", got, wantN)
	}
}

func TestCampaignVariantPauseImmediate(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	id := campaignInState(e, blocks, "active", nil)
	a := campaignAssign(e, id, map[string]any{"userId": "u1"})

	campaignSetStatus(e, id, "paused")
	campaignWantNotActive(e, id, map[string]any{"userId": "u2"})
	campaignWantNotActive(e, id, map[string]any{"userId": "u1"})
	if got, want := campaignImpressions(e, id), int64(1); got != want {
		t.Fatalf("totalImpressions=%d, want %d", got, want)
	}

	campaignSetStatus(e, id, "active")
	if b := campaignAssign(e, id, map[string]any{"userId": "u1"}); *b.VariantID != *a.VariantID || *b.ImpressionRecorded {
		t.Fatalf("after resume: %+v, want variant %d unrecorded", b, *a.VariantID)
	}
	if b := campaignAssign(e, id, map[string]any{"userId": "u2"}); !*b.ImpressionRecorded {
		t.Fatal("after resume: a new user is not counted")
	}
	campaignSetStatus(e, id, "completed")
	campaignWantNotActive(e, id, map[string]any{"userId": "u1"})
	campaignWantNotActive(e, id, map[string]any{"userId": "u3"})
	if got, want := campaignImpressions(e, id), int64(2); got != want {
		t.Fatalf("totalImpressions=%d, want %d", got, want)
	}
}

func TestCampaignVariantContentChange(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	id := campaignInState(e, blocks, "active", nil)
	a := campaignAssign(e, id, map[string]any{"userId": "u1"})
	var item struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(a.ContentView.Items[0], &item); err != nil || !strings.HasPrefix(item.Content, "block ") {
		t.Fatalf("items=%s", a.ContentView.Items)
	}

	e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", a.ContentViewID), e.Admin, map[string]any{
		"name": "renamed", "items": []any{map[string]any{"type": "text", "content": "changed"}, map[string]any{"type": "heading", "content": "new"}}})
	b := campaignAssign(e, id, map[string]any{"userId": "u1"})
	if *b.VariantID != *a.VariantID || *b.ImpressionRecorded {
		t.Fatalf("after the edit: %+v", b)
	}
	if err := json.Unmarshal(b.ContentView.Items[0], &item); err != nil || item.Content != "changed" || len(b.ContentView.Items) != 2 || b.ContentView.Name != "renamed" {
		t.Fatalf("after the edit: contentView=%+v, want the new items", b.ContentView)
	}
	// A campaign rename is not in the answer, but the other block's
	// content must still be served fresh after any change.
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"name": "x"})
	if c := campaignAssign(e, id, map[string]any{"userId": "u1"}); c.ContentView.Name != "renamed" {
		t.Fatalf("contentView=%+v", c.ContentView)
	}
}

// campaignConcurrentAsk sends one variant request from any goroutine: it
// never touches t, which only the test goroutine may fail.
func campaignConcurrentAsk(e *testEnv, campaignID int64, user string) (campaignAnswer, error) {
	req := httptest.NewRequest("POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, campaignID),
		strings.NewReader(`{"userId":"`+user+`"}`))
	req.Header.Set("Authorization", "Bearer "+e.Cli)
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, req)
	var a campaignAnswer
	if rec.Code != http.StatusOK {
		return a, fmt.Errorf("%s: status %d: %s", user, rec.Code, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.VariantID == nil || a.ImpressionRecorded == nil {
		return a, fmt.Errorf("%s: not assigned: %s", user, rec.Body.String())
	}
	return a, nil
}

// campaignHammer sends perUser concurrent requests for each of users and
// returns the answers per user.
func campaignHammer(t *testing.T, e *testEnv, id int64, users []string, perUser int) map[string][]campaignAnswer {
	t.Helper()
	var mu sync.Mutex
	got := map[string][]campaignAnswer{}
	var errs []error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, u := range users {
		for range perUser {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				a, err := campaignConcurrentAsk(e, id, u)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				got[u] = append(got[u], a)
			}()
		}
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d requests failed, first: %v", len(errs), errs[0])
	}
	return got
}

func TestConcurrentImpressions(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 3)
	id := campaignInState(e, blocks, "active", nil)
	users := make([]string, 50)
	for i := range users {
		users[i] = fmt.Sprintf("c-%d", i)
	}
	got := campaignHammer(t, e, id, users, 4)
	recorded := 0
	for _, u := range users {
		as := got[u]
		if len(as) != 4 {
			t.Fatalf("%s: %d answers, want 4", u, len(as))
		}
		n := 0
		for _, a := range as {
			if *a.VariantID != *as[0].VariantID {
				t.Fatalf("%s saw variants %d and %d", u, *as[0].VariantID, *a.VariantID)
			}
			if *a.ImpressionRecorded {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s: impressionRecorded true in %d answers, want exactly 1", u, n)
		}
		recorded += n
	}
	if got, want := recorded, 50; got != want {
		t.Fatalf("impressionRecorded true in %d answers, want %d", got, want)
	}
	if got, want := campaignImpressions(e, id), int64(50); got != want {
		t.Fatalf("totalImpressions=%d, want %d", got, want)
	}
}

func TestConcurrentRoundRobin(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 3)
	id := campaignInState(e, blocks, "active", map[string]any{"assignmentType": "round_robin"})
	users := make([]string, 60)
	for i := range users {
		users[i] = fmt.Sprintf("rr-%d", i)
	}
	got := campaignHammer(t, e, id, users, 2)
	per := map[int64]int{}
	for _, u := range users {
		if as := got[u]; len(as) != 2 || *as[0].VariantID != *as[1].VariantID {
			t.Fatalf("%s: answers %+v", u, as)
		}
		per[*got[u][0].VariantID]++
	}
	for _, vid := range campaignVariantIDs(e, id) {
		if got, want := per[vid], 20; got != want {
			t.Fatalf("variant %d has %d users, want %d: %v", vid, got, want, per)
		}
	}
}

// Going live needs every variant's block published, however the campaign
// is started; the refusal is the documented envelope naming each variant
// by its index in the list the API returns.
func TestCampaignStartNeedsPublishedBlocks(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	draft := e.mustContent("Hero draft", store.ContentDraft)
	three := []int64{blocks[0], draft, blocks[1]}
	want := fmt.Sprintf(`{"error":{"code":"INVALID_REQUEST","message":"content block %d is a draft; publish it first",`+
		`"details":{"fields":{"variants[1].contentViewId":"content block %d is a draft; publish it first"},"from":"draft","to":"active"}}}`, draft, draft)
	id := campaignInState(e, three, "draft", nil)
	if got := campaignGet(e, id)["variants"].([]any)[1].(map[string]any); num(got, "contentViewId") != draft {
		t.Fatalf("variants[1]=%v, want the draft block's variant", got)
	}
	for _, tc := range []struct {
		name string
		do   func() *httptest.ResponseRecorder
	}{
		{"StatusEndpoint", func() *httptest.ResponseRecorder {
			return e.do("PATCH", pathf("/v1/campaigns/%d/status", id), e.Admin, map[string]any{"status": "active"})
		}},
		{"Patch", func() *httptest.ResponseRecorder {
			return e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"status": "active", "name": "Renamed"})
		}},
		{"CreateActive", func() *httptest.ResponseRecorder {
			return e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(three, map[string]any{"status": "active"}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, nil)["pagination"].(map[string]any)["total"]
			rec := tc.do()
			if rec.Code != http.StatusBadRequest || strings.TrimSpace(rec.Body.String()) != want {
				t.Fatalf("status=%d body=%s, want 400 %s", rec.Code, rec.Body.String(), want)
			}
			if c := campaignGet(e, id); c["status"] != "draft" || c["name"] != "Spring sale" {
				t.Fatalf("after the refusal: status %v, name %v; want nothing changed", c["status"], c["name"])
			}
			if got := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, nil)["pagination"].(map[string]any)["total"]; got != total {
				t.Fatalf("campaigns %v -> %v after a refusal", total, got)
			}
		})
	}
	// Published, the block no longer stands in the way.
	e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", draft), e.Admin, map[string]any{"status": "published"})
	campaignSetStatus(e, id, "active")
}
