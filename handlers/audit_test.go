package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"service/store"
)

// auditCase is how the audit test exercises one mutating route: setup
// makes what the request acts on and returns the request (path and body)
// and the id of the object the entry must name (0: the id the answer
// carries); refused returns a request on the same route that fails.
type auditCase struct {
	action, objType string
	setup           func(e *testEnv) (path string, body any, obj int64)
	refused         func(e *testEnv) (path string, body any)
}

// provisioningRoutes are the audited routes of the instance key: called
// with it (an admin key is refused them), and listed in the instance's log.
var provisioningRoutes = map[Route]bool{
	{"POST", "/apps"}: true, {"PATCH", "/apps/:appId"}: true, {"DELETE", "/apps/:appId"}: true,
	{"POST", "/apps/:appId/keys"}: true, {"DELETE", "/keys/:id"}: true,
}

// notAudited are the mutating routes that change no configuration, each
// with the reason. Every other mutating route of the document must have an
// auditCase.
var notAudited = map[Route]string{
	{"POST", "/apps-external/:appId/campaigns/:campaignIdOrKey/variant"}: "SDK: an end user's assignment",
	{"POST", "/apps-external/:appId/variants"}:                           "SDK: an end user's assignments",
	{"POST", "/apps-external/:appId/identify"}:                           "SDK: an end user's profile",
	{"POST", "/apps-external/:appId/exposures"}:                          "SDK: end users' assignments, as local evaluation showed them",
	{"POST", "/apps-external/:appId/submit-form"}:                        "SDK: an end user's form submission",
	{"POST", "/content/submit-form"}:                                     "SDK: an end user's form submission",
	{"POST", "/apps/:appId/events"}:                                      "end users' events, not configuration",
	{"POST", "/apps/:appId/events/batch"}:                                "end users' events, not configuration",
	{"PUT", "/apps/:appId/users/:userId"}:                                "an end user's profile, not configuration; the log would keep personal data past --retention",
	{"POST", "/ofrep/v1/evaluate/flags/:key"}:                            "OpenFeature: an end user's assignment",
	{"POST", "/ofrep/v1/evaluate/flags"}:                                 "OpenFeature: an end user's assignments",
	{"POST", "/audiences/:id/check"}:                                     "reads only: whether a user matches",
}

func auditCampaign(e *testEnv, status string) int64 {
	e.t.Helper()
	blocks := []int64{e.mustContent("a", "published"), e.mustContent("b", "published")}
	id := num(campaignCreate(e, campaignBody(blocks, nil)), "id")
	if status != store.CampaignDraft {
		e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", id), e.Admin, map[string]any{"status": status})
	}
	return id
}

func auditAudience(e *testEnv) int64 {
	e.t.Helper()
	return num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/audiences", e.App.ID), e.Admin, map[string]any{
		"name": "DE", "definition": map[string]any{"logic": "AND", "rules": []any{map[string]any{"field": "country", "operator": "equals", "value": "DE"}}},
	}), "id")
}

// auditMetrics numbers the metrics auditMetric makes, whose keys must
// differ within an app.
var auditMetrics atomic.Int64

func auditMetric(e *testEnv) int64 {
	e.t.Helper()
	return num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/metrics", e.App.ID), e.Admin, map[string]any{
		"key": fmt.Sprint("revenue-", auditMetrics.Add(1)), "name": "Revenue", "type": "sum", "eventId": "purchase", "property": "amount",
	}), "id")
}

func auditWebhook(e *testEnv) int64 {
	e.t.Helper()
	return num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Admin,
		map[string]any{"url": "https://hooks.example.com/in", "events": []string{"*"}, "secret": "whsec-0123456789"}), "id")
}

