package handlers

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"service/assign"
)

// TestNamespaceHTTP walks namespaces through the API: the field on every
// campaign answer, its validation, the variant routes' answers for users
// outside the range, the overlap refusal and the namespace list.
func TestNamespaceHTTP(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	ns := map[string]any{"id": "checkout", "range": []any{0, 0.5}}
	created := campaignCreate(e, campaignBody(blocks, map[string]any{"namespace": ns}))
	id := num(created, "id")
	for _, c := range []map[string]any{created, campaignGet(e, id)} {
		if got := c["namespace"]; !reflect.DeepEqual(got, map[string]any{"id": "checkout", "range": []any{0.0, 0.5}}) {
			t.Errorf("namespace %v", got)
		}
		if got := c["cupedLookbackDays"]; got != 14.0 {
			t.Errorf("cupedLookbackDays %v, want the default 14", got)
		}
	}
	plain := num(campaignCreate(e, campaignBody(blocks, nil)), "id")
	if got, ok := campaignGet(e, plain)["namespace"]; !ok || got != nil {
		t.Errorf("a campaign without a namespace answers namespace %v, want null", got)
	}
	campaignSetStatus(e, id, "active")
	campaignSetStatus(e, plain, "active")

	t.Run("Validation", func(t *testing.T) {
		for _, tt := range []struct {
			ns    any
			field string
		}{
			{map[string]any{"id": "x", "range": []any{0.6, 0.4}}, "namespace.range"},
			{map[string]any{"id": strings.Repeat("n", 65), "range": []any{0, 1}}, "namespace.id"},
			{"checkout", "namespace"},
		} {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks, map[string]any{"namespace": tt.ns}))
			campaignWantFields(t, rec, tt.field)
		}
		rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"namespace": nil})
		if rec.Code != http.StatusBadRequest || campaignDetails(t, rec)["field"] != "namespace" {
			t.Errorf("editing an active campaign's namespace: %d %s, want 400 naming namespace", rec.Code, rec.Body.String())
		}
	})

	var in, out string
	for i := 0; in == "" || out == ""; i++ {
		u := fmt.Sprintf("visitor-%d", i)
		if assign.InNamespace("checkout", u, 0, 0.5) {
			in = u
		} else {
			out = u
		}
	}
	t.Run("NotInNamespace", func(t *testing.T) {
		for _, body := range []map[string]any{{"userId": out}, {"sessionId": out}} {
			rec := campaignAsk(e, id, body)
			if want := fmt.Sprintf(`{"campaignId":%d,"variantId":null,"reason":"not_in_namespace"}`, id); rec.Code != http.StatusOK || rec.Body.String() != want {
				t.Errorf("%v: %d %s, want %s", body, rec.Code, rec.Body.String(), want)
			}
		}
		all := e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/variants", e.App.ID), e.Cli, map[string]any{"userId": out})
		if d := all["data"].([]any); len(d) != 1 || num(d[0].(map[string]any), "campaignId") != plain {
			t.Errorf("/variants for a user outside the range: %v, want only campaign %d", d, plain)
		}
		campaignAssign(e, id, map[string]any{"userId": in})
		if got := campaignImpressions(e, id); got != 1 {
			t.Errorf("impressions %d, want 1: users outside the range count nothing", got)
		}
	})

	t.Run("Overlap", func(t *testing.T) {
		other := num(campaignCreate(e, campaignBody(blocks, map[string]any{"name": "Other", "namespace": map[string]any{"id": "checkout", "range": []any{0.25, 1}}})), "id")
		rec := e.do("PATCH", pathf("/v1/campaigns/%d/status", other), e.Admin, map[string]any{"status": "active"})
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("starting an overlapping campaign: %d %s, want 400", rec.Code, rec.Body.String())
		}
		cs, _ := campaignDetails(t, rec)["campaigns"].([]any)
		if len(cs) != 1 || num(cs[0].(map[string]any), "id") != id || cs[0].(map[string]any)["name"] != "Spring sale" {
			t.Errorf("details.campaigns %v, want campaign %d", cs, id)
		}
		// Ranges that only touch may run together.
		e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", other), e.Admin, map[string]any{"namespace": map[string]any{"id": "checkout", "range": []any{0.5, 1}}})
		campaignSetStatus(e, other, "active")
	})

	t.Run("List", func(t *testing.T) {
		draft := num(campaignCreate(e, campaignBody(blocks, map[string]any{"name": "Plan", "namespace": map[string]any{"id": "search", "range": []any{0.1, 0.4}}})), "id")
		got := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/namespaces", e.App.ID), e.Read, nil)["data"].([]any)
		if len(got) != 2 {
			t.Fatalf("namespaces %v, want checkout and search", got)
		}
		checkout, search := got[0].(map[string]any), got[1].(map[string]any)
		if checkout["id"] != "checkout" || checkout["free"] != 0.0 || len(checkout["campaigns"].([]any)) != 2 {
			t.Errorf("checkout %v, want two campaigns and nothing free", checkout)
		}
		want := map[string]any{"id": "search", "free": 1.0, "freeRanges": []any{[]any{0.0, 1.0}},
			"campaigns": []any{map[string]any{"id": float64(draft), "name": "Plan", "status": "draft", "range": []any{0.1, 0.4}}}}
		if !reflect.DeepEqual(search, want) {
			t.Errorf("search\n got %v\nwant %v", search, want)
		}
		if rec := e.do("GET", pathf("/v1/apps/%d/namespaces", e.App.ID), e.Cli, nil); rec.Code != http.StatusForbidden {
			t.Errorf("client key: %d, want 403", rec.Code)
		}
	})
}

