package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"service/store"
)

// badBodies are request bodies no route accepts as meant: malformed JSON,
// wrong shapes, wrong types at every level, extreme values.
var badBodies = []string{
	``, `null`, `[]`, `"x"`, `42`, `{`, `{"a":}`, `{}`,
	`{"name":null,"status":null,"variants":null,"definition":null,"items":null,"data":null}`,
	`{"name":5,"status":true,"variants":{},"definition":[],"items":"x","data":[],"eventId":7,"url":3,"events":"*"}`,
	`{"name":"x","variants":[null,1,"a",{"contentViewId":"1"}],"items":[null,1,{"type":null}],"definition":{"logic":7,"rules":[null,{"operator":[]}]}}`,
	`{"status":"active","endDate":"not a date","startDate":12,"timezone":"Nowhere/Nope","audienceId":"1","goalEventId":{}}`,
	`{"contentViewId":1e400,"trafficAllocation":-1e308,"maxRetries":1e20,"timeoutSeconds":-1,"count":1.5}`,
	`{"userId":"` + strings.Repeat("u", 300) + `","sessionId":{},"attributes":[1,2],"metadata":"m","logId":5}`,
	`{"userId":"a","attributes":{"` + strings.Repeat("k", 10) + `":{"deep":[[[[[[[[1]]]]]]]]}}}`,
	`{"data":{"email":{"x":1}},"contentViewId":-3,"environment":[]}`,
	`{"url":"ftp://x","events":["nope"],"headers":{"User-Agent":"x","X":5},"secret":7}`,
	`{"name":"\u0000\ud800","items":[{"type":"form","fields":[{"name":"a","type":"select"},{"name":"a","type":"text","pattern":"("}]}]}`,
	string([]byte{'{', '"', 'n', '"', ':', '"', 0xff, 0xfe, '"', '}'}),
}

// TestBadInputNeverServerError sends every bad body to every route that
// takes one, with resources that exist, and requires a 4xx in the error
// envelope: never a 500, never a panic.
func TestBadInputNeverServerError(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	campaign := campaignInState(e, blocks, store.CampaignActive, nil)
	audience := num(audienceCreate(e, "a", `{"logic":"AND","rules":[{"field":"plan","operator":"equals","value":"pro"}]}`), "id")
	hook := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Admin,
		map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"*"}}), "id")
	delivery := num(e.must(http.StatusAccepted, "POST", pathf("/v1/webhooks/%d/test", hook), e.Admin, nil), "id")
	app := e.App.ID
	routes := []struct{ method, path, key string }{
		{"POST", pathf("/v1/apps/%d/content", app), e.Admin},
		{"PATCH", pathf("/v1/content/%d", blocks[0]), e.Admin},
		{"PATCH", pathf("/v1/content/%d/%d", app, blocks[0]), e.Admin},
		{"POST", pathf("/v1/apps/%d/campaigns", app), e.Admin},
		{"PATCH", pathf("/v1/campaigns/%d", campaign), e.Admin},
		{"PATCH", pathf("/v1/campaigns/%d/status", campaign), e.Admin},
		{"POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", app, campaign), e.Cli},
		{"POST", pathf("/v1/apps-external/%d/variants", app), e.Cli},
		{"POST", pathf("/v1/apps/%d/events", app), e.Cli},
		{"POST", pathf("/v1/apps/%d/audiences", app), e.Admin},
		{"PATCH", pathf("/v1/audiences/%d", audience), e.Admin},
		{"POST", pathf("/v1/audiences/%d/check", audience), e.Admin},
		{"PUT", pathf("/v1/apps/%d/users/u1", app), e.Admin},
		{"POST", pathf("/v1/apps-external/%d/identify", app), e.Cli},
		{"POST", pathf("/v1/apps-external/%d/submit-form", app), e.Cli},
		{"POST", "/v1/content/submit-form", e.Cli},
		{"POST", pathf("/v1/apps/%d/webhooks", app), e.Admin},
		{"PATCH", pathf("/v1/webhooks/%d", hook), e.Admin},
		{"POST", pathf("/v1/webhooks/%d/deliveries/%d/redeliver", hook, delivery), e.Admin},
		{"POST", "/v1/apps", e.instanceKey()},
		{"PATCH", pathf("/v1/apps/%d", app), e.instanceKey()},
		{"POST", pathf("/v1/apps/%d/keys", app), e.instanceKey()},
	}
	for _, rt := range routes {
		for i, body := range badBodies {
			rec := e.do(rt.method, rt.path, rt.key, body)
			if rec.Code >= 500 {
				t.Fatalf("%s %s with body %d: status %d: %s", rt.method, rt.path, i, rec.Code, rec.Body.String())
			}
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("%s %s with body %d: not a JSON object: %s", rt.method, rt.path, i, rec.Body.String())
			}
			if rec.Code >= 400 {
				errCode(t, rec)
			}
		}
	}
}