var auditCases = map[Route]auditCase{
	{"POST", "/apps"}: {"app.created", store.ObjectApp,
		func(e *testEnv) (string, any, int64) { return "/v1/apps", map[string]any{"name": "Provisioned"}, 0 },
		func(e *testEnv) (string, any) { return "/v1/apps", map[string]any{"name": ""} }},
	{"PATCH", "/apps/:appId"}: {"app.updated", store.ObjectApp,
		func(e *testEnv) (string, any, int64) {
			return pathf("/v1/apps/%d", e.App.ID), map[string]any{"name": "Renamed"}, e.App.ID
		},
		func(e *testEnv) (string, any) { return pathf("/v1/apps/%d", e.App.ID), map[string]any{"plan": "gold"} }},
	{"DELETE", "/apps/:appId"}: {"app.deleted", store.ObjectApp,
		func(e *testEnv) (string, any, int64) {
			app, _, _, _ := e.newApp("doomed", "free", 0)
			return pathf("/v1/apps/%d", app.ID), nil, app.ID
		},
		func(e *testEnv) (string, any) {
			e.mustContent("data", store.ContentDraft)
			return pathf("/v1/apps/%d", e.App.ID), nil
		}},
	{"POST", "/apps/:appId/keys"}: {"key.created", store.ObjectKey,
		func(e *testEnv) (string, any, int64) {
			return pathf("/v1/apps/%d/keys", e.App.ID), map[string]any{"role": "read", "name": "ci"}, 0
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/apps/%d/keys", e.App.ID), map[string]any{"role": "instance"}
		}},
	{"DELETE", "/keys/:id"}: {"key.revoked", store.ObjectKey,
		func(e *testEnv) (string, any, int64) {
			k, _, err := e.DB.CreateKey(context.Background(), e.App.ID, store.RoleClient, "old")
			if err != nil {
				e.t.Fatal(err)
			}
			return pathf("/v1/keys/%d", k.ID), nil, k.ID
		},
		func(e *testEnv) (string, any) { return "/v1/keys/999999", nil }},

	{"POST", "/apps/:appId/campaigns"}: {"campaign.created", store.ObjectCampaign,
		func(e *testEnv) (string, any, int64) {
			blocks := []int64{e.mustContent("a", "published"), e.mustContent("b", "published")}
			return pathf("/v1/apps/%d/campaigns", e.App.ID), campaignBody(blocks, nil), 0
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/apps/%d/campaigns", e.App.ID), map[string]any{"name": ""}
		}},
	{"PATCH", "/campaigns/:id"}: {"campaign.updated", store.ObjectCampaign,
		func(e *testEnv) (string, any, int64) {
			id := auditCampaign(e, store.CampaignDraft)
			return pathf("/v1/campaigns/%d", id), map[string]any{"name": "Renamed"}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/campaigns/%d", auditCampaign(e, store.CampaignActive)), map[string]any{"variants": []any{}}
		}},
	{"PATCH", "/campaigns/:id/status"}: {"campaign.status_changed", store.ObjectCampaign,
		func(e *testEnv) (string, any, int64) {
			id := auditCampaign(e, store.CampaignActive)
			return pathf("/v1/campaigns/%d/status", id), map[string]any{"status": "paused"}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/campaigns/%d/status", auditCampaign(e, store.CampaignDraft)), map[string]any{"status": "paused"}
		}},
	{"POST", "/campaigns/:id/unarchive"}: {"campaign.status_changed", store.ObjectCampaign,
		func(e *testEnv) (string, any, int64) {
			id := auditCampaign(e, store.CampaignArchived)
			return pathf("/v1/campaigns/%d/unarchive", id), nil, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/campaigns/%d/unarchive", auditCampaign(e, store.CampaignDraft)), nil
		}},
	{"DELETE", "/campaigns/:id"}: {"campaign.deleted", store.ObjectCampaign,
		func(e *testEnv) (string, any, int64) {
			id := auditCampaign(e, store.CampaignDraft)
			return pathf("/v1/campaigns/%d", id), nil, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/campaigns/%d", auditCampaign(e, store.CampaignActive)), nil
		}},

	{"POST", "/apps/:appId/content"}: {"content.created", store.ObjectContent,
		func(e *testEnv) (string, any, int64) {
			return pathf("/v1/apps/%d/content", e.App.ID), map[string]any{"name": "Banner", "items": []any{}}, 0
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/apps/%d/content", e.App.ID), map[string]any{"items": []any{map[string]any{"type": "video"}}}
		}},
	{"PATCH", "/content/:id"}: {"content.updated", store.ObjectContent,
		func(e *testEnv) (string, any, int64) {
			id := e.mustContent("a", "draft")
			return pathf("/v1/content/%d", id), map[string]any{"name": "Renamed"}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/content/%d", e.mustContent("a", "draft")), map[string]any{"status": "gone"}
		}},
	{"PATCH", "/content/:id/:contentViewId"}: {"content.status_changed", store.ObjectContent,
		func(e *testEnv) (string, any, int64) {
			id := e.mustContent("a", "draft")
			return pathf("/v1/content/%d/%d", e.App.ID, id), map[string]any{"status": "published"}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/content/%d/%d", e.App.ID, 999999), map[string]any{"status": "published"}
		}},
	{"DELETE", "/content/:id"}: {"content.deleted", store.ObjectContent,
		func(e *testEnv) (string, any, int64) {
			id := e.mustContent("a", "draft")
			return pathf("/v1/content/%d", id), nil, id
		},
		func(e *testEnv) (string, any) {
			blocks := []int64{e.mustContent("a", "published"), e.mustContent("b", "published")}
			campaignCreate(e, campaignBody(blocks, nil))
			return pathf("/v1/content/%d", blocks[0]), nil
		}},

	{"POST", "/apps/:appId/audiences"}: {"audience.created", store.ObjectAudience,
		func(e *testEnv) (string, any, int64) {
			return pathf("/v1/apps/%d/audiences", e.App.ID), map[string]any{"name": "Any plan", "definition": map[string]any{"logic": "AND", "rules": []any{map[string]any{"field": "plan", "operator": "exists"}}}}, 0
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/apps/%d/audiences", e.App.ID), map[string]any{"name": "Bad", "definition": map[string]any{"logic": "XOR", "rules": []any{}}}
		}},
	{"PATCH", "/audiences/:id"}: {"audience.updated", store.ObjectAudience,
		func(e *testEnv) (string, any, int64) {
			id := auditAudience(e)
			return pathf("/v1/audiences/%d", id), map[string]any{"name": "Germany"}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/audiences/%d", 999999), map[string]any{"name": "Germany"}
		}},
	{"DELETE", "/audiences/:id"}: {"audience.deleted", store.ObjectAudience,
		func(e *testEnv) (string, any, int64) {
			id := auditAudience(e)
			return pathf("/v1/audiences/%d", id), nil, id
		},
		func(e *testEnv) (string, any) {
			aud := auditAudience(e)
			blocks := []int64{e.mustContent("a", "published"), e.mustContent("b", "published")}
			campaignCreate(e, campaignBody(blocks, map[string]any{"audienceId": aud}))
			return pathf("/v1/audiences/%d", aud), nil
		}},

	{"POST", "/apps/:appId/metrics"}: {"metric.created", store.ObjectMetric,
		func(e *testEnv) (string, any, int64) {
			return pathf("/v1/apps/%d/metrics", e.App.ID), map[string]any{"key": "signups", "name": "Sign-ups", "type": "conversion", "eventId": "signup"}, 0
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/apps/%d/metrics", e.App.ID), map[string]any{"key": "Bad Key", "name": "x", "type": "conversion", "eventId": "signup"}
		}},
	{"PATCH", "/metrics/:id"}: {"metric.updated", store.ObjectMetric,
		func(e *testEnv) (string, any, int64) {
			id := auditMetric(e)
			return pathf("/v1/metrics/%d", id), map[string]any{"cap": 500}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/metrics/%d", auditMetric(e)), map[string]any{"property": nil}
		}},
	{"DELETE", "/metrics/:id"}: {"metric.deleted", store.ObjectMetric,
		func(e *testEnv) (string, any, int64) {
			id := auditMetric(e)
			return pathf("/v1/metrics/%d", id), nil, id
		},
		func(e *testEnv) (string, any) {
			m := auditMetric(e)
			blocks := []int64{e.mustContent("a", "published"), e.mustContent("b", "published")}
			campaignCreate(e, campaignBody(blocks, map[string]any{"metrics": map[string]any{"guardrails": []int64{m}}}))
			return pathf("/v1/metrics/%d", m), nil
		}},

	{"POST", "/apps/:appId/webhooks"}: {"webhook.created", store.ObjectWebhook,
		func(e *testEnv) (string, any, int64) {
			return pathf("/v1/apps/%d/webhooks", e.App.ID), map[string]any{"url": "https://hooks.example.com/in", "events": []string{"*"}}, 0
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/apps/%d/webhooks", e.App.ID), map[string]any{"url": "ftp://x", "events": []string{"*"}}
		}},
	{"PATCH", "/webhooks/:id"}: {"webhook.updated", store.ObjectWebhook,
		func(e *testEnv) (string, any, int64) {
			id := auditWebhook(e)
			return pathf("/v1/webhooks/%d", id), map[string]any{"maxRetries": 5}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/webhooks/%d", auditWebhook(e)), map[string]any{"maxRetries": 500}
		}},
	{"DELETE", "/webhooks/:id"}: {"webhook.deleted", store.ObjectWebhook,
		func(e *testEnv) (string, any, int64) {
			id := auditWebhook(e)
			return pathf("/v1/webhooks/%d", id), nil, id
		},
		func(e *testEnv) (string, any) { return pathf("/v1/webhooks/%d", 999999), nil }},
	{"POST", "/webhooks/:id/test"}: {"webhook.test_sent", store.ObjectWebhook,
		func(e *testEnv) (string, any, int64) {
			id := auditWebhook(e)
			return pathf("/v1/webhooks/%d/test", id), nil, id
		},
		func(e *testEnv) (string, any) { return pathf("/v1/webhooks/%d/test", 999999), nil }},
	{"POST", "/webhooks/:id/rotate-secret"}: {"webhook.secret_rotated", store.ObjectWebhook,
		func(e *testEnv) (string, any, int64) {
			id := auditWebhook(e)
			return pathf("/v1/webhooks/%d/rotate-secret", id), map[string]any{}, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/webhooks/%d/rotate-secret", auditWebhook(e)), map[string]any{"gracePeriod": "forever"}
		}},
	{"DELETE", "/apps/:appId/users/:userId"}: {store.ActionEndUserErased, store.ObjectEndUser,
		func(e *testEnv) (string, any, int64) {
			e.must(http.StatusOK, "PUT", pathf("/v1/apps/%d/users/gone", e.App.ID), e.Admin, map[string]any{"attributes": map[string]any{"a": 1}})
			return pathf("/v1/apps/%d/users/gone", e.App.ID), nil, -1 // an end user has no id of ours
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/apps/%d/users/%s", e.App.ID, strings.Repeat("x", store.MaxUserIDLen+1)), nil
		}},
	{"POST", "/webhooks/:id/deliveries/:deliveryId/redeliver"}: {"webhook.redelivered", store.ObjectWebhook,
		func(e *testEnv) (string, any, int64) {
			id := auditWebhook(e)
			d := e.must(http.StatusAccepted, "POST", pathf("/v1/webhooks/%d/test", id), e.Admin, nil)
			return pathf("/v1/webhooks/%d/deliveries/%d/redeliver", id, num(d, "id")), nil, id
		},
		func(e *testEnv) (string, any) {
			return pathf("/v1/webhooks/%d/deliveries/%d/redeliver", auditWebhook(e), 999999), nil
		}},
}

