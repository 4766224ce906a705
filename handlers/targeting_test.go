package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// targetingDefBuyers matches users who have logged a purchase.
const targetingDefBuyers = `{"logic":"AND","rules":[{"ruleType":"event","eventId":"purchase","operator":"has_performed"}]}`

// targetingCampaign creates an audience from def and an active two-variant
// campaign targeting it; it returns both ids.
func targetingCampaign(e *testEnv, def string) (audienceID, campaignID int64) {
	e.t.Helper()
	audienceID = num(audienceCreate(e, "targeted", def), "id")
	campaignID = campaignInState(e, campaignBlocks(e, 2), "active", map[string]any{"audienceId": audienceID})
	return audienceID, campaignID
}

// targetingWantOut fails unless the variant request gets the exact
// not_in_audience answer.
func targetingWantOut(e *testEnv, campaignID int64, body any) {
	e.t.Helper()
	rec := campaignAsk(e, campaignID, body)
	want := fmt.Sprintf(`{"campaignId":%d,"variantId":null,"reason":"not_in_audience"}`, campaignID)
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		e.t.Fatalf("variant %v: status=%d body=%s, want 200 %s", body, rec.Code, rec.Body.String(), want)
	}
}

// targetingUser returns the stored profile of a user, or fails.
func targetingUser(e *testEnv, userID string) map[string]any {
	e.t.Helper()
	return e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/users/%s", e.App.ID, userID), e.Admin, nil)
}

func TestTargetingAttributeRule(t *testing.T) {
	e := newEnv(t)
	_, cid := targetingCampaign(e, audienceDefDE)

	t.Run("UnknownAttributeNotInAudience", func(t *testing.T) {
		targetingWantOut(e, cid, map[string]any{"userId": "tg-anna"})
		if got, want := campaignImpressions(e, cid), int64(0); got != want {
			t.Fatalf("impressions=%d, want %d", got, want)
		}
		// The refused request still made a known user, without attributes.
		if got, _ := json.Marshal(targetingUser(e, "tg-anna")["attributes"]); string(got) != `{}` {
			t.Fatalf("attributes=%s, want {}", got)
		}
	})
	t.Run("WrongValueNotInAudience", func(t *testing.T) {
		targetingWantOut(e, cid, map[string]any{"userId": "tg-pierre", "attributes": map[string]any{"country": "FR"}})
		if got, want := campaignImpressions(e, cid), int64(0); got != want {
			t.Fatalf("impressions=%d, want %d", got, want)
		}
	})
	t.Run("RequestAttributesMergedBeforeCheck", func(t *testing.T) {
		a := campaignAssign(e, cid, map[string]any{"userId": "tg-anna", "attributes": map[string]any{"country": "DE"}})
		if got, want := *a.ImpressionRecorded, true; got != want {
			t.Fatalf("impressionRecorded=%v, want %v", got, want)
		}
		if got, want := campaignImpressions(e, cid), int64(1); got != want {
			t.Fatalf("impressions=%d, want %d", got, want)
		}
		// Returning without attributes: the stored profile still matches and
		// the assignment is kept.
		again := campaignAssign(e, cid, map[string]any{"userId": "tg-anna"})
		if *again.VariantID != *a.VariantID || *again.ImpressionRecorded {
			t.Fatalf("repeat=%+v, want variant %d without a new impression", again, *a.VariantID)
		}
	})
	t.Run("IdentifiedFirst", func(t *testing.T) {
		audienceIdentify(e, "tg-bernd", map[string]any{"country": "DE"})
		a := campaignAssign(e, cid, map[string]any{"userId": "tg-bernd"})
		if !*a.ImpressionRecorded {
			t.Fatalf("answer=%+v, want a recorded impression", a)
		}
	})
	t.Run("SessionOnlyVisitor", func(t *testing.T) {
		// A session has no profile, so neither attributes nor anything else
		// can place it in an audience.
		targetingWantOut(e, cid, map[string]any{"sessionId": "tg-sess-1"})
		targetingWantOut(e, cid, map[string]any{"sessionId": "tg-sess-2", "attributes": map[string]any{"country": "DE"}})
		if got, want := campaignImpressions(e, cid), int64(2); got != want {
			t.Fatalf("impressions=%d, want %d", got, want)
		}
	})
	t.Run("ProfileShowsMergedAttributes", func(t *testing.T) {
		campaignAsk(e, cid, map[string]any{"userId": "tg-carla", "attributes": map[string]any{"plan": "pro", "age": 31}})
		campaignAssign(e, cid, map[string]any{"userId": "tg-carla", "attributes": map[string]any{"country": "DE", "age": 32}})
		got, _ := json.Marshal(targetingUser(e, "tg-carla")["attributes"])
		if want := `{"age":32,"country":"DE","plan":"pro"}`; string(got) != want {
			t.Fatalf("attributes=%s, want %s", got, want)
		}
	})
}