// TestCupedHTTP checks the setting and the analytics answer's CUPED
// fields through the API.
func TestCupedHTTP(t *testing.T) {
	e := newEnv(t)
	clock := campaignUseClock(e, time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC))
	blocks := campaignBlocks(e, 2)
	event := func(user string) {
		e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "purchase", "userId": user})
	}
	// Histories before the campaign: users who bought before buy again.
	for i := range 12 {
		for range i % 3 {
			event(fmt.Sprint("shopper-", i))
		}
	}
	clock.Add(24 * time.Hour)
	for _, tt := range []struct {
		days any
		ok   bool
	}{{91, false}, {-1, false}, {2.5, false}, {"7", false}, {0, true}, {90, true}} {
		rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks, map[string]any{"cupedLookbackDays": tt.days}))
		if tt.ok {
			if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), fmt.Sprintf(`"cupedLookbackDays":%v`, tt.days)) {
				t.Errorf("cupedLookbackDays %v: %d %s", tt.days, rec.Code, rec.Body.String())
			}
			continue
		}
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"cupedLookbackDays"`) {
			t.Errorf("cupedLookbackDays %v: %d %s, want 400 naming the field", tt.days, rec.Code, rec.Body.String())
		}
	}
	on := num(campaignCreate(e, campaignBody(blocks, map[string]any{"goalEventId": "purchase"})), "id")
	off := num(campaignCreate(e, campaignBody(blocks, map[string]any{"goalEventId": "purchase", "cupedLookbackDays": 0})), "id")
	for _, id := range []int64{on, off} {
		campaignSetStatus(e, id, "active")
		for i := range 12 {
			campaignAssign(e, id, map[string]any{"userId": fmt.Sprint("shopper-", i)})
		}
	}
	clock.Add(time.Hour)
	for i := range 12 {
		if i%2 == 0 {
			event(fmt.Sprint("shopper-", i))
		}
	}
	a := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", on), e.Admin, nil)
	cuped, _ := a["cuped"].(map[string]any)
	if cuped == nil || cuped["lookbackDays"] != 14.0 || cuped["theta"] == nil || cuped["varianceReduction"] == nil {
		t.Fatalf("cuped %v", a["cuped"])
	}
	for _, v := range a["variants"].([]any) {
		vc := v.(map[string]any)["cuped"].(map[string]any)
		_, hasDiff := vc["difference"]
		if control(v) == hasDiff || vc["adjustedConversionRate"] == nil {
			t.Errorf("variant cuped %v (control %v)", vc, control(v))
		}
		if !control(v) {
			for _, f := range []string{"differenceInterval", "uplift", "pValue"} {
				if _, ok := vc[f]; !ok {
					t.Errorf("treatment cuped lacks %s: %v", f, vc)
				}
			}
		}
	}
	a = e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", off), e.Admin, nil)
	if c, ok := a["cuped"]; !ok || c != nil {
		t.Errorf("cuped %v with a lookback of 0, want null", c)
	}
	rec := e.do("PATCH", pathf("/v1/campaigns/%d", on), e.Admin, map[string]any{"cupedLookbackDays": 7})
	if rec.Code != http.StatusBadRequest || campaignDetails(t, rec)["field"] != "cupedLookbackDays" {
		t.Errorf("editing a running campaign's lookback: %d %s", rec.Code, rec.Body.String())
	}
}

// control reports whether an analytics variant is the control.
func control(v any) bool { return v.(map[string]any)["isControl"].(bool) }
