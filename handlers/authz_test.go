package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// authzPolicy is who may call each route, written out here rather than
// read from the router, so that a route whose access changes, or a new
// route, fails TestAuthorizationEveryRouteEveryRole until it is decided.
// manage: admin, and read for GET; sdk: admin and client, and read for
// GET; instance: instance keys only; admin: admin keys only, GET
// included; ofrep: every app key, whatever its
// role (OpenFeature's evaluation, at the server's root, answering in
// OFREP's shape); public: no key.
var authzPolicy = map[string]string{
	"GET /healthz":      "public",
	"GET /livez":        "public",
	"GET /openapi.json": "public",

	"POST /ofrep/v1/evaluate/flags/:key": "ofrep",
	"POST /ofrep/v1/evaluate/flags":      "ofrep",
	"GET /ofrep/v1/configuration":        "ofrep",

	"GET /apps":                     "instance",
	"POST /apps":                    "instance",
	"GET /apps/:appId":              "instance",
	"PATCH /apps/:appId":            "instance",
	"DELETE /apps/:appId":           "instance",
	"GET /apps/:appId/keys":         "instance",
	"POST /apps/:appId/keys":        "instance",
	"DELETE /keys/:id":              "instance",
	"GET /apps/:appId/campaigns":    "manage",
	"POST /apps/:appId/campaigns":   "manage",
	"GET /campaigns/:id":            "manage",
	"PATCH /campaigns/:id":          "manage",
	"PATCH /campaigns/:id/status":   "manage",
	"POST /campaigns/:id/unarchive": "manage",
	"DELETE /campaigns/:id":         "manage",
	"GET /campaigns/:id/analytics":  "manage",
	"GET /apps/:appId/namespaces":   "manage",

	"POST /apps-external/:appId/campaigns/:campaignIdOrKey/variant": "sdk",
	"POST /apps-external/:appId/variants":                           "sdk",
	"GET /apps-external/:appId/ruleset":                             "sdk",
	"GET /apps-external/:appId/ruleset/stream":                      "sdk",
	"POST /apps-external/:appId/exposures":                          "sdk",
	"GET /apps-external/:appId/growthbook/features":                 "sdk",

	"GET /apps/:appId/content":                            "manage",
	"POST /apps/:appId/content":                           "manage",
	"GET /content/:id":                                    "manage",
	"PATCH /content/:id":                                  "manage",
	"PATCH /content/:id/:contentViewId":                   "manage",
	"DELETE /content/:id":                                 "manage",
	"GET /apps-external/:appId/content/:id":               "sdk",
	"POST /apps/:appId/events":                            "sdk",
	"POST /apps/:appId/events/batch":                      "sdk",
	"GET /apps/:appId/events":                             "manage",
	"GET /apps/:appId/audiences":                          "manage",
	"POST /apps/:appId/audiences":                         "manage",
	"GET /audiences/:id":                                  "manage",
	"PATCH /audiences/:id":                                "manage",
	"DELETE /audiences/:id":                               "manage",
	"GET /audiences/:id/members":                          "manage",
	"POST /audiences/:id/check":                           "manage",
	"PUT /apps/:appId/users/:userId":                      "manage",
	"GET /apps/:appId/users/:userId":                      "manage",
	"DELETE /apps/:appId/users/:userId":                   "admin",
	"GET /apps/:appId/users/:userId/export":               "admin",
	"POST /apps-external/:appId/identify":                 "sdk",
	"GET /apps/:appId/webhooks":                           "manage",
	"POST /apps/:appId/webhooks":                          "manage",
	"GET /webhooks/:id":                                   "manage",
	"PATCH /webhooks/:id":                                 "manage",
	"DELETE /webhooks/:id":                                "manage",
	"POST /webhooks/:id/test":                             "manage",
	"POST /webhooks/:id/rotate-secret":                    "manage",
	"GET /webhooks/:id/deliveries":                        "manage",
	"GET /webhooks/:id/deliveries/:deliveryId":            "manage",
	"POST /webhooks/:id/deliveries/:deliveryId/redeliver": "manage",
	"GET /apps/:appId/audit-log":                          "manage",
	"POST /apps-external/:appId/submit-form":              "sdk",
	"POST /content/submit-form":                           "sdk",
	"GET /content/:id/submissions":                        "manage",
	"GET /apps/:appId/form-submissions":                   "manage",
	"GET /apps/:appId/metrics":                            "manage",
	"POST /apps/:appId/metrics":                           "manage",
	"GET /metrics/:id":                                    "manage",
	"PATCH /metrics/:id":                                  "manage",
	"DELETE /metrics/:id":                                 "manage",
}