func TestTargetingEventRule(t *testing.T) {
	e := newEnv(t)
	_, cid := targetingCampaign(e, targetingDefBuyers)
	targetingWantOut(e, cid, map[string]any{"userId": "tg-buyer"})
	// Another event does not match the rule.
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "view", "userId": "tg-buyer"})
	targetingWantOut(e, cid, map[string]any{"userId": "tg-buyer"})
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli,
		map[string]any{"eventId": "purchase", "userId": "tg-buyer", "metadata": map[string]any{"amount": 10}})
	a := campaignAssign(e, cid, map[string]any{"userId": "tg-buyer"})
	if !*a.ImpressionRecorded {
		t.Fatalf("answer=%+v, want a recorded impression", a)
	}
	if got, want := campaignImpressions(e, cid), int64(1); got != want {
		t.Fatalf("impressions=%d, want %d", got, want)
	}
}

func TestTargetingEventsMakeKnownUsers(t *testing.T) {
	e := newEnv(t)
	path := pathf("/v1/apps/%d/users/tg-newbie", e.App.ID)
	audienceWantError(t, e.do("GET", path, e.Admin, nil), http.StatusNotFound, "NOT_FOUND")
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "signup", "userId": "tg-newbie"})
	p := targetingUser(e, "tg-newbie")
	if got, want := p["userId"], "tg-newbie"; got != want {
		t.Fatalf("userId=%v, want %v", got, want)
	}
	if got, _ := json.Marshal(p["attributes"]); string(got) != `{}` {
		t.Fatalf("attributes=%s, want {}", got)
	}
	if p["firstSeen"] == nil || p["lastSeen"] == nil {
		t.Fatalf("profile=%v, want firstSeen and lastSeen", p)
	}
}

func TestTargetingArchivedAudience(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	archived := num(audienceCreate(e, "old", audienceDefDE), "id")
	e.must(http.StatusOK, "PATCH", pathf("/v1/audiences/%d", archived), e.Admin, map[string]any{"status": "archived"})

	t.Run("RefusedOnCreate", func(t *testing.T) {
		for _, status := range []string{"draft", "active"} {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin,
				campaignBody(blocks, map[string]any{"audienceId": archived, "status": status}))
			campaignWantFields(t, rec, "audienceId")
		}
	})
	t.Run("RefusedOnDraftPatch", func(t *testing.T) {
		id := campaignInState(e, blocks, "draft", nil)
		campaignWantFields(t, e.do("PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"audienceId": archived}), "audienceId")
		if got := campaignGet(e, id)["audienceId"]; got != nil {
			t.Fatalf("audienceId=%v after a refused PATCH, want null", got)
		}
		// The same audience, active again, is accepted.
		e.must(http.StatusOK, "PATCH", pathf("/v1/audiences/%d", archived), e.Admin, map[string]any{"status": "active"})
		e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d", id), e.Admin, map[string]any{"audienceId": archived})
		e.must(http.StatusOK, "PATCH", pathf("/v1/audiences/%d", archived), e.Admin, map[string]any{"status": "archived"})
	})
	t.Run("ArchivedAfterAttach", func(t *testing.T) {
		aid, cid := targetingCampaign(e, audienceDefDE)
		kept := campaignAssign(e, cid, map[string]any{"userId": "tg-early", "attributes": map[string]any{"country": "DE"}})
		e.must(http.StatusOK, "PATCH", pathf("/v1/audiences/%d", aid), e.Admin, map[string]any{"status": "archived"})
		before := campaignImpressions(e, cid)
		targetingWantOut(e, cid, map[string]any{"userId": "tg-late", "attributes": map[string]any{"country": "DE"}})
		audienceIdentify(e, "tg-late2", map[string]any{"country": "DE"})
		targetingWantOut(e, cid, map[string]any{"userId": "tg-late2"})
		again := campaignAssign(e, cid, map[string]any{"userId": "tg-early"})
		if *again.VariantID != *kept.VariantID || *again.ImpressionRecorded {
			t.Fatalf("returning user=%+v, want variant %d without a new impression", again, *kept.VariantID)
		}
		if got, want := campaignImpressions(e, cid), before; got != want {
			t.Fatalf("impressions=%d, want %d", got, want)
		}
	})
}
