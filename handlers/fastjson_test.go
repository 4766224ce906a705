package handlers

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"service/store"
)

var fastSeeds = []string{
	`{"context":{"targetingKey":"u-1"}}`,
	`{"context":{"sessionId":"s-1","targetingKey":"u"}}`,
	`{"context":{"targetingKey":"u","plan":"pro"}}`,
	`{"context":{"targetingKey":"a"},"context":{"targetingKey":"b"}}`,
	`{"context":{},"x":{"targetingKey":"u"}}`,
	`{"userId":"u-1"}`,
	`{"sessionId":"s-1"}`,
	` { "userId" : "u-1" , "sessionId":"s" } `,
	`{"userId":"a","userId":"b"}`,
	`{"userId":"u","attributes":{"plan":"pro"}}`,
	`{"USERID":"u"}`,
	`{"userId":null}`,
	`{"userId":"\u00e9"}`,
	`{"userId":"caf` + "\xc3\xa9" + `"}`,
	`{"userId":"u"} x`,
	`{"userId":"u",}`,
	`{}`,
	`[]`,
	``,
	`{"eventId":"purchase","userId":"u-1","metadata":{"amount":5}}`,
	`{"eventId":"e","metadata":{"a":{"b":[1,"}",{"c":"\""}]}},"logId":"l-1"}`,
	`{"eventId":"e","metadata":{"a":1}}}`,
	`{"eventId":"e","metadata":{"a":}}`,
	`{"eventId":"e","metadata":{"s":"` + "\xff" + `"}}`,
	`{"eventId":"e","metadata":{"s":"\ud800"}}`,
	`{"eventId":"e","metadata":[1]}`,
	`{"eventId":"e","metadata":null}`,
	`{"eventId":"e","metadata":{ "x" : [ 1 , 2 ] }}`,
	`{"eventId":"e","sessionId":"s","extra":"x"}`,
	"{\"eventId\":\"e\"\n,\t\"userId\":\"u\"\r}",
}

// FuzzFastDecode: whatever the fast decoders accept decodes to exactly
// what encoding/json makes of it, and the full path would have accepted
// it; what they refuse leaves the destination untouched.
func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v store.VariantRequest
		if decodeVariantFast(body, &v) {
			var want store.VariantRequest
			if err := json.Unmarshal(body, &want); err != nil || !utf8.Valid(body) || !reflect.DeepEqual(v, want) {
				t.Fatalf("variant %q: fast %+v, encoding/json %+v (%v)", body, v, want, err)
			}
		} else if !reflect.DeepEqual(v, store.VariantRequest{}) {
			t.Fatalf("variant %q refused but decoded %+v", body, v)
		}
		var e store.EventInput
		if decodeEventFast(body, &e) {
			var want store.EventInput
			if err := json.Unmarshal(body, &want); err != nil || !utf8.Valid(body) || !reflect.DeepEqual(e, want) {
				t.Fatalf("event %q: fast %+v, encoding/json %+v (%v)", body, e, want, err)
			}
		} else if !reflect.DeepEqual(e, store.EventInput{}) {
			t.Fatalf("event %q refused but decoded %+v", body, e)
		}
		var o store.VariantRequest
		if raw, ok := decodeOFREPFast(body, &o); ok {
			var want struct {
				Context struct {
					TargetingKey string `json:"targetingKey"`
					SessionID    string `json:"sessionId"`
				} `json:"context"`
			}
			err := json.Unmarshal(body, &want)
			if err != nil || !utf8.Valid(body) || o.UserID != want.Context.TargetingKey || o.SessionID != want.Context.SessionID || o.Attributes != nil || !json.Valid(raw) {
				t.Fatalf("OpenFeature %q: fast %+v, encoding/json %+v (%v)", body, o, want, err)
			}
		} else if !reflect.DeepEqual(o, store.VariantRequest{}) {
			t.Fatalf("OpenFeature %q refused but decoded %+v", body, o)
		}
	})
}

// TestFastDecodeTakesTheSDKBodies: the bodies the SDK sends take the fast
// path (else it would silently stop paying for itself).
func TestFastDecodeTakesTheSDKBodies(t *testing.T) {
	for _, tc := range []struct {
		body  string
		event bool
		want  bool
	}{
		{`{"userId":"u-1"}`, false, true},
		{`{"userId":"u-1","sessionId":"s-1"}`, false, true},
		{`{"userId":"u","attributes":{"plan":"pro"}}`, false, false},
		{`{"eventId":"purchase","userId":"u-1","metadata":{"amount":5},"logId":"l-1"}`, true, true},
		{`{"eventId":"purchase","sessionId":"s-1"}`, true, true},
		{`{"eventId":"caf\u00e9","userId":"u"}`, true, false},
	} {
		var got bool
		if tc.event {
			got = decodeEventFast([]byte(tc.body), &store.EventInput{})
		} else {
			got = decodeVariantFast([]byte(tc.body), &store.VariantRequest{})
		}
		if got != tc.want {
			t.Errorf("%s: fast path %v, want %v", tc.body, got, tc.want)
		}
	}
}
