package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"service/internal/journeys"
)

// idCounts reads a campaign's impressions and conversions per variant
// (ascending id) from its analytics.
func (e *testEnv) idCounts(c evCampaign) (imp, conv []int64) {
	e.t.Helper()
	m := e.anaGet(c.id, e.Admin)
	by := map[int64][2]int64{}
	for _, v := range m["variants"].([]any) {
		vm := v.(map[string]any)
		by[num(vm, "variantId")] = [2]int64{num(vm, "impressions"), num(vm, "conversions")}
	}
	for _, v := range c.variants {
		imp, conv = append(imp, by[v][0]), append(conv, by[v][1])
	}
	return imp, conv
}

func (e *testEnv) idIdentify(body map[string]any) *httpAnswer {
	e.t.Helper()
	rec := e.do("POST", pathf("/v1/apps-external/%d/identify", e.App.ID), e.Cli, body)
	return &httpAnswer{rec.Code, rec.Body.String()}
}

type httpAnswer struct {
	status int
	body   string
}

// idStep is one request of a journey: a variant request, an event, or an
// identify, by userId u and sessionId s.
type idStep struct {
	op   string // "variant", "event:<eventId>", "identify"
	u, s string
	// status is identify's expected status (0: 200); want is a variant
	// request's expected variant, as an index of the campaign's variants.
	status int
	want   int
}

