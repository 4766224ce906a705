package webhooks_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"service/webhooks"
)

// verifyNodeDir holds the committed package.json and package-lock.json of
// the standardwebhooks verifier and the receiver script.
var verifyNodeDir = filepath.Join("testdata", "verify-node")

var npmOnce struct {
	sync.Once
	err error
	out []byte
}

// nodeReceiver is receiver.js running under node: a webhook receiver that
// verifies deliveries with the standardwebhooks npm package.
type nodeReceiver struct {
	URL  string // the receiver's base URL; deliveries go to URL + "/hook"
	node string
}

// nodeEntry is what the receiver logged about one delivery.
type nodeEntry struct {
	WebhookID        string `json:"webhookId"`
	WebhookTimestamp string `json:"webhookTimestamp"`
	WebhookSignature string `json:"webhookSignature"`
	ServiceSignature string `json:"serviceSignature"`
	Body             string `json:"body"`
	VerifiedWith     string `json:"verifiedWith"`
	OK               bool   `json:"ok"`
	Error            string `json:"error"`
}

// startNodeReceiver installs the verifier with npm ci (once per test
// binary) and starts the receiver. Without node or npm the test is skipped,
// loudly, since it cannot run at all; every other failure fails it.
func startNodeReceiver(t *testing.T) *nodeReceiver {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		fmt.Fprintf(os.Stderr, "\n*** %s SKIPPED: node and npm are needed to verify Standard Webhooks signatures with the standardwebhooks package (node: %v, npm: %v) ***\n\n", t.Name(), errNode, errNpm)
		t.Skipf("node/npm not installed: node %v, npm %v", errNode, errNpm)
	}
	npmOnce.Do(func() {
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = verifyNodeDir
		npmOnce.out, npmOnce.err = cmd.CombinedOutput()
	})
	if npmOnce.err != nil {
		t.Fatalf("npm ci in %s: %v: %s", verifyNodeDir, npmOnce.err, npmOnce.out)
	}
	cmd := exec.Command(node, "receiver.js")
	cmd.Dir = verifyNodeDir
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		port, ok := strings.CutPrefix(l, "listening ")
		if !ok {
			t.Fatalf("receiver.js said %q", l)
		}
		return &nodeReceiver{URL: "http://127.0.0.1:" + port, node: node}
	case <-time.After(30 * time.Second):
		t.Fatal("receiver.js did not start within 30s")
	}
	return nil
}

// useSecret makes the receiver verify with secret from now on.
func (r *nodeReceiver) useSecret(t *testing.T, secret string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"secret": secret})
	resp, err := http.Post(r.URL+"/_secret", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("set secret: status %d", resp.StatusCode)
	}
}