// TestAuditEveryMutatingRoute derives the mutating routes from the OpenAPI
// document and requires, for each, an exactly-one-entry check or a reason
// it changes no configuration. Each audited route then writes one entry
// naming the admin key, the request id, the client address, the action
// and the object; the same route refused (by its role, or by the store)
// writes none.
func TestAuditEveryMutatingRoute(t *testing.T) {
	var routes []Route
	for r := range documented(loadOpenAPI(t)) {
		switch r.Method {
		case "POST", "PUT", "PATCH", "DELETE":
			routes = append(routes, r)
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].Path+routes[i].Method < routes[j].Path+routes[j].Method })
	for r := range auditCases {
		if _, ok := notAudited[r]; ok {
			t.Errorf("%s %s is both audited and exempt", r.Method, r.Path)
		}
	}
	for _, r := range routes {
		c, ok := auditCases[r]
		if !ok {
			if _, exempt := notAudited[r]; !exempt {
				t.Errorf("%s %s changes something and has no audit case: add it to auditCases, or to notAudited with the reason", r.Method, r.Path)
			}
			continue
		}
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			e := newEnv(t)
			key, refusedKey, filter := e.Admin, e.Read, store.AuditFilter{AppID: e.App.ID, Limit: store.MaxAuditLimit}
			if provisioningRoutes[r] {
				key, refusedKey, filter = e.instanceKey(), e.Admin, store.AuditFilter{Instance: true, Limit: store.MaxAuditLimit}
			}
			entries := func() []*store.AuditEntry {
				t.Helper()
				list, err := e.DB.FindAuditLog(context.Background(), filter)
				if err != nil {
					t.Fatal(err)
				}
				return list
			}

			path, body := c.refused(e)
			before := len(entries())
			if rec := e.do(r.Method, path, key, body); rec.Code < 400 || rec.Code > 499 {
				t.Fatalf("refused request: status %d, want 4xx; %s", rec.Code, rec.Body)
			}
			if n := len(entries()) - before; n != 0 {
				t.Fatalf("a refused change wrote %d audit entries", n)
			}

			path, body, obj := c.setup(e)
			before = len(entries())
			if rec := e.do(r.Method, path, refusedKey, body); rec.Code != http.StatusForbidden {
				t.Fatalf("a key without the role: status %d, want 403", rec.Code)
			}
			if n := len(entries()) - before; n != 0 {
				t.Fatalf("a change refused to a key without the role wrote %d audit entries", n)
			}
			rec := e.do(r.Method, path, key, body)
			if rec.Code >= 300 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			list := entries()
			if n := len(list) - before; n != 1 {
				t.Fatalf("the change wrote %d audit entries, want 1", n)
			}
			got := list[0]
			if obj == 0 {
				var m map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
					t.Fatal(err)
				}
				obj = num(m, "id")
			}
			if obj < 0 && got.Action == c.action && got.Object.Type == c.objType && got.Object.ID == nil {
				// An object without an id of the service's (an end user).
			} else if got.Action != c.action || got.Object.Type != c.objType || got.Object.ID == nil || *got.Object.ID != obj {
				t.Fatalf("entry %s on %s %v, want %s on %s %d", got.Action, got.Object.Type, got.Object.ID, c.action, c.objType, obj)
			}
			admin := auditAdminKey(t, e)
			if provisioningRoutes[r] {
				admin = auditInstanceKey(t, e)
			}
			if got.Actor.Type != store.ActorKey || got.Actor.ID == nil || *got.Actor.ID != admin.ID || got.Actor.Name != admin.Name ||
				got.Actor.Prefix != admin.Prefix || !strings.HasPrefix(key, got.Actor.Prefix) || len(got.Actor.Prefix) >= len(key) {
				t.Fatalf("actor %+v, want the key %d by name and prefix", got.Actor, admin.ID)
			}
			if got.RequestID == "" || got.RequestID != rec.Header().Get("X-Request-Id") || got.ClientAddress != "192.0.2.1" {
				t.Fatalf("request id %q (answer's %q), client address %q", got.RequestID, rec.Header().Get("X-Request-Id"), got.ClientAddress)
			}
		})
	}
}

