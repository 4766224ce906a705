package handlers

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"service/assign"
)

// exposurePick is the variant the hash gives user in a weighted campaign
// of the given variants and weights.
func exposurePick(campaign int64, variants []int64, weights []float64, user string) int64 {
	return variants[assign.Pick(assign.Bucket(campaign, user), weights)]
}

// exposuresPost sends exposures and returns data, failing unless 200.
func exposuresPost(e *testEnv, xs []any) []any {
	e.t.Helper()
	m := e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/exposures", e.App.ID), e.Cli, map[string]any{"exposures": xs})
	if id, _ := m["requestId"].(string); id == "" {
		e.t.Fatalf("no requestId: %v", m)
	}
	return m["data"].([]any)
}

// TestExposures sends every kind of exposure in one call: those the server
// agrees with are recorded once and stick, the others are refused one by
// one, counted nowhere, and the same call sent again changes nothing.
func TestExposures(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	de := audienceCreate(e, "de", `{"rules":[{"field":"country","operator":"equals","value":"DE"}]}`)
	split := campaignInState(e, blocks, "active", map[string]any{"key": "split"})
	targeted := campaignInState(e, blocks, "active", map[string]any{"key": "targeted", "audienceId": num(de, "id")})
	spaced := campaignInState(e, blocks, "active", map[string]any{"key": "spaced", "namespace": map[string]any{"id": "ns", "range": []any{0, 0.5}}})
	rr := campaignInState(e, blocks, "active", map[string]any{"key": "rr", "assignmentType": "round_robin"})
	draft := campaignInState(e, blocks, "draft", map[string]any{"key": "draft"})
	other := &testEnv{t: t, DB: e.DB, Srv: e.Srv}
	other.App, other.Admin, other.Read, other.Cli = e.newApp("other", "enterprise", 1_000_000)
	otherBlocks := campaignBlocks(other, 2)
	foreign := campaignInState(other, otherBlocks, "active", nil)
	half := []float64{50, 50}
	sv, tv := campaignVariantIDs(e, split), campaignVariantIDs(e, targeted)
	pick := func(c int64, vs []int64, u string) int64 { return exposurePick(c, vs, half, u) }
	wrong := func(c int64, vs []int64, u string) int64 {
		if pick(c, vs, u) == vs[0] {
			return vs[1]
		}
		return vs[0]
	}
	var outside string
	for i := 0; outside == ""; i++ {
		if u := fmt.Sprintf("far-%d", i); !assign.InNamespace("ns", u, 0, 0.5) {
			outside = u
		}
	}
	spacedV := campaignVariantIDs(e, spaced)
	cases := []struct {
		x      map[string]any
		reason string // "" when recorded
	}{
		{map[string]any{"campaignId": split, "variantId": pick(split, sv, "ann"), "userId": "ann"}, ""},
		{map[string]any{"campaignId": split, "variantId": wrong(split, sv, "bob"), "userId": "bob"}, "variant_mismatch"},
		{map[string]any{"campaignId": 999999, "variantId": sv[0], "userId": "ann"}, "unknown_campaign"},
		{map[string]any{"campaignId": split, "variantId": tv[0], "userId": "ann"}, "unknown_variant"},
		{map[string]any{"campaignId": rr, "variantId": campaignVariantIDs(e, rr)[0], "userId": "ann"}, "remote_campaign"},
		{map[string]any{"campaignId": draft, "variantId": campaignVariantIDs(e, draft)[0], "userId": "ann"}, "campaign_not_active"},
		{map[string]any{"campaignId": spaced, "variantId": pick(spaced, spacedV, outside), "userId": outside}, "not_in_namespace"},
		{map[string]any{"campaignId": targeted, "variantId": pick(targeted, tv, "fr"), "userId": "fr", "attributes": map[string]any{"country": "FR"}}, "not_in_audience"},
		{map[string]any{"campaignId": targeted, "variantId": pick(targeted, tv, "de"), "userId": "de", "attributes": map[string]any{"country": "DE"}}, ""},
		{map[string]any{"campaignId": targeted, "variantId": pick(targeted, tv, "sess"), "sessionId": "sess"}, "not_in_audience"},
		{map[string]any{"campaignId": foreign, "variantId": campaignVariantIDs(other, foreign)[0], "userId": "ann"}, "unknown_campaign"},
		{map[string]any{"campaignId": split, "variantId": pick(split, sv, "visit-1"), "sessionId": "visit-1"}, ""},
		{map[string]any{"campaignId": split, "variantId": pick(split, sv, "ann"), "userId": "ann"}, ""}, // the first again
		{map[string]any{"campaignId": split, "variantId": wrong(split, sv, "ann"), "userId": "ann"}, "variant_mismatch"},
	}
	xs := make([]any, len(cases))
	for i, c := range cases {
		xs[i] = c.x
	}
	// Items that are not exposures are refused on their own.
	xs = append(xs, map[string]any{"campaignId": split, "variantId": sv[0]}, "nope", map[string]any{"campaignId": "x", "variantId": 0, "userId": "u"})
	wantFields := [][]string{{"userId"}, nil, {"campaignId"}}
	for round := 0; round < 2; round++ {
		data := exposuresPost(e, xs)
		if len(data) != len(xs) {
			t.Fatalf("%d results for %d exposures", len(data), len(xs))
		}
		for i, c := range cases {
			got := data[i].(map[string]any)
			want := map[string]any{"index": float64(i), "recorded": c.reason == ""}
			if c.reason != "" {
				want["reason"] = c.reason
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round %d, exposure %d %v: %v, want %v", round, i, c.x, got, want)
			}
		}
		for j, names := range wantFields {
			i := len(cases) + j
			got := data[i].(map[string]any)
			fields, _ := got["fields"].(map[string]any)
			if num(got, "index") != int64(i) || got["recorded"] != false || got["reason"] != "invalid" || len(fields) == 0 {
				t.Errorf("invalid exposure %d: %v", i, got)
			}
			for _, f := range names {
				if _, ok := fields[pathf("exposures[%d].", i)+f]; !ok {
					t.Errorf("invalid exposure %d: fields %v lack %s", i, fields, f)
				}
			}
		}
		// Recorded once: ann and the session in split, de in targeted.
		if got := campaignImpressions(e, split); got != 2 {
			t.Errorf("round %d: split impressions %d, want 2", round, got)
		}
		if got := campaignImpressions(e, targeted); got != 1 {
			t.Errorf("round %d: targeted impressions %d, want 1", round, got)
		}
		for _, id := range []int64{spaced, rr, draft} {
			if got := campaignImpressions(e, id); got != 0 {
				t.Errorf("round %d: campaign %d impressions %d, want 0", round, id, got)
			}
		}
		if got := campaignImpressions(other, foreign); got != 0 {
			t.Errorf("round %d: another app's campaign counted %d", round, got)
		}
	}
	// The variant route agrees: what was recorded sticks and counts no
	// more; a refused exposure assigned nobody.
	for _, tc := range []struct {
		campaign int64
		body     map[string]any
		variant  int64
		recorded bool
	}{
		{split, map[string]any{"userId": "ann"}, pick(split, sv, "ann"), false},
		{split, map[string]any{"sessionId": "visit-1"}, pick(split, sv, "visit-1"), false},
		{targeted, map[string]any{"userId": "de"}, pick(targeted, tv, "de"), false},
		{split, map[string]any{"userId": "bob"}, pick(split, sv, "bob"), true},
	} {
		a := campaignAssign(e, tc.campaign, tc.body)
		if *a.VariantID != tc.variant || *a.ImpressionRecorded != tc.recorded {
			t.Errorf("%v in %d: variant %d recorded %v, want %d %v", tc.body, tc.campaign, *a.VariantID, *a.ImpressionRecorded, tc.variant, tc.recorded)
		}
	}
}

