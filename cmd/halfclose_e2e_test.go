package cmd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// halfClosed sends one whole request on a raw TCP connection, shuts down
// the sending side (shutdown(SHUT_WR), as some proxies and tools do), and
// reads the answer.
func halfClosed(t *testing.T, s *e2eServer, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimSuffix(s.base, "/v1"), "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	req := fmt.Sprintf("%s /v1%s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		method, path, host, key, len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s after shutdown(SHUT_WR): %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: %d %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

// TestHalfClosedClientWritesComplete: a client that sends a whole request
// and then closes its sending side gets the normal answer on every write
// route family, the write is stored, and the server logs no error.
func TestHalfClosedClientWritesComplete(t *testing.T) {
	db := migratedAt(t, filepath.Join(t.TempDir(), "half.db"))
	app := strconv.FormatInt(e2eNum(e2eCLI(t, "apps", "create", "--db", db, "--name", "half"), "id"), 10)
	admin, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", app, "--role", "admin")["key"].(string)
	client, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", app, "--role", "client")["key"].(string)
	s := e2eServe(t, "--db", db)

	block := func(name string, items string) int64 {
		return e2eNum(s.call(t, http.StatusCreated, "POST", "/apps/"+app+"/content", admin,
			json.RawMessage(`{"name":"`+name+`","status":"published","items":`+items+`}`)), "id")
	}
	a, b := block("A", `[{"type":"text","content":"a"}]`), block("B", `[{"type":"text","content":"b"}]`)
	form := block("Form", `[{"type":"form","fields":[{"name":"email","type":"email"}]}]`)
	end := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	campaign := e2eNum(s.call(t, http.StatusCreated, "POST", "/apps/"+app+"/campaigns", admin, map[string]any{
		"name": "Live", "status": "active", "endDate": end,
		"variants": []any{map[string]any{"name": "A", "contentViewId": a}, map[string]any{"name": "B", "contentViewId": b}}}), "id")

	for _, tc := range []struct {
		name, path, key, body string
		want                  int
		// stored checks, through the ordinary API, that the write landed.
		stored func(answer map[string]any) bool
	}{
		{"Event", "/apps/" + app + "/events", client, `{"eventId":"half-closed","userId":"u-1"}`, http.StatusCreated,
			func(m map[string]any) bool {
				l := s.call(t, http.StatusOK, "GET", "/apps/"+app+"/events?eventId=half-closed", admin, nil)
				return e2eNum(l, "count") == 1
			}},
		{"VariantForNewUser", fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", app, campaign), client, `{"userId":"new-user"}`, http.StatusOK,
			func(m map[string]any) bool {
				if m["impressionRecorded"] != true {
					return false
				}
				again := s.call(t, http.StatusOK, "POST", fmt.Sprintf("/apps-external/%s/campaigns/%d/variant", app, campaign), client, map[string]any{"userId": "new-user"})
				return again["impressionRecorded"] == false && e2eNum(again, "variantId") == e2eNum(m, "variantId")
			}},
		{"VariantsForNewUser", "/apps-external/" + app + "/variants", client, `{"userId":"other-new-user"}`, http.StatusOK,
			func(m map[string]any) bool {
				again := s.call(t, http.StatusOK, "POST", "/apps-external/"+app+"/variants", client, map[string]any{"userId": "other-new-user"})
				d, _ := again["data"].([]any)
				return len(d) == 1 && d[0].(map[string]any)["impressionRecorded"] == false
			}},
		{"ContentCreate", "/apps/" + app + "/content", admin, `{"name":"Half","items":[]}`, http.StatusCreated,
			func(m map[string]any) bool {
				return s.call(t, http.StatusOK, "GET", fmt.Sprintf("/content/%d", e2eNum(m, "id")), admin, nil)["name"] == "Half"
			}},
		{"CampaignCreate", "/apps/" + app + "/campaigns", admin,
			fmt.Sprintf(`{"name":"Half","variants":[{"name":"A","contentViewId":%d},{"name":"B","contentViewId":%d}]}`, a, b), http.StatusCreated,
			func(m map[string]any) bool {
				return s.call(t, http.StatusOK, "GET", fmt.Sprintf("/campaigns/%d", e2eNum(m, "id")), admin, nil)["name"] == "Half"
			}},
		{"AudienceCreate", "/apps/" + app + "/audiences", admin,
			`{"name":"Half","definition":{"rules":[{"field":"plan","operator":"equals","value":"pro"}]}}`, http.StatusCreated,
			func(m map[string]any) bool {
				return s.call(t, http.StatusOK, "GET", fmt.Sprintf("/audiences/%d", e2eNum(m, "id")), admin, nil)["name"] == "Half"
			}},
		{"FormSubmit", "/apps-external/" + app + "/submit-form", client,
			fmt.Sprintf(`{"contentViewId":%d,"data":{"email":"a@example.com"}}`, form), http.StatusCreated,
			func(m map[string]any) bool {
				l := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/content/%d/submissions", form), admin, nil)
				return len(l["data"].([]any)) == 1
			}},
		{"WebhookCreate", "/apps/" + app + "/webhooks", admin, `{"url":"http://127.0.0.1:9/hook","events":["*"]}`, http.StatusCreated,
			func(m map[string]any) bool {
				return s.call(t, http.StatusOK, "GET", fmt.Sprintf("/webhooks/%d", e2eNum(m, "id")), admin, nil)["url"] == "http://127.0.0.1:9/hook"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := halfClosed(t, s, "POST", tc.path, tc.key, tc.body)
			if code != tc.want {
				t.Fatalf("status=%d, want %d: %v", code, tc.want, m)
			}
			if !tc.stored(m) {
				t.Fatalf("answered %v, but the write is not stored", m)
			}
		})
	}
	// A client that goes away altogether right after its request: the
	// event is stored all the same, and the server logs no error.
	t.Run("ClientGone", func(t *testing.T) {
		host := strings.TrimPrefix(strings.TrimSuffix(s.base, "/v1"), "http://")
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		body := `{"eventId":"gone","userId":"u-2"}`
		fmt.Fprintf(conn, "POST /v1/apps/%s/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			app, host, client, len(body), body)
		conn.Close()
		e2eWait(t, 30*time.Second, "the event of a client that left", func() bool {
			return e2eNum(s.call(t, http.StatusOK, "GET", "/apps/"+app+"/events?eventId=gone", admin, nil), "count") == 1
		})
		// Two events were posted (the half-closed one and this one): both
		// request lines at INFO, with 201.
		e2eWait(t, 30*time.Second, "its request line", func() bool {
			n := 0
			for _, l := range s.Logs() {
				if l["msg"] == "request" && l["method"] == "POST" && l["path"] == "/v1/apps/"+app+"/events" &&
					l["status"] == float64(http.StatusCreated) && l["level"] == "INFO" {
					n++
				}
			}
			return n == 2
		})
	})
	for _, l := range s.Logs() {
		if l["level"] == "ERROR" {
			t.Errorf("the server logged an error: %v", l)
		}
		if l["msg"] == "request" && l["status"] == float64(http.StatusInternalServerError) {
			t.Errorf("a request answered 500: %v", l)
		}
	}
}