func auditInstanceKey(t testing.TB, e *testEnv) *store.Key {
	t.Helper()
	keys, err := e.DB.FindInstanceKeys(context.Background())
	if err != nil || len(keys) != 1 {
		t.Fatalf("instance keys %v: %v", keys, err)
	}
	return keys[0]
}

func auditAdminKey(t testing.TB, e *testEnv) *store.Key {
	t.Helper()
	keys, err := e.DB.FindKeys(context.Background(), e.App.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Role == store.RoleAdmin {
			return k
		}
	}
	t.Fatal("no admin key")
	return nil
}

// TestAuditLogRoute checks the route: who may call it, its filters, its
// paging and its refusals.
func TestAuditLogRoute(t *testing.T) {
	e := newEnv(t)
	other, otherAdmin, _, _ := e.newApp("other", "pro", 0)
	blocks := []int64{e.mustContent("a", "draft"), e.mustContent("b", "draft"), e.mustContent("c", "draft")}
	e.must(http.StatusOK, "PATCH", pathf("/v1/content/%d", blocks[0]), e.Admin, map[string]any{"name": "A2"})
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", other.ID), otherAdmin, map[string]any{"name": "x"})
	base := pathf("/v1/apps/%d/audit-log", e.App.ID)
	admin := auditAdminKey(t, e)

	list := func(key, query string) []map[string]any {
		t.Helper()
		m := e.must(http.StatusOK, "GET", base+query, key, nil)
		data, _ := m["data"].([]any)
		if int(num(m, "count")) != len(data) {
			t.Fatalf("count %v for %d entries", m["count"], len(data))
		}
		out := make([]map[string]any, len(data))
		for i, d := range data {
			out[i] = d.(map[string]any)
		}
		return out
	}
	// The app's own creation and keys came from the command line.
	all := list(e.Read, "")
	if len(all) != 8 {
		t.Fatalf("%d entries, want 8 (app, 3 keys, 3 blocks, 1 update)", len(all))
	}
	if all[0]["action"] != "content.updated" || all[len(all)-1]["action"] != "app.created" {
		t.Fatalf("not newest first: %v ... %v", all[0]["action"], all[len(all)-1]["action"])
	}
	changes, _ := all[0]["changes"].(map[string]any)
	if name, _ := changes["name"].(map[string]any); name["before"] != "a" || name["after"] != "A2" || len(changes) != 1 {
		t.Fatalf("changes %v", changes)
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"?objectType=content", 4},
		{pathf("?objectType=content&objectId=%d", blocks[0]), 2},
		{"?action=content.created", 3},
		{pathf("?actor=key:%d", admin.ID), 4},
		{"?actor=cli", 4},
		{"?actor=scheduler", 0},
		{"?limit=2", 2},
		{"?startDate=2000-01-01T00:00:00Z&endDate=2100-01-01T00:00:00%2B02:00", 8},
		{"?endDate=2000-01-01T00:00:00Z", 0},
		{pathf("?before=%d", num(all[1], "id")), 6},
	} {
		if got := len(list(e.Admin, tc.query)); got != tc.want {
			t.Errorf("%s: %d entries, want %d", tc.query, got, tc.want)
		}
	}
	for _, q := range []string{"?objectType=planet", "?objectId=x", "?before=0", "?limit=0", "?actor=robot", "?startDate=yesterday"} {
		rec := e.do("GET", base+q, e.Admin, nil)
		if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
			t.Errorf("%s: status %d, want 400", q, rec.Code)
		}
	}
	if rec := e.do("GET", base, e.Cli, nil); rec.Code != http.StatusForbidden {
		t.Errorf("client key: status %d, want 403", rec.Code)
	}
	if rec := e.do("GET", base, otherAdmin, nil); rec.Code != http.StatusForbidden {
		t.Errorf("another app's key: status %d, want 403", rec.Code)
	}
}
