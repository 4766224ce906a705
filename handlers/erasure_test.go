package handlers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"service/store"
)

// TestUserEraseRoute: an admin key erases a user and is told what went,
// with the request's id; the user's events and profile are gone from the
// API; a second call and an unknown user erase 0 and answer 200; an id
// longer than the limit is 400; read and client keys are 403, and their
// calls erase nothing.
func TestUserEraseRoute(t *testing.T) {
	e := newEnv(t)
	user := "erase-route-user"
	e.must(http.StatusOK, "PUT", pathf("/v1/apps/%d/users/%s", e.App.ID, user), e.Admin, map[string]any{"attributes": map[string]any{"plan": "pro"}})
	for range 3 {
		e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "view", "userId": user})
	}
	userPath := pathf("/v1/apps/%d/users/%s", e.App.ID, user)

	for _, key := range []string{e.Read, e.Cli} {
		if got := errCode(t, e.do("DELETE", userPath, key, nil)); got != "FORBIDDEN" {
			t.Fatalf("erasure by a read or client key: %s, want FORBIDDEN", got)
		}
	}
	e.must(http.StatusOK, "GET", userPath, e.Admin, nil) // nothing erased yet

	req := httptest.NewRequest("DELETE", userPath, nil)
	req.Header.Set("Authorization", "Bearer "+e.Admin)
	req.Header.Set("X-Request-Id", "erase-req-1")
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, req)
	var got struct {
		Erased    map[string]int64 `json:"erased"`
		RequestID string           `json:"requestId"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
		t.Fatalf("erase: %d %s", rec.Code, rec.Body.String())
	}
	if got.RequestID != "erase-req-1" || got.Erased["events"] != 3 || got.Erased["profile"] != 1 || got.Erased["assignments"] != 0 {
		t.Fatalf("erase answered %s", rec.Body.String())
	}
	if code := errCode(t, e.do("GET", userPath, e.Admin, nil)); code != "NOT_FOUND" {
		t.Fatalf("profile after the erasure: %s", code)
	}
	events := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/events?userId=%s", e.App.ID, user), e.Admin, nil)
	if list, _ := events["data"].([]any); len(list) != 0 {
		t.Fatalf("%d events of the user after the erasure", len(list))
	}

	for _, u := range []string{user, "never-seen"} {
		m := e.must(http.StatusOK, "DELETE", pathf("/v1/apps/%d/users/%s", e.App.ID, u), e.Admin, nil)
		for k, v := range m["erased"].(map[string]any) {
			if v != float64(0) {
				t.Errorf("erasing %s again: %s = %v, want 0", u, k, v)
			}
		}
	}
	long := e.do("DELETE", pathf("/v1/apps/%d/users/%s", e.App.ID, strings.Repeat("x", store.MaxUserIDLen+1)), e.Admin, nil)
	if long.Code != http.StatusBadRequest || fieldsOf(t, long)["userId"] == nil {
		t.Fatalf("over-long id: %d %s", long.Code, long.Body.String())
	}

	// The audit log names the key, and the user only by a digest.
	log := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/audit-log?action=%s", e.App.ID, store.ActionEndUserErased), e.Admin, nil)
	b, _ := json.Marshal(log)
	if list, _ := log["data"].([]any); len(list) != 3 || strings.Contains(string(b), user) || !strings.Contains(string(b), `"type":"key"`) {
		t.Fatalf("audit log: %s", b)
	}
}

// TestUserExportRoute: the export holds the profile, the assignments with
// the variant's name, the events and the form submissions of the user,
// and nobody else's; read and client keys are 403; a user never seen gets
// an empty document; an over-long id is 400.
func TestUserExportRoute(t *testing.T) {
	e, _ := evSetup(t)
	user := "export-route-user"
	camp := e.evCreateCampaign("buy", nil).id
	e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, camp), e.Cli, map[string]any{"userId": user})
	e.must(http.StatusOK, "PUT", pathf("/v1/apps/%d/users/%s", e.App.ID, user), e.Admin, map[string]any{"attributes": map[string]any{"plan": "pro"}})
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "view", "userId": user, "metadata": map[string]any{"page": "/a"}})
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "view", "userId": "someone-else"})
	// The user's session logged one event by sessionId alone; another
	// visitor's session logged one too.
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "cart", "sessionId": "export-route-session"})
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, map[string]any{"eventId": "cart", "sessionId": "stranger-session"})
	e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/identify", e.App.ID), e.Cli, map[string]any{"userId": user, "sessionId": "export-route-session"})
	path := pathf("/v1/apps/%d/users/%s/export", e.App.ID, user)

	for _, key := range []string{e.Read, e.Cli} {
		if got := errCode(t, e.do("GET", path, key, nil)); got != "FORBIDDEN" {
			t.Fatalf("export by a read or client key: %s, want FORBIDDEN", got)
		}
	}
	rec := e.do("GET", path, e.Admin, nil)
	var doc struct {
		UserID  string `json:"userId"`
		Profile *struct {
			Attributes map[string]any `json:"attributes"`
		} `json:"profile"`
		Assignments []struct {
			CampaignID  int64  `json:"campaignId"`
			VariantName string `json:"variantName"`
		} `json:"assignments"`
		Events []struct {
			EventID   string         `json:"eventId"`
			UserID    string         `json:"userId"`
			SessionID string         `json:"sessionId"`
			Metadata  map[string]any `json:"metadata"`
		} `json:"events"`
		FormSubmissions []any `json:"formSubmissions"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		t.Fatalf("export: %d %s", rec.Code, rec.Body.String())
	}
	if doc.UserID != user || doc.Profile == nil || doc.Profile.Attributes["plan"] != "pro" || len(doc.Assignments) != 1 ||
		doc.Assignments[0].CampaignID != camp || doc.Assignments[0].VariantName == "" || len(doc.Events) != 2 ||
		doc.Events[0].UserID != user || doc.Events[0].Metadata["page"] != "/a" ||
		doc.Events[1].EventID != "cart" || doc.Events[1].SessionID != "export-route-session" || doc.Events[1].UserID != "" || doc.FormSubmissions == nil {
		t.Fatalf("export: %s", rec.Body.String())
	}

	empty := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/users/never-seen/export", e.App.ID), e.Admin, nil)
	if empty["profile"] != nil || len(empty["events"].([]any)) != 0 || len(empty["assignments"].([]any)) != 0 {
		t.Fatalf("export of a user never seen: %v", empty)
	}
	long := e.do("GET", pathf("/v1/apps/%d/users/%s/export", e.App.ID, strings.Repeat("x", store.MaxUserIDLen+1)), e.Admin, nil)
	if long.Code != http.StatusBadRequest {
		t.Fatalf("over-long id: %d %s", long.Code, long.Body.String())
	}
}

