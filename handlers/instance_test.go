package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"service/internal/testclock"
	"service/store"
)

// TestInstanceProvisioning walks what a provisioning script does with an
// instance key, under both prefixes: create an app, read and list it,
// change it, give it keys that then work on its routes, list and revoke
// them, and delete the app, refused while it holds data unless forced.
func TestInstanceProvisioning(t *testing.T) {
	e := newEnv(t)
	ik := e.instanceKey()
	for _, prefix := range []string{"/v1", "/api/v1"} {
		t.Run(strings.Trim(prefix, "/"), func(t *testing.T) {
			app := e.must(http.StatusCreated, "POST", prefix+"/apps", ik, map[string]any{
				"name": "  Shop (staging)  ", "plan": "starter", "allowedOrigins": []string{"https://shop.example:443", "https://shop.example"}})
			id := num(app, "id")
			if app["name"] != "Shop (staging)" || app["plan"] != "starter" || num(app, "rateLimit") != 300 {
				t.Fatalf("created %v", app)
			}
			if got := app["allowedOrigins"].([]any); len(got) != 1 || got[0] != "https://shop.example" {
				t.Fatalf("allowedOrigins=%v, want the one origin as browsers send it", got)
			}
			if got := e.must(http.StatusOK, "GET", pathf("%s/apps/%d", prefix, id), ik, nil); got["name"] != "Shop (staging)" || got["allowedOrigins"] == nil {
				t.Fatalf("GET: %v", got)
			}
			list := e.must(http.StatusOK, "GET", prefix+"/apps?limit=1", ik, nil)
			data := list["data"].([]any)
			if len(data) != 1 || num(data[0].(map[string]any), "id") != id {
				t.Fatalf("the newest app first: %v", list)
			}
			if p := list["pagination"].(map[string]any); p["hasMore"] != true || p["total"].(float64) < 2 {
				t.Fatalf("pagination=%v", p)
			}

			// A new plan takes its limit; a rate limit of 0 the plan's.
			upd := e.must(http.StatusOK, "PATCH", pathf("%s/apps/%d", prefix, id), ik, map[string]any{"plan": "pro", "name": "Shop"})
			if upd["plan"] != "pro" || num(upd, "rateLimit") != 1000 || upd["name"] != "Shop" {
				t.Fatalf("PATCH: %v", upd)
			}
			upd = e.must(http.StatusOK, "PATCH", pathf("%s/apps/%d", prefix, id), ik, map[string]any{"rateLimit": 42, "allowedOrigins": []string{"*"}})
			if num(upd, "rateLimit") != 42 || upd["plan"] != "pro" || upd["allowedOrigins"].([]any)[0] != "*" {
				t.Fatalf("PATCH: %v", upd)
			}

			// Keys: the secret once, and it works on the app's own routes.
			admin := e.must(http.StatusCreated, "POST", pathf("%s/apps/%d/keys", prefix, id), ik, map[string]any{"role": "admin", "name": "backend"})
			secret, _ := admin["key"].(string)
			if !strings.HasPrefix(secret, "sk_a_") || num(admin, "appId") != id || admin["role"] != "admin" || admin["name"] != "backend" ||
				admin["prefix"] != secret[:10] || admin["revokedAt"] != nil {
				t.Fatalf("key: %v", admin)
			}
			client := e.must(http.StatusCreated, "POST", pathf("%s/apps/%d/keys", prefix, id), ik, map[string]any{"role": "client"})
			if _, named := client["name"]; named || !strings.HasPrefix(client["key"].(string), "sk_c_") {
				t.Fatalf("an unnamed client key: %v", client)
			}
			e.must(http.StatusCreated, "POST", pathf("%s/apps/%d/content", prefix, id), secret, map[string]any{"name": "hero"})
			keys := e.must(http.StatusOK, "GET", pathf("%s/apps/%d/keys", prefix, id), ik, nil)
			kd := keys["data"].([]any)
			if len(kd) != 2 || num(kd[0].(map[string]any), "id") != num(client, "id") {
				t.Fatalf("keys newest first: %v", keys)
			}
			for _, k := range kd {
				if _, has := k.(map[string]any)["key"]; has {
					t.Fatalf("a listed key shows its plaintext: %v", k)
				}
			}

			revoked := e.must(http.StatusOK, "DELETE", pathf("%s/keys/%d", prefix, num(admin, "id")), ik, nil)
			if revoked["revokedAt"] == nil {
				t.Fatalf("revoke: %v", revoked)
			}
			again := e.must(http.StatusOK, "DELETE", pathf("%s/keys/%d", prefix, num(admin, "id")), ik, nil)
			if again["revokedAt"] != revoked["revokedAt"] {
				t.Fatalf("revoking twice moved revokedAt: %v then %v", revoked, again)
			}
			foundationWantError(t, e.do("GET", pathf("%s/apps/%d/content", prefix, id), secret, nil), http.StatusUnauthorized, "UNAUTHORIZED")

			// The app holds a content block: refused, and nothing goes.
			rec := e.do("DELETE", pathf("%s/apps/%d", prefix, id), ik, nil)
			foundationWantError(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			if !strings.Contains(rec.Body.String(), `"contentViews":1`) || !strings.Contains(rec.Body.String(), "force=true") {
				t.Fatalf("refusal: %s", rec.Body.String())
			}
			e.must(http.StatusOK, "GET", pathf("%s/apps/%d", prefix, id), ik, nil)
			del := e.must(http.StatusOK, "DELETE", pathf("%s/apps/%d?force=true", prefix, id), ik, nil)
			if del["deleted"] != true || del["success"] != true || num(del, "id") != id || del["data"].(map[string]any)["contentViews"].(float64) != 1 {
				t.Fatalf("delete: %v", del)
			}
			for _, p := range []string{"/apps/%d", "/apps/%d/keys"} {
				foundationWantError(t, e.do("GET", pathf(prefix+p, id), ik, nil), http.StatusNotFound, "NOT_FOUND")
			}
			foundationWantError(t, e.do("GET", pathf("%s/apps/%d/content", prefix, id), client["key"].(string), nil), http.StatusUnauthorized, "UNAUTHORIZED")
		})
	}
}

// TestInstanceBadInput: every bad body, path and query of the
// provisioning routes is a 400 naming each bad field at once, an unknown
// app or key a 404, and none of them writes anything.
func TestInstanceBadInput(t *testing.T) {
	e := newEnv(t)
	ik := e.instanceKey()
	ctx := context.Background()
	instanceKey, _, err := e.DB.CreateInstanceKey(ctx, "another")
	if err != nil {
		t.Fatal(err)
	}
	app := e.App.ID
	long := strings.Repeat("é", store.MaxNameLen+1)
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		fields             []string
	}{
		{"CreateEmpty", "POST", "/v1/apps", map[string]any{}, 400, []string{"name"}},
		{"CreateBlankName", "POST", "/v1/apps", map[string]any{"name": "  "}, 400, []string{"name"}},
		{"CreateEveryField", "POST", "/v1/apps", map[string]any{"name": long, "plan": "gold", "rateLimit": -1, "allowedOrigins": []string{"ftp://x"}},
			400, []string{"name", "plan", "rateLimit", "allowedOrigins"}},
		{"CreateWrongTypes", "POST", "/v1/apps", `{"name":5,"plan":"gold","rateLimit":"60"}`, 400, []string{"name", "plan", "rateLimit"}},
		{"CreateNoOrigins", "POST", "/v1/apps", map[string]any{"name": "x", "allowedOrigins": []string{}}, 400, []string{"allowedOrigins"}},
		{"CreateCommaOrigin", "POST", "/v1/apps", map[string]any{"name": "x", "allowedOrigins": []string{"https://a.example,https://b.example"}}, 400, []string{"allowedOrigins[0]"}},
		{"CreateNotObject", "POST", "/v1/apps", `[]`, 400, nil},
		{"CreateMalformed", "POST", "/v1/apps", `{"name":`, 400, nil},
		{"UpdateEmptyName", "PATCH", pathf("/v1/apps/%d", app), map[string]any{"name": "", "plan": "gold"}, 400, []string{"name", "plan"}},
		{"UpdateMissing", "PATCH", "/v1/apps/999999", map[string]any{"name": "x"}, 404, nil},
		{"UpdateBadID", "PATCH", "/v1/apps/abc", map[string]any{"name": "x"}, 400, nil},
		{"GetMissing", "GET", "/v1/apps/999999", nil, 404, nil},
		{"GetBadID", "GET", "/v1/apps/0", nil, 400, nil},
		{"ListBadLimit", "GET", "/v1/apps?limit=0&page=x", nil, 400, []string{"limit", "page"}},
		{"DeleteBadForce", "DELETE", pathf("/v1/apps/%d?force=maybe", app), nil, 400, []string{"force"}},
		{"DeleteMissing", "DELETE", "/v1/apps/999999?force=true", nil, 404, nil},
		{"KeyNoRole", "POST", pathf("/v1/apps/%d/keys", app), map[string]any{}, 400, []string{"role"}},
		{"KeyInstanceRole", "POST", pathf("/v1/apps/%d/keys", app), map[string]any{"role": "instance"}, 400, []string{"role"}},
		{"KeyEveryField", "POST", pathf("/v1/apps/%d/keys", app), map[string]any{"role": "boss", "name": long}, 400, []string{"role", "name"}},
		{"KeyWrongType", "POST", pathf("/v1/apps/%d/keys", app), `{"role":1,"name":"x"}`, 400, []string{"role"}},
		{"KeyMissingApp", "POST", "/v1/apps/999999/keys", map[string]any{"role": "admin"}, 404, nil},
		{"KeysMissingApp", "GET", "/v1/apps/999999/keys", nil, 404, nil},
		{"RevokeMissing", "DELETE", "/v1/keys/999999", nil, 404, nil},
		{"RevokeBadID", "DELETE", "/v1/keys/x", nil, 400, nil},
		// No instance key revokes another: owners do, on the dashboard
		// or with the command line.
		{"RevokeInstanceKey", "DELETE", pathf("/v1/keys/%d", instanceKey.ID), nil, 404, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := instanceState(t, e)
			rec := e.do(tc.method, tc.path, ik, tc.body)
			code := map[int]string{400: "INVALID_REQUEST", 404: "NOT_FOUND"}[tc.status]
			foundationWantError(t, rec, tc.status, code)
			if tc.fields != nil {
				got := fieldsOf(t, rec)
				if len(got) != len(tc.fields) {
					t.Errorf("details.fields=%v, want exactly %v", got, tc.fields)
				}
				for _, f := range tc.fields {
					if _, ok := got[f]; !ok {
						t.Errorf("details.fields=%v, want %s among them", got, f)
					}
				}
			}
			if after := instanceState(t, e); after != before {
				t.Fatalf("a refused request wrote: %s became %s", before, after)
			}
		})
	}
}

