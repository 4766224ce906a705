package webhooks

import (
	"encoding/base64"
	"testing"
	"time"
)

// TestSignStandardVector reproduces the signature vector published with
// the Standard Webhooks specification (its libraries' shared test case).
// There the secret "whsec_…" is base64 of the key; our HMAC key is the
// secret string's bytes, so the decoded key is passed as a string.
func TestSignStandardVector(t *testing.T) {
	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	const (
		id   = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		ts   = 1614265330
		body = `{"test": 2432232314}`
		want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	if got := SignStandard(string(key), id, ts, []byte(body)); got != want {
		t.Fatalf("SignStandard = %s, want %s", got, want)
	}
	now := time.Unix(ts, 0)
	for _, tc := range []struct {
		name, secret, ts, header string
		now                      time.Time
		ok                       bool
	}{
		{"Valid", string(key), "1614265330", want, now, true},
		{"AmongOthers", string(key), "1614265330", "v1,bm9wZQ== " + want + " v2,zzz", now, true},
		{"WrongSecret", "other", "1614265330", want, now, false},
		{"Tampered", string(key), "1614265331", want, now, false},
		{"TooOld", string(key), "1614265330", want, now.Add(6 * time.Minute), false},
		{"TooNew", string(key), "1614265330", want, now.Add(-6 * time.Minute), false},
		{"NotANumber", string(key), "soon", want, now, false},
		{"Empty", string(key), "1614265330", "", now, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerifyStandard(tc.secret, id, tc.ts, []byte(body), tc.header, tc.now, 5*time.Minute); got != tc.ok {
				t.Fatalf("VerifyStandard = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestStandardSignatures(t *testing.T) {
	body := []byte(`{"event":"webhook.test"}`)
	if got := StandardSignatures("7", 100, body); got != "" {
		t.Fatalf("no secrets: %q", got)
	}
	if got, want := StandardSignatures("7", 100, body, "new", ""), SignStandard("new", "7", 100, body); got != want {
		t.Fatalf("one secret: %q, want %q", got, want)
	}
	got := StandardSignatures("7", 100, body, "new", "old")
	if want := SignStandard("new", "7", 100, body) + " " + SignStandard("old", "7", 100, body); got != want {
		t.Fatalf("two secrets: %q, want %q", got, want)
	}
	for _, s := range []string{"new", "old"} {
		if !VerifyStandard(s, "7", "100", body, got, time.Unix(100, 0), time.Minute) {
			t.Fatalf("%s does not verify against %q", s, got)
		}
	}
}
