package cmd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/storetest"
)

// TestCrashUnderLoadKeepsAcknowledgedWrites kills the server with SIGKILL
// while many clients write new users' first variant requests and events
// through the group commit, restarts it on the same file, and expects every
// write that was answered before the kill: the same variant with no second
// impression, and each event found again by its logId.
func TestCrashUnderLoadKeepsAcknowledgedWrites(t *testing.T) {
	db := storetest.DB(t, filepath.Join(t.TempDir(), "crash.db"))
	app := e2eCLI(t, "apps", "create", "--db", db, "--name", "crash", "--plan", "enterprise", "--rate-limit", "100000000")
	appID := fmt.Sprint(e2eNum(app, "id"))
	admin, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "admin")["key"].(string)
	client, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "client")["key"].(string)

	s := e2eServe(t, "--db", db)
	var variants []any
	for _, name := range []string{"Control", "Treatment"} {
		cv := s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/content", admin, map[string]any{
			"name": name, "status": "published", "items": []any{map[string]any{"type": "text", "content": name}}})
		variants = append(variants, map[string]any{"contentViewId": e2eNum(cv, "id")})
	}
	// A sum metric on the goal event: what an event moves is journaled
	// with it and applied later, so a kill between the two must lose or
	// double nothing.
	spent := s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/metrics", admin, map[string]any{
		"key": "spent", "name": "Spent", "type": "sum", "eventId": "purchase", "property": "amount"})
	c := s.call(t, http.StatusCreated, "POST", "/apps/"+appID+"/campaigns", admin, map[string]any{
		"name": "Crash", "status": "active", "goalEventId": "purchase",
		"metrics": map[string]any{"secondary": []any{e2eNum(spent, "id")}},
		"endDate": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), "variants": variants})
	campaignID := e2eNum(c, "id")
	variantPath := fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", appID, campaignID)
	eventsPath := "/apps/" + appID + "/events"

	// Acknowledged writes: user -> variant, logId -> event id.
	var mu sync.Mutex
	assigned := map[string]int64{}
	logged := map[string]int64{}
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client5 := &http.Client{Timeout: 5 * time.Second}
	post := func(base, path string, body any) (map[string]any, bool) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+client)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client5.Do(req)
		if err != nil {
			return nil, false // killed in flight: not acknowledged
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		var m map[string]any
		if err != nil || resp.StatusCode >= 300 || json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		return m, true
	}
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				user := fmt.Sprintf("crash-%d-%d", w, i)
				a, ok := post(s.base, variantPath, map[string]any{"userId": user})
				if !ok {
					continue
				}
				logID := "log-" + user
				ev, ok := post(s.base, eventsPath, map[string]any{"eventId": "purchase", "userId": user, "logId": logID, "metadata": map[string]any{"amount": 3}})
				mu.Lock()
				assigned[user] = e2eNum(a, "variantId")
				if ok {
					logged[logID] = e2eNum(ev, "id")
				}
				mu.Unlock()
				acked.Add(1)
			}
		}()
	}
	e2eWait(t, 60*time.Second, "300 acknowledged users", func() bool { return acked.Load() >= 300 })
	s.kill() // the clients are still writing
	close(stop)
	wg.Wait()

	s = e2eServe(t, "--db", db)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d users and %d events acknowledged before the kill", len(assigned), len(logged))
	for user, want := range assigned {
		a := s.call(t, http.StatusOK, "POST", variantPath, client, map[string]any{"userId": user})
		if got := e2eNum(a, "variantId"); got != want || a["impressionRecorded"] != false {
			t.Fatalf("%s after the crash: variant %d recorded %v, want %d recorded false", user, got, a["impressionRecorded"], want)
		}
	}
	for logID, want := range logged {
		user := logID[len("log-"):]
		ev := s.call(t, http.StatusCreated, "POST", eventsPath, client, map[string]any{"eventId": "purchase", "userId": user, "logId": logID, "metadata": map[string]any{"amount": 3}})
		if got := e2eNum(ev, "id"); got != want || ev["duplicate"] != true {
			t.Fatalf("event %s after the crash: id %d duplicate %v, want id %d duplicate true", logID, got, ev["duplicate"], want)
		}
	}
	an := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d/analytics", campaignID), admin, nil)
	if got := e2eNum(an, "totalImpressions"); got < int64(len(assigned)) {
		t.Fatalf("totalImpressions=%d after the crash, want at least the %d acknowledged", got, len(assigned))
	}
	conversions := e2eNum(an, "totalConversions")
	if conversions < int64(len(logged)) {
		t.Fatalf("totalConversions=%d after the crash, want at least the %d acknowledged", conversions, len(logged))
	}
	// Each stored purchase converted its user once and added 3 to the
	// metric, in one transaction: the metric holds exactly 3 per
	// conversion, whatever the kill caught.
	var total int64
	for _, v := range an["metrics"].([]any)[0].(map[string]any)["variants"].([]any) {
		total += e2eNum(v.(map[string]any), "total")
	}
	if total != 3*conversions {
		t.Fatalf("spent metric total %d after the crash, want 3 for each of the %d conversions", total, conversions)
	}
}