// TestIdentityLinksSessionToUser walks the orders a visitor's requests may
// come in and checks each campaign's impressions and conversions: a person
// counts once, whichever of their ids the requests carry. The campaign is
// round robin, so the first assignment takes variant 0 and the second 1.
func TestIdentityLinksSessionToUser(t *testing.T) {
	e, clock := evSetup(t)
	for _, tc := range []struct {
		name      string
		steps     []idStep
		imp, conv []int64
	}{
		{"SessionAssignedUserNot", []idStep{
			{op: "variant", s: "s"},
			{op: "event:view", s: "s"},
			{op: "identify", u: "u", s: "s"},
			{op: "variant", u: "u", want: 0},
			{op: "variant", u: "u", s: "s", want: 0},
			{op: "variant", s: "s", want: 0},
			{op: "event:buy", u: "u", s: "s"},
			{op: "event:buy", u: "u"},
			{op: "event:buy", s: "s"},
		}, []int64{1, 0}, []int64{1, 0}},
		{"SessionConvertedBeforeLink", []idStep{
			{op: "variant", s: "s"},
			{op: "event:buy", s: "s"},
			{op: "identify", u: "u", s: "s"},
			{op: "event:buy", u: "u", s: "s"},
			{op: "event:buy", u: "u"},
			{op: "variant", u: "u", want: 0},
		}, []int64{1, 0}, []int64{1, 0}},
		{"SessionEventAfterLinkConvertsUser", []idStep{
			{op: "variant", s: "s"},
			{op: "identify", u: "u", s: "s"},
			{op: "event:buy", s: "s"},
			{op: "event:buy", u: "u", s: "s"},
			{op: "event:buy", u: "u"},
		}, []int64{1, 0}, []int64{1, 0}},
		{"BothAssignedUserStands", []idStep{
			{op: "variant", u: "u", want: 0},
			{op: "variant", s: "s", want: 1},
			{op: "identify", u: "u", s: "s"},
			{op: "variant", u: "u", s: "s", want: 0},
			// The session's events are the user's now: one conversion,
			// the user's, whichever id carries the purchase.
			{op: "event:buy", s: "s"},
			{op: "event:buy", u: "u", s: "s"},
			{op: "event:buy", s: "s"},
		}, []int64{1, 1}, []int64{1, 0}},
		{"BothAssignedSessionConvertedBefore", []idStep{
			{op: "variant", u: "u", want: 0},
			{op: "variant", s: "s", want: 1},
			{op: "event:buy", s: "s"},
			{op: "identify", u: "u", s: "s"},
			// What the session counted stays; the user converts once.
			{op: "event:buy", u: "u", s: "s"},
			{op: "event:buy", s: "s"},
		}, []int64{1, 1}, []int64{1, 1}},
		{"VariantPairLinks", []idStep{
			{op: "variant", s: "s", want: 0},
			{op: "variant", u: "u", s: "s", want: 0},
			{op: "variant", u: "u", want: 0},
			{op: "event:buy", u: "u"},
			{op: "event:buy", s: "s"},
			{op: "identify", u: "other", s: "s", status: http.StatusConflict},
		}, []int64{1, 0}, []int64{1, 0}},
		{"UserAssignedAfterLink", []idStep{
			{op: "identify", u: "u", s: "s"},
			{op: "variant", u: "u", want: 0},
			{op: "event:buy", s: "s"},
			{op: "event:buy", u: "u", s: "s"},
		}, []int64{1, 0}, []int64{1, 0}},
		{"LinkIsIdempotent", []idStep{
			{op: "variant", s: "s", want: 0},
			{op: "identify", u: "u", s: "s"},
			{op: "identify", u: "u", s: "s"},
			{op: "variant", u: "u", s: "s", want: 0},
			{op: "identify", u: "u", s: "s"},
			{op: "event:buy", u: "u", s: "s"},
		}, []int64{1, 0}, []int64{1, 0}},
		{"SecondUserIsRefused", []idStep{
			{op: "variant", s: "s", want: 0},
			{op: "identify", u: "u", s: "s"},
			{op: "identify", u: "other", s: "s", status: http.StatusConflict},
			// A shared device: the pair is answered as for the userId
			// alone, a new person, and links nothing.
			{op: "variant", u: "other", s: "s", want: 1},
			{op: "identify", u: "other", s: "s", status: http.StatusConflict},
			{op: "event:buy", u: "other", s: "s"},
			{op: "event:buy", s: "s"},
		}, []int64{1, 1}, []int64{1, 1}},
		// Signed in before the campaign began, then signed out: the
		// session is assigned on its own; signing in again gives the user
		// that assignment, as a link would.
		{"SessionAssignedAfterLink", []idStep{
			{op: "identify", u: "u", s: "s"},
			{op: "variant", s: "s", want: 0},
			{op: "variant", u: "u", s: "s", want: 0},
			{op: "variant", u: "u", want: 0},
			{op: "event:buy", u: "u", s: "s"},
			{op: "event:buy", s: "s"},
		}, []int64{1, 0}, []int64{1, 0}},
		{"ManySessionsOneUser", []idStep{
			{op: "variant", s: "s"},
			{op: "identify", u: "u", s: "s"},
			{op: "identify", u: "u", s: "s2"},
			{op: "variant", u: "u", s: "s2", want: 0},
			{op: "event:buy", s: "s2"},
			{op: "event:buy", s: "s"},
		}, []int64{1, 0}, []int64{1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.evCreateCampaign("buy", nil)
			// Ids of their own per case: links are per app.
			id := func(s string) string {
				if s == "" {
					return ""
				}
				return tc.name + "-" + s
			}
			for i, st := range tc.steps {
				clock.Add(time.Second)
				body := map[string]any{}
				if st.u != "" {
					body["userId"] = id(st.u)
				}
				if st.s != "" {
					body["sessionId"] = id(st.s)
				}
				switch {
				case st.op == "variant":
					got := e.evAssign(c.id, body)
					if st.want >= 0 && got != c.variants[st.want] {
						t.Fatalf("step %d %+v: variant %d, want %d (variants %v)", i, st, got, c.variants[st.want], c.variants)
					}
				case st.op == "identify":
					want := st.status
					if want == 0 {
						want = http.StatusOK
					}
					a := e.idIdentify(body)
					if a.status != want {
						t.Fatalf("step %d %+v: status %d, want %d: %s", i, st, a.status, want, a.body)
					}
					if want == http.StatusConflict && !strings.Contains(a.body, `"code":"SESSION_LINKED"`) {
						t.Fatalf("step %d: body %s, want the SESSION_LINKED envelope", i, a.body)
					}
				case strings.HasPrefix(st.op, "event:"):
					body["eventId"] = strings.TrimPrefix(st.op, "event:")
					e.evLog(body)
				}
			}
			imp, conv := e.idCounts(c)
			if fmt.Sprint(imp) != fmt.Sprint(tc.imp) || fmt.Sprint(conv) != fmt.Sprint(tc.conv) {
				t.Fatalf("impressions %v conversions %v, want %v %v", imp, conv, tc.imp, tc.conv)
			}
		})
	}
}

