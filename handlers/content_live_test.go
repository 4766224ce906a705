package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// liveCampaign creates a campaign with one variant per block, in status.
func liveCampaign(e *testEnv, status string, blocks ...int64) int64 {
	e.t.Helper()
	var variants []any
	for i, b := range blocks {
		variants = append(variants, map[string]any{"name": fmt.Sprint("V", i), "contentViewId": b})
	}
	return num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{
		"name": "Live", "status": status, "endDate": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), "variants": variants}), "id")
}

func TestContentStaysPublishedWhileARunningCampaignShowsIt(t *testing.T) {
	e := newEnv(t)
	a, b := e.mustContent("A", "published"), e.mustContent("B", "published")
	other := e.mustContent("Other", "published")
	first := liveCampaign(e, "active", a, b)
	second := liveCampaign(e, "active", a, other)
	draftOnly := e.mustContent("DraftOnly", "published")
	liveCampaign(e, "draft", draftOnly, other)

	refused := func(block int64, to string, want []int64) {
		t.Helper()
		rec := e.do("PATCH", pathf("/v1/content/%d", block), e.Admin, map[string]any{"status": to})
		if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
			t.Fatalf("published->%s: status=%d %s, want 400", to, rec.Code, rec.Body.String())
		}
		var body struct {
			Error struct {
				Details struct {
					From, To  string
					Campaigns []int64
				} `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		d := body.Error.Details
		if d.From != "published" || d.To != to || fmt.Sprint(d.Campaigns) != fmt.Sprint(want) {
			t.Fatalf("published->%s: details=%+v, want campaigns %v", to, d, want)
		}
		if got := e.must(http.StatusOK, "GET", pathf("/v1/content/%d", block), e.Admin, nil)["status"]; got != "published" {
			t.Fatalf("block is %v after a refused move", got)
		}
	}
	for _, to := range []string{"draft", "archived"} {
		refused(a, to, []int64{first, second})
		refused(b, to, []int64{first})
	}
	// Paused campaigns still show their blocks once resumed.
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", first), e.Admin, map[string]any{"status": "paused"})
	refused(b, "draft", []int64{first})
	// Edits that keep the block published are fine.
	e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", a), e.Admin, map[string]any{"name": "A2", "status": "published"})

	// A draft campaign shows nothing yet: its block may be unpublished.
	e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", draftOnly), e.Admin, map[string]any{"status": "draft"})
	// Once the campaign is over, the block is free again.
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", first), e.Admin, map[string]any{"status": "completed"})
	e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", b), e.Admin, map[string]any{"status": "draft"})
	refused(a, "draft", []int64{second})
}

// A campaign never goes live with a block end users cannot see: starting
// it is refused, naming the variant, until the block is published; then
// every user is served the block.
func TestVariantNeverServesAnUnpublishedBlock(t *testing.T) {
	e := newEnv(t)
	draft, pub := e.mustContent("Draft", "draft"), e.mustContent("Pub", "published")
	variants := []any{map[string]any{"name": "V0", "contentViewId": draft}, map[string]any{"name": "V1", "contentViewId": pub}}
	end := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{"name": "Live", "status": "active", "endDate": end, "variants": variants})
	campaignWantFields(t, rec, "variants[0].contentViewId")
	c := liveCampaign(e, "draft", draft, pub)
	campaignWantFields(t, e.do("PATCH", pathf("/v1/campaigns/%d/status", c), e.Admin, map[string]any{"status": "active"}), "variants[0].contentViewId")
	e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", draft), e.Admin, map[string]any{"status": "published"})
	campaignSetStatus(e, c, "active")
	shown := map[int64]int{}
	for i := range 40 {
		m := e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, c), e.Cli, map[string]any{"userId": fmt.Sprint("user-", i)})
		if cv, _ := m["contentView"].(map[string]any); cv == nil || cv["status"] != "published" || num(cv, "id") != num(m, "contentViewId") {
			t.Fatalf("answer=%v, want its published block", m)
		}
		shown[num(m, "contentViewId")]++
	}
	if shown[draft] == 0 || shown[pub] == 0 {
		t.Fatalf("40 users all in one variant: %v", shown)
	}
}
