package cmd_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestCampaignE2EStickyAcrossCrash assigns users through the real binary,
// kills it with SIGKILL, restarts it on the same file and expects the same
// variants, no second impression, and every counted impression kept.
func TestCampaignE2EStickyAcrossCrash(t *testing.T) {
	db := migratedAt(t, filepath.Join(t.TempDir(), "e2e.db"))
	app := e2eCLI(t, "apps", "create", "--db", db, "--name", "e2e")
	appID := fmt.Sprint(e2eNum(app, "id"))
	admin, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "admin")["key"].(string)
	client, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "client")["key"].(string)
	if admin == "" || client == "" {
		t.Fatal("keys create printed no key")
	}

	s := e2eServe(t, "--db", db)
	var variants []any
	for _, name := range []string{"Control", "Treatment"} {
		cv := s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/content", admin, map[string]any{
			"name": name, "status": "published", "items": []any{map[string]any{"type": "text", "content": name}}})
		variants = append(variants, map[string]any{"contentViewId": e2eNum(cv, "id"), "name": name})
	}
	c := s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/campaigns", admin, map[string]any{
		"name": "Sticky", "status": "active", "endDate": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), "variants": variants})
	if c["status"] != "active" {
		t.Fatalf("campaign status=%v, want active", c["status"])
	}
	variantPath := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", appID, e2eNum(c, "id"))

	const users = 20
	assigned := map[string]int64{}
	seen := map[int64]bool{}
	for i := range users {
		u := fmt.Sprintf("user-%d", i)
		a := s.call(t, http.StatusOK, "POST", variantPath, client, map[string]any{"userId": u})
		if a["impressionRecorded"] != true || a["variantId"] == nil {
			t.Fatalf("%s: first answer %v", u, a)
		}
		assigned[u] = e2eNum(a, "variantId")
		seen[assigned[u]] = true
	}
	if len(seen) != 2 {
		t.Fatalf("20 users all in one variant: %v", assigned)
	}

	s.kill()
	s = e2eServe(t, "--db", db)
	for u, want := range assigned {
		a := s.call(t, http.StatusOK, "POST", variantPath, client, map[string]any{"userId": u})
		if got := e2eNum(a, "variantId"); got != want || a["impressionRecorded"] != false {
			t.Fatalf("%s after restart: variant %d recorded %v, want %d recorded false", u, got, a["impressionRecorded"], want)
		}
	}
	an := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d/analytics", e2eNum(c, "id")), admin, nil)
	if got := e2eNum(an, "totalImpressions"); got != users {
		t.Fatalf("totalImpressions=%d after restart, want %d", got, users)
	}
}
