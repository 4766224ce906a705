package cmd_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"service/internal/storetest"
	"service/webhooks"
)

// webhookDeliveries lists a webhook's deliveries.
func webhookDeliveries(s *e2eServer, t *testing.T, key string, hook int64) []map[string]any {
	t.Helper()
	m := s.call(t, http.StatusOK, "GET", fmt.Sprintf("/webhooks/%d/deliveries", hook), key, nil)
	var out []map[string]any
	for _, d := range m["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// TestWebhookE2EDeliverySurvivesKill: a delivery queued while its receiver
// is down survives kill -9 of the server, and after a restart it arrives
// once, with the delivery id recorded before the crash.
func TestWebhookE2EDeliverySurvivesKill(t *testing.T) {
	db := storetest.DB(t, filepath.Join(t.TempDir(), "hooks.db"))
	app := e2eNum(e2eCLI(t, "apps", "create", "--db", db, "--name", "hooks"), "id")
	key, _ := e2eCLI(t, "keys", "create", "--db", db, "--app", strconv.FormatInt(app, 10), "--role", "admin")["key"].(string)

	// A port that refuses connections until the receiver takes it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	receiverAddr := ln.Addr().String()
	ln.Close()

	flags := []string{"--db", db, "--webhook-retry-base", "100ms"}
	srv := e2eServe(t, flags...)
	const secret = "whsec_e2e"
	hook := e2eNum(srv.call(t, http.StatusCreated, "POST", fmt.Sprintf("/apps/%d/webhooks", app), key, map[string]any{
		"url": "http://" + receiverAddr + "/hook", "events": []string{"content.published"}, "secret": secret,
		"maxRetries": 10, "timeoutSeconds": 1}), "id")
	block := srv.call(t, http.StatusCreated, "POST", fmt.Sprintf("/apps/%d/content", app), key, map[string]any{
		"name": "Promo", "status": "published", "items": []any{map[string]any{"type": "text", "content": "hi"}}})

	var before map[string]any
	e2eWait(t, 30*time.Second, "a refused attempt", func() bool {
		list := webhookDeliveries(srv, t, key, hook)
		if len(list) != 1 || e2eNum(list[0], "attemptCount") < 1 {
			return false
		}
		before = list[0]
		return true
	})
	if before["status"] != "pending" {
		t.Fatalf("delivery before the crash=%v", before)
	}
	deliveryID := strconv.FormatInt(e2eNum(before, "id"), 10)
	srv.kill()

	type hit struct {
		header http.Header
		body   []byte
	}
	var mu sync.Mutex
	var hits []hit
	ln, err = net.Listen("tcp", receiverAddr)
	if err != nil {
		t.Fatalf("retake the receiver's port: %v", err)
	}
	rcv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, hit{r.Header.Clone(), body})
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})}
	go rcv.Serve(ln)
	t.Cleanup(func() { rcv.Close() })
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(hits)
	}

	srv = e2eServe(t, flags...)
	e2eWait(t, 30*time.Second, "the delivery after the restart", func() bool { return count() >= 1 })
	e2eWait(t, 30*time.Second, "the success to be recorded", func() bool {
		return webhookDeliveries(srv, t, key, hook)[0]["status"] == "succeeded"
	})
	// Longer than the dispatcher's poll: nothing more may arrive.
	time.Sleep(1500 * time.Millisecond)
	if got := count(); got != 1 {
		t.Fatalf("receiver got %d requests, want exactly 1", got)
	}
	h := hits[0]
	if got := h.header.Get("X-Service-Delivery-ID"); got != deliveryID {
		t.Fatalf("X-Service-Delivery-ID=%s, want %s as recorded before the crash", got, deliveryID)
	}
	if h.header.Get("X-Service-Event") != "content.published" || h.header.Get("User-Agent") != "Service-Webhooks/1.0" {
		t.Fatalf("headers=%v", h.header)
	}
	i := bytes.Index(h.body, []byte(`,"data":`))
	if i < 0 {
		t.Fatalf("body=%s", h.body)
	}
	data := h.body[i+len(`,"data":`) : len(h.body)-1]
	if !webhooks.Verify(secret, data, h.header.Get("X-Service-Signature")) {
		t.Fatalf("signature does not verify: %s", h.body)
	}
	want := fmt.Sprintf(`{"contentViewId":%d,"contentViewName":"Promo","publishedAt":%q,"hasItems":true}`,
		e2eNum(block, "id"), block["publishedAt"])
	if string(data) != want {
		t.Fatalf("data=%s, want %s", data, want)
	}
	after := webhookDeliveries(srv, t, key, hook)[0]
	attempts := after["attempts"].([]any)
	last := attempts[len(attempts)-1].(map[string]any)
	if e2eNum(last, "responseStatus") != 200 || len(attempts) < 2 {
		t.Fatalf("attempts=%v", attempts)
	}
	for _, a := range attempts[:len(attempts)-1] {
		if msg, _ := a.(map[string]any)["error"].(string); !strings.Contains(msg, "refused") {
			t.Fatalf("attempt before the receiver was up: %v", a)
		}
	}
}
