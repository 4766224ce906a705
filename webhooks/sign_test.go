package webhooks

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"service/internal/fixture"
	"service/jsonjs"
)

type formFields struct {
	FormID string            `json:"form_id"`
	Fields map[string]string `json:"fields"`
}

// signVector is one signature computed by node, from the shared
// testdata/webhook_signatures.json.
type signVector struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
	Data   string `json:"data"`
	Header string `json:"header"`
}

func loadSignVectors(t *testing.T) []signVector {
	var doc struct {
		About   string       `json:"about"`
		Vectors []signVector `json:"vectors"`
	}
	fixture.JSON(t, "webhook_signatures.json", &doc)
	if len(doc.Vectors) == 0 {
		t.Fatal("webhook_signatures.json has no vectors")
	}
	return doc.Vectors
}

func TestSignVectors(t *testing.T) {
	for _, tc := range loadSignVectors(t) {
		t.Run(tc.Name, func(t *testing.T) {
			if got := Sign(tc.Secret, []byte(tc.Data)); got != tc.Header {
				t.Errorf("Sign = %s, want %s", got, tc.Header)
			}
			if !Verify(tc.Secret, []byte(tc.Data), tc.Header) {
				t.Error("Verify rejected the node-computed signature")
			}
		})
	}
}

// The first vector's data is what jsonjs produces for the Go value, so the
// node-computed signature applies to data we actually send.
func TestSignVectorDataIsStringifyOutput(t *testing.T) {
	first := loadSignVectors(t)[0]
	data, err := jsonjs.Stringify(formFields{
		FormID: "contact",
		Fields: map[string]string{
			"name":    "Zoë Müller",
			"message": `<b>Hello</b> & "welcome" — it's Zoë from 中文 😀`,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != first.Data {
		t.Fatalf("Stringify =\n%s\nwant\n%s", data, first.Data)
	}
	if got := Sign(first.Secret, data); got != first.Header {
		t.Errorf("Sign = %s, want %s", got, first.Header)
	}
}

func TestVerifyRejects(t *testing.T) {
	first := loadSignVectors(t)[0]
	const secret = "whsec_test_123"
	data := []byte(first.Data)
	good := first.Header
	tests := map[string]struct {
		secret, header string
		data           []byte
	}{
		"wrong secret":     {"whsec_test_124", good, data},
		"tampered data":    {secret, good, append(bytes.Clone(data[:len(data)-1]), ' ', '}')},
		"missing prefix":   {secret, strings.TrimPrefix(good, "sha256="), data},
		"other algorithm":  {secret, "sha1=" + strings.TrimPrefix(good, "sha256="), data},
		"truncated":        {secret, good[:len(good)-2], data},
		"extended":         {secret, good + "00", data},
		"not hex":          {secret, "sha256=" + strings.Repeat("zz", 32), data},
		"empty":            {secret, "", data},
		"prefix only":      {secret, "sha256=", data},
		"leading space":    {secret, " " + good, data},
		"trailing newline": {secret, good + "\n", data},
	}
	for name, tc := range tests {
		if Verify(tc.secret, tc.data, tc.header) {
			t.Errorf("%s: Verify accepted %q", name, tc.header)
		}
	}
}

func TestEnvelopeFormat(t *testing.T) {
	ts := time.Date(2024, 1, 2, 4, 4, 5, 6_789_000, time.FixedZone("CET", 3600))
	got := Envelope(`form.<submitted> "é"`, ts, []byte(`{"1":1,"a":"<&>"}`))
	want := `{"event":"form.<submitted> \"é\"","timestamp":"2024-01-02T03:04:05.006Z","data":{"1":1,"a":"<&>"}}`
	if string(got) != want {
		t.Errorf("Envelope =\n%s\nwant\n%s", got, want)
	}
}

// testPayloads returns webhook data as a sender would build it, including
// user-submitted form data whose keys JavaScript reorders.
func testPayloads(t *testing.T) [][]byte {
	t.Helper()
	// A form posted by a browser, in the browser's key order.
	submitted, err := jsonjs.Canonicalize([]byte(`{"name":"Zoë","2":"two","email":"a@b.c","10":"ten",` +
		`"0":"zero","01":"leading zero","-1":"negative","4294967295":"not an index","comment":"<script>&amp;</script>",` +
		`"nested":{"b":[1.0,2.50,1e21,-0],"a":"\u2028\u2029\u0000","9":null},"name":"Zoë (edited)"}`))
	if err != nil {
		t.Fatal(err)
	}
	type submission struct {
		FormID      string         `json:"form_id"`
		SubmittedAt time.Time      `json:"submitted_at"`
		Fields      map[string]any `json:"fields"`
		Score       float64        `json:"score"`
		Tags        []string       `json:"tags,omitempty"`
	}
	fromStruct, err := jsonjs.Stringify(submission{
		FormID:      "contact-us",
		SubmittedAt: time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.UTC),
		Fields: map[string]any{
			"message": `He said "hi" <b>& left</b> 😀`, "1": "first", "3": "third",
			"20": true, "name": "中文 名字", "amount": 1234.5, "quantity": int64(1 << 60),
		},
		Score: 1e-7,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := [][]byte{
		[]byte(loadSignVectors(t)[0].Data),
		submitted,
		fromStruct,
		[]byte(`{}`),
		[]byte(`[]`),
	}
	// Every canonical form node printed in jsonjs's vectors is data a
	// receiver must be able to verify.
	var canonical struct {
		About   string `json:"about"`
		Vectors []struct{ Name, In, Want string }
	}
	fixture.JSON(t, "jsonjs_canonical.json", &canonical)
	for _, v := range canonical.Vectors {
		out = append(out, []byte(v.Want))
	}
	return out
}

// The contract that receivers rely on, checked with Go tooling alone: the
// envelope is valid JSON, and re-serialising its data gives the signed bytes.
func TestEnvelopeDataRoundTrips(t *testing.T) {
	const secret = "whsec_round_trip"
	ts := time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.UTC)
	for _, data := range testPayloads(t) {
		header := Sign(secret, data)
		body := Envelope("form.submitted", ts, data)

		var env struct {
			Event     string          `json:"event"`
			Timestamp string          `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("envelope is not valid JSON: %v\n%s", err, body)
		}
		if env.Event != "form.submitted" || env.Timestamp != "2024-05-06T07:08:09.010Z" {
			t.Errorf("event/timestamp = %q/%q", env.Event, env.Timestamp)
		}
		again, err := jsonjs.Canonicalize(env.Data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Errorf("re-stringified data differs from signed bytes:\n got %s\nwant %s", again, data)
		}
		if !Verify(secret, again, header) {
			t.Errorf("Verify failed for re-stringified data %s", again)
		}
	}
}

// verifierJS is what a JavaScript receiver does: verify the signature over
// JSON.stringify(JSON.parse(body).data).
const verifierJS = `
const crypto = require('crypto');
const [secret, header] = process.argv.slice(2);
const body = require('fs').readFileSync(0, 'utf8');
const data = JSON.stringify(JSON.parse(body).data);
const expected = 'sha256=' + crypto.createHmac('sha256', secret).update(data).digest('hex');
const ok = expected.length === header.length &&
  crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(header));
console.log(ok ? 'ok' : 'mismatch');
`

func runNodeVerifier(t *testing.T, script, secret, header string, body []byte) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is required for this test (it is installed in dev and CI): %v", err)
	}
	cmd := exec.Command(node, script, secret, header)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verifier: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func TestNodeReceiverVerifies(t *testing.T) {
	script := filepath.Join(t.TempDir(), "verify.js")
	if err := os.WriteFile(script, []byte(verifierJS), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "whsec_node_ünïcode"
	ts := time.Date(2024, 5, 6, 7, 8, 9, 10_000_000, time.UTC)
	for i, data := range testPayloads(t) {
		body := Envelope("form.submitted", ts, data)
		if got := runNodeVerifier(t, script, secret, Sign(secret, data), body); got != "ok" {
			t.Errorf("payload %d: node verifier said %q for body %s", i, got, body)
		}
	}

	// Negative controls, so that "ok" above means something.
	data := testPayloads(t)[1]
	body := Envelope("form.submitted", ts, data)
	if got := runNodeVerifier(t, script, "other secret", Sign(secret, data), body); got != "mismatch" {
		t.Errorf("wrong secret: node verifier said %q", got)
	}
	// encoding/json's output for the same data is not JS-stable (HTML
	// escaping, key order), which is why jsonjs exists.
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	std, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := runNodeVerifier(t, script, secret, Sign(secret, std), Envelope("form.submitted", ts, std)); got != "mismatch" {
		t.Errorf("encoding/json data: node verifier said %q, want mismatch", got)
	}
}