// TestIdentityRoutesLink: the variants and OpenFeature routes link a pair
// as the variant route does, and answer a session linked to another user
// as for the userId alone.
func TestIdentityRoutesLink(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("buy", map[string]any{"key": "checkout"})
	routes := []struct {
		name string
		path string
	}{
		{"Variants", pathf("/v1/apps-external/%d/variants", e.App.ID)},
		{"OFREP", "/ofrep/v1/evaluate/flags/checkout"},
		{"OFREPBulk", "/ofrep/v1/evaluate/flags"},
	}
	for i, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			clock.Add(time.Second)
			s, u := fmt.Sprint("rs-", i), fmt.Sprint("ru-", i)
			e.evAssign(c.id, map[string]any{"sessionId": s})
			body := map[string]any{"userId": u, "sessionId": s}
			if strings.HasPrefix(r.path, "/ofrep") {
				body = map[string]any{"context": map[string]any{"targetingKey": u, "sessionId": s}}
			}
			if rec := e.do("POST", r.path, e.Cli, body); rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if a := e.idIdentify(map[string]any{"userId": "someone-else", "sessionId": s}); a.status != http.StatusConflict {
				t.Fatalf("identify with another user: status %d, want 409 (the route did not link): %s", a.status, a.body)
			}
			if a := e.idIdentify(map[string]any{"userId": u, "sessionId": s}); a.status != http.StatusOK {
				t.Fatalf("identify with the linked user: status %d: %s", a.status, a.body)
			}
		})
	}
	imp, _ := e.idCounts(c)
	if imp[0]+imp[1] != int64(len(routes)) {
		t.Fatalf("impressions %v, want %d: one per person", imp, len(routes))
	}
}

// TestIdentifyBadInput: identify's sessionId has the limits of a userId,
// and a refused identify writes nothing.
func TestIdentifyBadInput(t *testing.T) {
	e, _ := evSetup(t)
	long := strings.Repeat("s", 257)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		field  string
	}{
		{"SessionTooLong", map[string]any{"userId": "u", "sessionId": long}, http.StatusBadRequest, "sessionId"},
		{"SessionNotString", map[string]any{"userId": "u", "sessionId": 7}, http.StatusBadRequest, "sessionId"},
		{"UserMissing", map[string]any{"sessionId": "s"}, http.StatusBadRequest, "userId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.idIdentify(tc.body)
			if a.status != tc.status || !strings.Contains(a.body, tc.field) {
				t.Fatalf("status %d body %s, want %d naming %s", a.status, a.body, tc.status, tc.field)
			}
		})
	}
	t.Run("EmptySessionLinksNothing", func(t *testing.T) {
		if a := e.idIdentify(map[string]any{"userId": "alone", "sessionId": ""}); a.status != http.StatusOK {
			t.Fatalf("status %d: %s", a.status, a.body)
		}
		if a := e.idIdentify(map[string]any{"userId": "another", "sessionId": ""}); a.status != http.StatusOK {
			t.Fatalf("a second user with an empty session: status %d, want 200: %s", a.status, a.body)
		}
	})
	t.Run("ConflictWritesNothing", func(t *testing.T) {
		e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/identify", e.App.ID), e.Cli, map[string]any{"userId": "first", "sessionId": "shared"})
		a := e.idIdentify(map[string]any{"userId": "second", "sessionId": "shared", "attributes": map[string]any{"plan": "pro"}})
		if a.status != http.StatusConflict {
			t.Fatalf("status %d: %s", a.status, a.body)
		}
		if rec := e.do("GET", pathf("/v1/apps/%d/users/second", e.App.ID), e.Admin, nil); rec.Code != http.StatusNotFound {
			t.Fatalf("the refused user's profile: status %d, want 404: %s", rec.Code, rec.Body)
		}
	})
}