// instanceState sums up what the provisioning routes can change.
func instanceState(t *testing.T, e *testEnv) string {
	t.Helper()
	ctx := context.Background()
	apps, err := e.DB.FindApps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range apps {
		keys, err := e.DB.FindKeys(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		revoked := 0
		for _, k := range keys {
			if k.RevokedAt != nil {
				revoked++
			}
		}
		b.WriteString(pathf("%d:%s:%s:%d:%d/%d;", a.ID, a.Name, a.Plan, a.RateLimit, len(keys), revoked))
	}
	ik, err := e.DB.FindInstanceKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ik {
		b.WriteString(pathf("i%d:%v;", k.ID, k.RevokedAt != nil))
	}
	return b.String()
}

// TestInstanceAudit: what an instance key changes is in the audit log,
// with the key as the actor and the request's id and address: in the
// app's log for the app's changes, and in the instance's log for all of
// them, so owners see everything done with instance keys in one place.
func TestInstanceAudit(t *testing.T) {
	e := newEnv(t)
	ik := e.instanceKey()
	ctx := context.Background()
	instanceKeys, err := e.DB.FindInstanceKeys(ctx)
	if err != nil || len(instanceKeys) != 1 {
		t.Fatalf("instance keys: %v %v", instanceKeys, err)
	}
	actor := pathf("key:%d", instanceKeys[0].ID)
	app := num(e.must(http.StatusCreated, "POST", "/v1/apps", ik, map[string]any{"name": "audited"}), "id")
	e.must(http.StatusOK, "PATCH", pathf("/v1/apps/%d", app), ik, map[string]any{"plan": "pro"})
	key := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/keys", app), ik, map[string]any{"role": "read", "name": "ci"}), "id")
	e.must(http.StatusOK, "DELETE", pathf("/v1/keys/%d", key), ik, nil)
	e.must(http.StatusOK, "PATCH", pathf("/v1/apps/%d", app), ik, map[string]any{"plan": "pro"}) // no change: no entry
	e.must(http.StatusOK, "DELETE", pathf("/v1/apps/%d", app), ik, nil)

	want := []string{"app.deleted", "key.revoked", "key.created", "app.updated", "app.created"}
	for _, f := range []store.AuditFilter{{AppID: app, Actor: actor}, {Instance: true, Actor: actor}} {
		entries, err := e.DB.FindAuditLog(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, en := range entries {
			got = append(got, en.Action)
			if en.AppID == nil || *en.AppID != app || en.Actor.Prefix != instanceKeys[0].Prefix || en.Actor.Name != "tests" ||
				en.RequestID == "" || en.ClientAddress == "" {
				t.Errorf("entry %+v: want the app, the instance key as actor, a request id and an address", en)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("filter %+v: actions %v, want %v", f, got, want)
		}
	}
	// The key's entries say what it was.
	entries, err := e.DB.FindAuditLog(ctx, store.AuditFilter{AppID: app, Action: "key.created"})
	if err != nil || len(entries) != 1 || string(entries[0].Changes["role"].After) != `"read"` || entries[0].Object.Name != "ci" {
		t.Fatalf("key.created: %+v %v", entries, err)
	}
	// Another app's changes by its own admin key stay out of the
	// instance's log, as before.
	e.mustContent("not the instance's", store.ContentDraft)
	if entries, err := e.DB.FindAuditLog(ctx, store.AuditFilter{Instance: true, Action: "content.created"}); err != nil || len(entries) != 0 {
		t.Fatalf("an app key's change in the instance's log: %v %v", entries, err)
	}
}

// TestInstanceRateLimit: the instance keys share one budget of
// InstanceRateLimit requests a minute, all of them together, apart from
// every app's: provisioning cannot use up an app's budget, nor an app's
// traffic provisioning's.
func TestInstanceRateLimit(t *testing.T) {
	e := newEnv(t)
	clock := testclock.New(time.Date(2026, 11, 22, 10, 0, 5, 0, time.UTC))
	e.Srv.Now = clock.Now
	ik := e.instanceKey()
	_, other, err := e.DB.CreateInstanceKey(context.Background(), "second")
	if err != nil {
		t.Fatal(err)
	}
	small, smallAdmin, _, _ := e.newApp("small", "free", 0)
	for i := 0; i < InstanceRateLimit; i++ {
		key := ik
		if i%2 == 1 {
			key = other
		}
		rec := e.do("GET", pathf("/v1/apps/%d", small.ID), key, nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i+1, rec.Code, rec.Body.String())
		}
		if i == 0 && (rec.Header().Get("X-RateLimit-Limit") != "600" || rec.Header().Get("X-RateLimit-Remaining") != "599") {
			t.Fatalf("first request: limit %q remaining %q", rec.Header().Get("X-RateLimit-Limit"), rec.Header().Get("X-RateLimit-Remaining"))
		}
	}
	for _, key := range []string{ik, other} {
		rec := e.do("GET", "/v1/apps", key, nil)
		foundationWantError(t, rec, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
		if rec.Header().Get("Retry-After") != "55" {
			t.Fatalf("Retry-After=%q, want 55", rec.Header().Get("Retry-After"))
		}
	}
	// The free app's 60 a minute are untouched.
	rec := e.do("GET", pathf("/v1/apps/%d/content", small.ID), smallAdmin, nil)
	if rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Remaining") != "59" {
		t.Fatalf("the app's own budget: status %d, remaining %q", rec.Code, rec.Header().Get("X-RateLimit-Remaining"))
	}
	clock.Add(time.Minute)
	e.must(http.StatusOK, "GET", "/v1/apps", ik, nil)
}
