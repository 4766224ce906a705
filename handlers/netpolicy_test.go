package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"service/netpolicy"
)

// TestWebhookURLNetworkPolicy: a webhook URL whose host is a literal IP in
// a refused range is a 400 naming url, on create and on update; loopback
// and private ranges only with BlockPrivate. Host names pass: they are
// judged when dialled.
func TestWebhookURLNetworkPolicy(t *testing.T) {
	// One database per policy, which every case shares: each case's
	// webhooks are its own, and a fresh database a case was most of the
	// test's time.
	envs := map[bool]*testEnv{false: newEnv(t), true: newEnv(t)}
	envs[true].DB.WebhookPolicy = netpolicy.Policy{BlockPrivate: true}
	for _, tc := range []struct {
		url           string
		always, block bool // refused by default; refused with BlockPrivate
	}{
		{"http://169.254.169.254/latest/meta-data", true, true},
		{"http://169.254.1.1:8080/", true, true},
		{"http://[fe80::1]/", true, true},
		{"http://[fe80::1%25eth0]:9000/", true, true},
		{"http://[::ffff:169.254.169.254]/", true, true},
		{"http://[fd00:ec2::254]/", true, true},
		{"http://100.100.100.200/", true, true},
		{"http://0.0.0.0:8080/", true, true},
		{"http://[::]:8080/", true, true},
		{"https://224.0.0.1/", true, true},
		{"http://[ff02::1]/", true, true},
		{"http://255.255.255.255/", true, true},
		{"http://127.0.0.1:9/hook", false, true},
		{"http://127.1.2.3/", false, true},
		{"http://[::1]:8080/", false, true},
		{"http://[::ffff:127.0.0.1]/", false, true},
		{"http://10.1.2.3/", false, true},
		{"http://172.16.0.1/", false, true},
		{"http://172.31.255.255/", false, true},
		{"http://192.168.0.10/", false, true},
		{"http://[fc00::1]/", false, true},
		{"http://[fd12:3456::1]/", false, true},
		{"http://100.64.0.1/", false, true},
		{"https://93.184.216.34/hook", false, false},
		{"https://hooks.example.com/in", false, false},
		{"http://localhost:8080/", false, false},
	} {
		for _, block := range []bool{false, true} {
			refused := tc.always || (block && tc.block)
			name := strings.NewReplacer("/", "_", "%", "_").Replace(tc.url)
			if block {
				name += "/BlockPrivate"
			}
			t.Run(name, func(t *testing.T) {
				e := *envs[block]
				e.t = t
				body := map[string]any{"url": tc.url, "events": []string{"*"}}
				create := e.do("POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Admin, body)
				ok := webhookCreate(&e, map[string]any{"url": "https://hooks.example.com/in"})
				update := e.do("PATCH", pathf("/v1/webhooks/%d", int64(ok["id"].(float64))), e.Admin, map[string]any{"url": tc.url})
				for what, rec := range map[string]*struct {
					code int
					body string
				}{"create": {create.Code, create.Body.String()}, "update": {update.Code, update.Body.String()}} {
					if !refused {
						if rec.code != http.StatusCreated && rec.code != http.StatusOK {
							t.Fatalf("%s: status=%d, want success: %s", what, rec.code, rec.body)
						}
						continue
					}
					var env struct {
						Error struct {
							Code    string
							Details struct{ Fields map[string]string }
						}
					}
					if err := json.Unmarshal([]byte(rec.body), &env); err != nil || rec.code != http.StatusBadRequest ||
						env.Error.Code != "INVALID_REQUEST" || !strings.HasPrefix(env.Error.Details.Fields["url"], "is refused by the network policy") {
						t.Fatalf("%s: status=%d body=%s, want 400 INVALID_REQUEST naming url", what, rec.code, rec.body)
					}
				}
				if refused {
					// The refused update changed nothing.
					got := e.must(http.StatusOK, "GET", pathf("/v1/webhooks/%d", int64(ok["id"].(float64))), e.Admin, nil)
					if got["url"] != "https://hooks.example.com/in" {
						t.Fatalf("url after a refused update=%v", got["url"])
					}
				}
			})
		}
	}
}

// TestWebhookURLNetworkPolicyWithOtherErrors: the refusal joins the other
// field errors of the request.
func TestWebhookURLNetworkPolicyWithOtherErrors(t *testing.T) {
	e := newEnv(t)
	rec := e.do("POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Admin, map[string]any{
		"url": "http://169.254.169.254/", "events": []string{"nope"}, "secret": "enc:v1:abc"})
	var env struct {
		Error struct {
			Details struct{ Fields map[string]string }
		}
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &env)
	f := env.Error.Details.Fields
	if rec.Code != http.StatusBadRequest || f["url"] == "" || f["events[0]"] == "" || f["secret"] != "must not begin with enc:v1:" {
		t.Fatalf("status=%d fields=%v", rec.Code, f)
	}
}