// TestIdentityJourneys sends 10,000 visitors through the real routes at
// once: each visits anonymously, is assigned, logs views, signs up (by
// identify, or the variant, variants or OpenFeature route naming both
// ids), logs more, perhaps purchases (before or after signing up, by
// either id, sometimes twice) and comes back signed out. Every answer must
// show a person one variant, and one impression (journeys.Run checks
// each); then the analytics must count impressions equal to people,
// conversions equal to the people who purchased, and the views metric
// each view once, per variant.
func TestIdentityJourneys(t *testing.T) {
	e, _ := evSetup(t)
	views := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/metrics", e.App.ID), e.Admin,
		map[string]any{"key": "views", "name": "Views", "type": "count", "eventId": "view"}), "id")
	a, b := e.mustContent("Control block", "published"), e.mustContent("Treatment block", "published")
	m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{
		"name": "Journeys", "key": "journeys", "status": "active", "goalEventId": "buy",
		"endDate": evT0.Add(evRun).Format(time.RFC3339), "metrics": map[string]any{"secondary": []int64{views}},
		"variants": []any{
			map[string]any{"name": "Control", "contentViewId": a, "isControl": true, "trafficAllocation": 50},
			map[string]any{"name": "Treatment", "contentViewId": b, "trafficAllocation": 50},
		},
	})
	cid := num(m, "id")
	do := func(ctx context.Context, _, _ int, method, path, key string, body []byte) (int, []byte, error) {
		req := httptest.NewRequest(method, path, bytes.NewReader(body)).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		e.Srv.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes(), nil
	}
	// The race run looks for data races, which a tenth of the journeys
	// exercise as well; the plain runs of both engines count all of them.
	n := 10_000
	if raceEnabled {
		n = 1_000
	}
	start := time.Now()
	res, err := journeys.Run(context.Background(), journeys.Config{N: n, Workers: 64, AppID: e.App.ID, CampaignID: cid,
		CampaignKey: "journeys", ClientKey: e.Cli, Prefix: "j", Goal: "buy", View: "view"}, do)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d journeys, %d requests in %v", res.People, res.Requests, time.Since(start).Round(time.Millisecond))
	journeysCheck(t, e.anaGet(cid, e.Admin), res, views)
}

// journeysCheck compares a campaign's analytics with what the journeys
// did: per variant, impressions are the people, conversions the people
// who purchased, and the views metric holds every person once and every
// view once.
func journeysCheck(t *testing.T, ana map[string]any, res *journeys.Result, viewsMetric int64) {
	t.Helper()
	var people, converted int64
	for _, v := range ana["variants"].([]any) {
		vm := v.(map[string]any)
		id := num(vm, "variantId")
		if got, want := num(vm, "impressions"), res.ByVariant[id]; got != want {
			t.Errorf("variant %d: impressions %d, want %d people", id, got, want)
		}
		if got, want := num(vm, "conversions"), res.Converted[id]; got != want {
			t.Errorf("variant %d: conversions %d, want %d converting people", id, got, want)
		}
		people += num(vm, "impressions")
		converted += num(vm, "conversions")
	}
	if people != int64(res.People) {
		t.Errorf("impressions %d, want %d people", people, res.People)
	}
	var total int64
	for _, m := range ana["metrics"].([]any) {
		mm := m.(map[string]any)
		if num(mm, "metricId") != viewsMetric {
			continue
		}
		for _, v := range mm["variants"].([]any) {
			vm := v.(map[string]any)
			total += num(vm, "total")
			if got, want := num(vm, "users"), res.ByVariant[num(vm, "variantId")]; got != want {
				t.Errorf("views metric, variant %d: users %d, want %d", num(vm, "variantId"), got, want)
			}
		}
	}
	if total != res.Views {
		t.Errorf("views metric total %d, want the %d views logged", total, res.Views)
	}
	t.Logf("people %d, converting %d, views %d", people, converted, total)
}