// authzAllows says whether a role may call a route of the given access.
func authzAllows(access, role, method string) bool {
	switch access {
	case "public":
		return true
	case "instance":
		return role == "instance"
	case "ofrep":
		return role != "instance"
	case "manage":
		return role == "admin" || role == "read" && method == http.MethodGet
	case "admin":
		return role == "admin"
	case "sdk":
		return role == "admin" || role == "client" || role == "read" && method == http.MethodGet
	}
	return false
}

// TestAuthorizationEveryRouteEveryRole calls every route the router
// serves as every role (admin, read, client, instance) and without a key.
// A role the policy refuses gets 403 FORBIDDEN in the error envelope; a
// role it allows gets past authorization (any answer but 401 and 403);
// no key gets 401. App keys call with their own app in the path, the
// instance key with the test's app on the app routes: an instance key is
// refused every app route even for an app that exists, and an app's key
// every provisioning route even for its own app.
func TestAuthorizationEveryRouteEveryRole(t *testing.T) {
	e := newEnv(t)
	roles := []struct{ name, key string }{
		{"admin", e.Admin}, {"read", e.Read}, {"client", e.Cli}, {"instance", e.instanceKey()}, {"none", ""},
	}
	routes := New(nil, nil).Routes()
	seen := map[string]bool{}
	for _, rt := range routes {
		name := rt.Method + " " + rt.Path
		seen[name] = true
		access, ok := authzPolicy[name]
		if !ok {
			t.Errorf("%s is not in authzPolicy: decide who may call it (and say so in docs/api.md)", name)
			continue
		}
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			for _, role := range roles {
				appID := e.App.ID
				if access == "instance" && role.name == "instance" {
					// Allowed, and must not delete or change the test's app.
					appID = 999999
				}
				path := rt.Path
				if path == "/content/:id/:contentViewId" {
					// The in-app edit: its first id is the app's.
					path = fmt.Sprintf("/content/%d/:contentViewId", appID)
				}
				for _, p := range []string{":appId", ":campaignIdOrKey", ":campaignId", ":contentViewId", ":deliveryId", ":id", ":userId", ":key"} {
					v := "999999"
					switch p {
					case ":appId":
						v = fmt.Sprint(appID)
					case ":userId":
						v = "u1"
					}
					path = strings.ReplaceAll(path, p, v)
				}
				if access != "public" && access != "ofrep" || path == "/openapi.json" {
					path = "/v1" + path
				}
				var body any
				if rt.Method != http.MethodGet && rt.Method != http.MethodDelete {
					body = map[string]any{}
				}
				key := role.key
				if access == "public" {
					key = ""
				}
				ctx := context.Background()
				if strings.HasSuffix(path, "/stream") {
					// A stream lasts while its client stays: this one has
					// gone, so it ends after its first event.
					c, cancel := context.WithCancel(ctx)
					cancel()
					ctx = c
				}
				rec := e.doCtx(ctx, rt.Method, path, key, body)
				switch {
				case access == "ofrep" && role.name == "none":
					authzWantOFREP(t, rec, http.StatusUnauthorized)
				case access == "ofrep" && !authzAllows(access, role.name, rt.Method):
					authzWantOFREP(t, rec, http.StatusForbidden)
				case access != "public" && role.name == "none":
					foundationWantError(t, rec, http.StatusUnauthorized, "UNAUTHORIZED")
				case !authzAllows(access, role.name, rt.Method):
					foundationWantError(t, rec, http.StatusForbidden, "FORBIDDEN")
				case rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden || rec.Code >= 500:
					t.Errorf("%s %s as %s: status %d, want past authorization; body=%s", rt.Method, path, role.name, rec.Code, rec.Body.String())
				}
			}
		})
	}
	for name := range authzPolicy {
		if !seen[name] {
			t.Errorf("authzPolicy lists %s, which the router does not serve", name)
		}
	}
}

// authzWantOFREP fails unless rec is an OFREP failure with status: the
// OFREP routes answer in OpenFeature's shape, not the error envelope.
func authzWantOFREP(t *testing.T, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	var body struct {
		ErrorCode    string `json:"errorCode"`
		ErrorDetails string `json:"errorDetails"`
	}
	if rec.Code != status || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.ErrorCode != "GENERAL" || body.ErrorDetails == "" {
		t.Fatalf("status %d, body %s; want %d with an OFREP GENERAL failure", rec.Code, rec.Body.String(), status)
	}
}
