package cmd_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"service/internal/storetest"
)

// TestCacheE2ESecondProcess runs two servers on one file: a campaign
// paused through one stops being assigned by the other, for new and for
// returning users, although the other answers returning users from memory.
func TestCacheE2ESecondProcess(t *testing.T) {
	db := storetest.DB(t, filepath.Join(t.TempDir(), "shared.db"))
	app := e2eCLI(t, "apps", "create", "--db", db, "--name", "two")
	appID := fmt.Sprint(e2eNum(app, "id"))
	admin, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "admin")["key"].(string)
	client, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "client")["key"].(string)

	a := e2eServe(t, "--db", db)
	b := e2eServe(t, "--db", db)
	var variants []any
	for _, name := range []string{"Control", "Treatment"} {
		cv := a.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/content", admin, map[string]any{
			"name": name, "status": "published", "items": []any{map[string]any{"type": "text", "content": name}}})
		variants = append(variants, map[string]any{"contentViewId": e2eNum(cv, "id"), "name": name})
	}
	c := a.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/campaigns", admin, map[string]any{
		"name": "Shared", "status": "active", "endDate": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
		"variants": variants})
	id := e2eNum(c, "id")
	variant := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", appID, id)
	for range 2 { // the second answer comes from a's memory
		if r := a.call(t, http.StatusOK, "POST", variant, client, map[string]any{"userId": "returning"}); r["variantId"] == nil {
			t.Fatalf("before the pause: %v", r)
		}
	}

	b.call(t, http.StatusOK, "PATCH", fmt.Sprintf("/campaigns/%d/status", id), admin, map[string]any{"status": "paused"})
	paused := time.Now()
	user := 0
	e2eWait(t, 10*time.Second, "the other server to stop assigning", func() bool {
		returning := a.call(t, http.StatusOK, "POST", variant, client, map[string]any{"userId": "returning"})
		user++
		fresh := a.call(t, http.StatusOK, "POST", variant, client, map[string]any{"userId": fmt.Sprint("new-", user)})
		return returning["variantId"] == nil && fresh["variantId"] == nil
	})
	t.Logf("paused on one server, seen by the other after %s", time.Since(paused).Round(time.Millisecond))
}
