package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Keys are made from names when not given, deduplicated within the app,
// checked, changeable only while a draft, free again after a delete, and
// in every campaign answer and the audit log.
func TestCampaignKeys(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	create := func(extra map[string]any) *httpResult {
		return result(e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks, extra)))
	}
	first := create(map[string]any{"name": "Hero test"}).want(t, http.StatusCreated)
	second := create(map[string]any{"name": "  HERO   test!"}).want(t, http.StatusCreated)
	given := create(map[string]any{"name": "x", "key": "checkout.v2_b"}).want(t, http.StatusCreated)
	t.Run("MadeFromName", func(t *testing.T) {
		if first["key"] != "hero-test" || second["key"] != "hero-test-2" || given["key"] != "checkout.v2_b" {
			t.Fatalf("keys %v %v %v", first["key"], second["key"], given["key"])
		}
	})
	t.Run("InEveryAnswer", func(t *testing.T) {
		if got := campaignGet(e, num(first, "id"))["key"]; got != "hero-test" {
			t.Fatalf("GET key=%v", got)
		}
		list := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, nil)
		for _, c := range list["data"].([]any) {
			if k, _ := c.(map[string]any)["key"].(string); k == "" {
				t.Fatalf("list entry without key: %v", c)
			}
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			key  any
		}{
			{"Upper", "Hero"}, {"Space", "a b"}, {"Empty", ""}, {"LeadingDash", "-a"}, {"Digits", "123"},
			{"TooLong", strings.Repeat("k", 65)}, {"NotString", 5}, {"Taken", "hero-test"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks, map[string]any{"key": tc.key}))
				if rec.Code != http.StatusBadRequest || fieldsOf(t, rec)["key"] == nil {
					t.Fatalf("status=%d body=%s, want 400 naming key", rec.Code, rec.Body.String())
				}
			})
		}
	})
	t.Run("ChangeWhileDraft", func(t *testing.T) {
		id := num(given, "id")
		got := e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"key": "checkout-v3"})
		if got["key"] != "checkout-v3" {
			t.Fatalf("key=%v", got["key"])
		}
		rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"key": "hero-test-2"})
		if rec.Code != http.StatusBadRequest || fieldsOf(t, rec)["key"] == nil {
			t.Fatalf("taken key: %d %s", rec.Code, rec.Body.String())
		}
	})
	t.Run("RefusedOnceStarted", func(t *testing.T) {
		id := num(second, "id")
		campaignSetStatus(e, id, "active")
		rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"key": "other"})
		if rec.Code != http.StatusBadRequest || campaignDetails(t, rec)["field"] != "key" {
			t.Fatalf("status=%d body=%s, want 400 on key", rec.Code, rec.Body.String())
		}
		// Sending the key it has is no change, and is accepted.
		e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"key": "hero-test-2", "name": "renamed"})
		if got := campaignGet(e, id)["key"]; got != "hero-test-2" {
			t.Fatalf("key=%v after rename", got)
		}
	})
	t.Run("ReusableAfterDelete", func(t *testing.T) {
		e.must(http.StatusOK, "DELETE", pathf("/v1/campaigns/%d", num(first, "id")), e.Admin, nil)
		again := create(map[string]any{"name": "Hero test"}).want(t, http.StatusCreated)
		if again["key"] != "hero-test" {
			t.Fatalf("key=%v, want hero-test again", again["key"])
		}
	})
	t.Run("AuditLog", func(t *testing.T) {
		// Through the router but not e.do: the document's "any JSON value"
		// of a change does not admit the nulls other fields' changes hold.
		req := httptest.NewRequest("GET", pathf("/v1/apps/%d/audit-log?objectType=campaign&objectId=%d", e.App.ID, num(given, "id")), nil)
		req.Header.Set("Authorization", "Bearer "+e.Admin)
		rec := httptest.NewRecorder()
		e.Srv.ServeHTTP(rec, req)
		body := rec.Body.String()
		if !strings.Contains(body, `"key":{"before":"checkout.v2_b","after":"checkout-v3"}`) {
			t.Fatalf("audit log lacks the key change: %s", body)
		}
	})
}

// The variant route takes a key where it takes an id, with the same
// answer, assignment and impression; an unknown key is 404.
func TestCampaignVariantByKey(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	id := campaignInState(e, blocks, "active", map[string]any{"key": "hero"})
	byID := pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, id)
	byKey := pathf("/v1/apps-external/%d/campaigns/hero/variant", e.App.ID)
	for _, user := range []string{"u1", "u2", "u3", "u4"} {
		k := e.must(http.StatusOK, "POST", byKey, e.Cli, map[string]any{"userId": user})
		i := e.must(http.StatusOK, "POST", byID, e.Cli, map[string]any{"userId": user})
		if k["impressionRecorded"] != true || i["impressionRecorded"] != false || k["variantId"] != i["variantId"] || num(k, "campaignId") != id {
			t.Fatalf("by key %v, by id %v", k, i)
		}
	}
	if got := num(e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", id), e.Admin, nil), "totalImpressions"); got != 4 {
		t.Fatalf("totalImpressions=%d, want 4", got)
	}
	for _, tc := range []struct{ key, code string }{{"nope", "NOT_FOUND"}, {"Hero", "NOT_FOUND"}, {"x.y_z", "NOT_FOUND"}, {"-x", "NOT_FOUND"}} {
		rec := e.do("POST", pathf("/v1/apps-external/%d/campaigns/", e.App.ID)+tc.key+"/variant", e.Cli, map[string]any{"userId": "u"})
		if rec.Code != http.StatusNotFound || errCode(t, rec) != tc.code {
			t.Fatalf("%s: %d %s", tc.key, rec.Code, rec.Body.String())
		}
	}
	// A key changed while a draft is found under its new name at once:
	// the key cache forgets with every change to campaigns.
	d := campaignInState(e, blocks, "draft", map[string]any{"key": "draft-a"})
	e.must(http.StatusNotFound, "POST", pathf("/v1/apps-external/%d/campaigns/draft-b/variant", e.App.ID), e.Cli, map[string]any{"userId": "u"})
	e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/campaigns/draft-a/variant", e.App.ID), e.Cli, map[string]any{"userId": "u"})
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", d), e.Admin, map[string]any{"key": "draft-b"})
	e.must(http.StatusNotFound, "POST", pathf("/v1/apps-external/%d/campaigns/draft-a/variant", e.App.ID), e.Cli, map[string]any{"userId": "u"})
	got := e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/campaigns/draft-b/variant", e.App.ID), e.Cli, map[string]any{"userId": "u"})
	if num(got, "campaignId") != d || got["reason"] != "campaign_not_active" {
		t.Fatalf("draft by new key: %v", got)
	}
}

type httpResult struct {
	code int
	body []byte
}

func result(rec interface {
	Result() *http.Response
}) *httpResult {
	r := rec.Result()
	defer r.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return &httpResult{r.StatusCode, []byte(b.String())}
}

func (h *httpResult) want(t *testing.T, code int) map[string]any {
	t.Helper()
	if h.code != code {
		t.Fatalf("status=%d, want %d: %s", h.code, code, h.body)
	}
	var m map[string]any
	if err := json.Unmarshal(h.body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