// TestCrashKeepsChangesWithTheirAuditEntries kills the server with SIGKILL
// while clients create and rename content blocks, restarts it on the same
// database, and requires the audit log and the data to agree: every
// acknowledged change has its one entry (found by the request id the
// client sent), every block its creation entry, every rename its entry,
// and no entry names a change that is not there.
func TestCrashKeepsChangesWithTheirAuditEntries(t *testing.T) {
	db := storetest.DB(t, filepath.Join(t.TempDir(), "crash-audit.db"))
	app := e2eCLI(t, "apps", "create", "--db", db, "--name", "audit", "--plan", "enterprise", "--rate-limit", "100000000")
	appID := fmt.Sprint(e2eNum(app, "id"))
	admin, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", appID, "--role", "admin")["key"].(string)

	s := e2eServe(t, "--db", db)
	client := &http.Client{Timeout: 5 * time.Second}
	send := func(method, path, requestID string, body any) (map[string]any, bool) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, s.base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-Id", requestID)
		resp, err := client.Do(req)
		if err != nil {
			return nil, false // killed in flight: not acknowledged
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		var m map[string]any
		if err != nil || resp.StatusCode >= 300 || json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		return m, true
	}
	var mu sync.Mutex
	acked := map[string]bool{} // request ids answered with success
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("%d-%d", w, i)
				c, ok := send("POST", "/apps/"+appID+"/content", "create-"+id, map[string]any{"name": "c-" + id})
				if !ok {
					continue
				}
				_, renamed := send("PATCH", fmt.Sprintf("/content/%d", e2eNum(c, "id")), "rename-"+id, map[string]any{"name": "r-" + id})
				mu.Lock()
				acked["create-"+id] = true
				if renamed {
					acked["rename-"+id] = true
				}
				mu.Unlock()
				n.Add(1)
			}
		}()
	}
	e2eWait(t, 60*time.Second, "100 acknowledged blocks", func() bool { return n.Load() >= 100 })
	s.kill() // the clients are still writing
	close(stop)
	wg.Wait()

	s = e2eServe(t, "--db", db)
	blocks := map[int64]string{}
	for page := 1; ; page++ {
		l := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/apps/%s/content?limit=100&page=%d", appID, page), admin, nil)
		data, _ := l["data"].([]any)
		for _, d := range data {
			m := d.(map[string]any)
			blocks[e2eNum(m, "id")] = m["name"].(string)
		}
		if p, _ := l["pagination"].(map[string]any); p["hasMore"] != true {
			break
		}
	}
	type entry struct {
		action, requestID, after string
		object                   int64
	}
	var entries []entry
	for before := int64(0); ; {
		q := fmt.Sprintf("/apps/%s/audit-log?objectType=content&limit=1000", appID)
		if before > 0 {
			q += fmt.Sprintf("&before=%d", before)
		}
		l := s.call(t, http.StatusOK, "GET", q, admin, nil)
		data, _ := l["data"].([]any)
		if len(data) == 0 {
			break
		}
		for _, d := range data {
			m := d.(map[string]any)
			obj, _ := m["object"].(map[string]any)
			changes, _ := m["changes"].(map[string]any)
			name, _ := changes["name"].(map[string]any)
			after, _ := name["after"].(string)
			entries = append(entries, entry{m["action"].(string), m["requestId"].(string), after, e2eNum(obj, "id")})
			before = e2eNum(m, "id")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d blocks, %d audit entries, %d acknowledged changes after the kill", len(blocks), len(entries), len(acked))
	byRequest := map[string]int{}
	created, renamed := map[int64]int{}, map[int64]string{}
	for _, e := range entries {
		byRequest[e.requestID]++
		if _, ok := blocks[e.object]; !ok {
			t.Fatalf("%s of block %d (request %s): the block is not there", e.action, e.object, e.requestID)
		}
		switch e.action {
		case "content.created":
			created[e.object]++
		case "content.updated":
			renamed[e.object] = e.after
		default:
			t.Fatalf("unexpected action %s", e.action)
		}
	}
	for id := range acked {
		if byRequest[id] != 1 {
			t.Fatalf("acknowledged request %s has %d audit entries, want 1", id, byRequest[id])
		}
	}
	for id, name := range blocks {
		if created[id] != 1 {
			t.Fatalf("block %d %q has %d creation entries, want 1", id, name, created[id])
		}
		if strings.HasPrefix(name, "r-") != (renamed[id] != "") || (renamed[id] != "" && renamed[id] != name) {
			t.Fatalf("block %d is named %q; its rename entry says %q", id, name, renamed[id])
		}
	}
}