// TestUserExportStreams exports a user with 100,000 events over real
// HTTP: the answer comes in chunks, without a length, and the server's
// heap grows by a small part of the document's size while it is read,
// so the rows are encoded as they are read rather than gathered first.
func TestUserExportStreams(t *testing.T) {
	e := newEnv(t)
	const n = 100_000
	user := "export-streams-user"
	meta := `{"note":"` + strings.Repeat("n", 200) + `"}`
	w, err := store.OpenSQL(e.target)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`INSERT INTO events (app_id, event_id, user_id, metadata, ts)
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		SELECT ?, 'view', ?, ?, 1700000000000 + i FROM n`, n, e.App.ID, user, meta); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e.Srv)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+pathf("/v1/apps/%d/users/%s/export", e.App.ID, user), nil)
	req.Header.Set("Authorization", "Bearer "+e.Admin)

	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != -1 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("status %d, length %d, transfer encoding %v; want 200, chunked", resp.StatusCode, resp.ContentLength, resp.TransferEncoding)
	}
	var size, peak uint64
	buf := make([]byte, 64<<10)
	next := uint64(0)
	events, tail := 0, ""
	const mark = `"eventId":"view"`
	for {
		k, err := resp.Body.Read(buf)
		size += uint64(k)
		// A mark may straddle two reads: the last bytes of one go before the next.
		chunk := tail + string(buf[:k])
		events += strings.Count(chunk, mark)
		tail = chunk[max(0, len(chunk)-len(mark)+1):]
		if size >= next {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			next += 1 << 20
		}
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if events != n {
		t.Fatalf("%d events in the export, want %d", events, n)
	}
	growth := int64(peak) - int64(base)
	t.Logf("document %d MiB, heap growth %d MiB", size>>20, growth>>20)
	if growth > int64(size/3) {
		t.Fatalf("the heap grew by %d bytes while a %d-byte document was read: the export is not streamed", growth, size)
	}
}