func (r *nodeReceiver) log(t *testing.T) []nodeEntry {
	t.Helper()
	resp, err := http.Get(r.URL + "/_log")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []nodeEntry
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// entryFor waits for the receiver to log a delivery with webhook-id id
// verified with secret, returning the first such entry.
func (r *nodeReceiver) entryFor(t *testing.T, id, secret string) nodeEntry {
	t.Helper()
	var found nodeEntry
	e2eEventually(t, 10*time.Second, "delivery "+id+" at the node receiver", func() bool {
		for _, e := range r.log(t) {
			if e.WebhookID == id && e.VerifiedWith == secret {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

// TestE2EStandardWebhooksRotation delivers to a receiver that verifies with
// the standardwebhooks npm package, before, during and after a rotation of
// the webhook's secret, and checks the spec's own signature alongside.
func TestE2EStandardWebhooksRotation(t *testing.T) {
	rcv := startNodeReceiver(t)
	e := e2eNew(t)
	e.start(50*time.Millisecond, nil)
	const first = "first-secret-0123456789"
	rcv.useSecret(t, first)
	// No retries: a refused delivery stays refused until redelivered, so
	// nothing arrives that the test did not ask for.
	hook := e.hook(map[string]any{"url": rcv.URL + "/hook", "secret": first, "maxRetries": 0})
	send := func() string {
		t.Helper()
		d := e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)
		return fmt.Sprint(e2eNum(d, "id"))
	}
	// check asserts an entry verified (or not) and how many signatures
	// webhook-signature carried, and verifies X-Service-Signature with the
	// existing Go check under current.
	check := func(what string, en nodeEntry, ok bool, sigs int, current string) {
		t.Helper()
		if en.OK != ok {
			t.Fatalf("%s: verified=%v (%s), want %v", what, en.OK, en.Error, ok)
		}
		if got := len(strings.Fields(en.WebhookSignature)); got != sigs {
			t.Fatalf("%s: webhook-signature %q has %d signatures, want %d", what, en.WebhookSignature, got, sigs)
		}
		for _, s := range strings.Fields(en.WebhookSignature) {
			if !strings.HasPrefix(s, "v1,") {
				t.Fatalf("%s: signature %q is not v1", what, s)
			}
		}
		hit := e2eHit{Body: []byte(en.Body)}
		if !webhooks.Verify(current, hit.Data(t), en.ServiceSignature) {
			t.Fatalf("%s: X-Service-Signature %q does not verify with the current secret", what, en.ServiceSignature)
		}
	}

	// Before any rotation: one secret, one signature.
	id := send()
	check("before", rcv.entryFor(t, id, first), true, 1, first)
	if w := e.webhook(hook); w["secretRotatedAt"] != nil || w["previousSecretExpiresAt"] != nil {
		t.Fatalf("before rotation: %v", w)
	}

	// During the grace period both secrets sign: a receiver still on the
	// old one and one already on the new one both accept.
	rot := e.call(http.StatusOK, "POST", fmt.Sprintf("/v1/webhooks/%d/rotate-secret", hook), e.Admin, map[string]any{"gracePeriod": "1h"})
	second, _ := rot["secret"].(string)
	if second == "" || second == first {
		t.Fatalf("rotation answered secret %q", second)
	}
	w := e.webhook(hook)
	if _, shown := w["secret"]; shown || w["secretRotatedAt"] == nil || w["previousSecretExpiresAt"] == nil {
		t.Fatalf("GET after rotation: %v", w)
	}
	id = send()
	check("during, receiver on the old secret", rcv.entryFor(t, id, first), true, 2, second)
	rcv.useSecret(t, second)
	id = send()
	check("during, receiver on the new secret", rcv.entryFor(t, id, second), true, 2, second)

	// After the grace period only the new secret signs. Rotating again with
	// gracePeriod 0 ends the second secret's life at once, without waiting.
	rot = e.call(http.StatusOK, "POST", fmt.Sprintf("/v1/webhooks/%d/rotate-secret", hook), e.Admin, map[string]any{"gracePeriod": 0})
	third, _ := rot["secret"].(string)
	id = send()
	refused := rcv.entryFor(t, id, second)
	check("after, receiver on the retired secret", refused, false, 1, third)
	if !strings.Contains(refused.Error, "No matching signature") {
		t.Fatalf("refused for %q, want no matching signature", refused.Error)
	}
	e2eEventually(t, 10*time.Second, "the refused delivery recorded as failed", func() bool {
		for _, d := range e.deliveries(hook) {
			if fmt.Sprint(e2eNum(d, "id")) == id {
				return d["status"] == "failed"
			}
		}
		return false
	})
	// Redelivered, it keeps its webhook-id and now verifies.
	rcv.useSecret(t, third)
	e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/deliveries/%s/redeliver", hook, id), e.Admin, nil)
	again := rcv.entryFor(t, id, third)
	check("after, redelivered to the new secret", again, true, 1, third)
	if again.WebhookTimestamp < refused.WebhookTimestamp {
		t.Fatalf("redelivery timestamp %s before the first attempt's %s", again.WebhookTimestamp, refused.WebhookTimestamp)
	}
}

// TestE2EStandardHeadersAcrossRetries: webhook-id is the delivery id on
// every attempt of a delivery, the timestamp is each attempt's own, and a
// webhook without a secret gets the id and timestamp but no signature.
func TestE2EStandardHeadersAcrossRetries(t *testing.T) {
	e := e2eNew(t)
	// The first two attempts fail, the third succeeds.
	rcv := e2eListen(t, func(n int) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	e.start(20*time.Millisecond, nil)
	const secret = "retry-secret-ünï"
	hook := e.hook(map[string]any{"url": rcv.URL, "secret": secret, "maxRetries": 3})
	d := e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", hook), e.Admin, nil)
	id := fmt.Sprint(e2eNum(d, "id"))
	hits := rcv.wait(t, 3, 10*time.Second)
	for i, h := range hits {
		if got := h.Header.Get("webhook-id"); got != id || h.Header.Get("X-Service-Delivery-ID") != id {
			t.Fatalf("attempt %d: webhook-id %q, want %s", i+1, got, id)
		}
		// The receiver checks the timestamp against its own clock.
		if !webhooks.VerifyStandard(secret, id, h.Header.Get("webhook-timestamp"), h.Body, h.Header.Get("webhook-signature"), h.At, 5*time.Minute) {
			t.Fatalf("attempt %d: webhook-signature %q does not verify", i+1, h.Header.Get("webhook-signature"))
		}
	}

	plain := e2eListen(t, nil)
	bare := e.hook(map[string]any{"url": plain.URL})
	d = e.call(http.StatusAccepted, "POST", fmt.Sprintf("/v1/webhooks/%d/test", bare), e.Admin, nil)
	h := plain.wait(t, 1, 10*time.Second)[0]
	if h.Header.Get("webhook-id") != fmt.Sprint(e2eNum(d, "id")) || h.Header.Get("webhook-timestamp") == "" {
		t.Fatalf("without a secret: %v", h.Header)
	}
	if _, ok := h.Header["Webhook-Signature"]; ok {
		t.Fatalf("webhook-signature sent without a secret: %v", h.Header)
	}
}