// TestExposuresLinkedSession: an exposure naming both ids links them, as
// the variant route does, and the user then holds the session's variant:
// the one the userId's hash gives is refused.
func TestExposuresLinkedSession(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	split := campaignInState(e, blocks, "active", nil)
	vs := campaignVariantIDs(e, split)
	half := []float64{50, 50}
	// A session and a user that the hash puts in different variants.
	session, user := "s-0", ""
	for i := 0; user == ""; i++ {
		if u := fmt.Sprintf("u-%d", i); exposurePick(split, vs, half, u) != exposurePick(split, vs, half, session) {
			user = u
		}
	}
	sessionV := *campaignAssign(e, split, map[string]any{"sessionId": session}).VariantID
	data := exposuresPost(e, []any{
		map[string]any{"campaignId": split, "variantId": exposurePick(split, vs, half, user), "userId": user, "sessionId": session},
		map[string]any{"campaignId": split, "variantId": sessionV, "userId": user, "sessionId": session},
	})
	want := []any{
		map[string]any{"index": 0.0, "recorded": false, "reason": "variant_mismatch"},
		map[string]any{"index": 1.0, "recorded": true},
	}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("%v, want %v", data, want)
	}
	if got := campaignImpressions(e, split); got != 1 {
		t.Errorf("impressions %d, want the session's 1: the link counts no new one", got)
	}
}

// TestExposuresBadCalls: a call that is not a list of 1 to 100 exposures
// is refused as a whole, in the error envelope, and records nothing.
func TestExposuresBadCalls(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	split := campaignInState(e, blocks, "active", nil)
	v := campaignVariantIDs(e, split)[0]
	one := map[string]any{"campaignId": split, "variantId": v, "userId": "u"}
	many := make([]any, 101)
	for i := range many {
		many[i] = one
	}
	for _, tc := range []struct {
		name  string
		body  any
		field string
	}{
		{"malformed JSON", `{"exposures":[`, ""},
		{"not an object", `[]`, ""},
		{"no exposures", map[string]any{}, "exposures"},
		{"exposures not an array", map[string]any{"exposures": one}, "exposures"},
		{"empty", map[string]any{"exposures": []any{}}, "exposures"},
		{"101 exposures", map[string]any{"exposures": many}, "exposures"},
	} {
		rec := e.do("POST", pathf("/v1/apps-external/%d/exposures", e.App.ID), e.Cli, tc.body)
		if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
			t.Errorf("%s: %d %s, want 400 INVALID_REQUEST", tc.name, rec.Code, rec.Body.String())
			continue
		}
		if tc.field != "" {
			if _, ok := fieldsOf(t, rec)[tc.field]; !ok {
				t.Errorf("%s: %s, want field %s", tc.name, rec.Body.String(), tc.field)
			}
		}
	}
	if got := campaignImpressions(e, split); got != 0 {
		t.Errorf("refused calls counted %d impressions", got)
	}
	if rec := e.do("POST", pathf("/v1/apps-external/%d/exposures", e.App.ID), "", map[string]any{"exposures": []any{one}}); rec.Code != http.StatusUnauthorized {
		t.Errorf("without a key: %d", rec.Code)
	}
}
