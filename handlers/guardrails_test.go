package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"service/store"
)

// TestCampaignGuardrailAction: guardrailAction on create, get, list and
// update, its default, its validation, the state rule (draft only) and
// its place in the audit log.
func TestCampaignGuardrailAction(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)

	def := campaignCreate(e, campaignBody(blocks, nil))
	if def["guardrailAction"] != "alert" {
		t.Fatalf("default guardrailAction=%v, want alert", def["guardrailAction"])
	}
	c := campaignCreate(e, campaignBody(blocks, map[string]any{"name": "Paused on regression", "guardrailAction": "pause"}))
	id := num(c, "id")
	if got := campaignGet(e, id)["guardrailAction"]; got != "pause" {
		t.Fatalf("GET guardrailAction=%v, want pause", got)
	}
	list := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, nil)
	for _, item := range list["data"].([]any) {
		m := item.(map[string]any)
		want := map[bool]string{true: "pause", false: "alert"}[num(m, "id") == id]
		if m["guardrailAction"] != want {
			t.Fatalf("listed campaign %v: guardrailAction=%v, want %s", m["id"], m["guardrailAction"], want)
		}
	}

	for _, bad := range []any{"stop", "", "Pause", 1, true} {
		t.Run(fmt.Sprintf("Create%v", bad), func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, campaignBody(blocks, map[string]any{"guardrailAction": bad}))
			validationFields(t, rec, rec.Body.Bytes(), map[string]string{"guardrailAction": ""})
		})
	}

	t.Run("DraftUpdate", func(t *testing.T) {
		m := e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"guardrailAction": "alert"})
		if m["guardrailAction"] != "alert" {
			t.Fatalf("guardrailAction=%v, want alert", m["guardrailAction"])
		}
		rec := e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"guardrailAction": "nope"})
		validationFields(t, rec, rec.Body.Bytes(), map[string]string{"guardrailAction": "must be alert or pause"})
		m = e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"guardrailAction": "pause"})
		if m["guardrailAction"] != "pause" {
			t.Fatalf("guardrailAction=%v, want pause", m["guardrailAction"])
		}
		// The log names the change, and only where the action is not the
		// default, so campaigns without one log as they always did.
		log := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/audit-log?objectType=campaign&objectId=%d", e.App.ID, id), e.Admin, nil)
		var seen []string
		for _, item := range log["data"].([]any) {
			a := item.(map[string]any)
			ch, _ := a["changes"].(map[string]any)
			if g, ok := ch["guardrailAction"].(map[string]any); ok {
				seen = append(seen, fmt.Sprintf("%s %v->%v", a["action"], g["before"], g["after"]))
			}
		}
		if got := strings.Join(seen, "; "); got != "campaign.updated <nil>->pause; campaign.updated pause-><nil>; campaign.created <nil>->pause" {
			t.Fatalf("guardrailAction in the audit log: %s", got)
		}
	})

	t.Run("ByState", func(t *testing.T) {
		for _, state := range []string{store.CampaignActive, store.CampaignPaused, store.CampaignCompleted} {
			cid := campaignInState(e, blocks, state, nil)
			rec := e.do("PATCH", pathf("/v1/campaigns/%d", cid), e.Admin, map[string]any{"guardrailAction": "pause"})
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "guardrailAction cannot be changed while the campaign is "+state) {
				t.Fatalf("%s: guardrailAction changed: %d %s", state, rec.Code, rec.Body)
			}
			if got := campaignGet(e, cid)["guardrailAction"]; got != "alert" {
				t.Fatalf("%s: guardrailAction=%v after a refused update", state, got)
			}
		}
	})
}
