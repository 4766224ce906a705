package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMetadataNumber: the top-level scan answers what decoding the object
// answers, for every kind of value at the key and around it.
func TestMetadataNumber(t *testing.T) {
	cases := []struct {
		meta string
		want float64
	}{
		{`{"amount":12.5}`, 12.5},
		{`{"amount":-3}`, -3},
		{`{"amount":1e3}`, 1000},
		{`{"amount":2.5E-1}`, 0.25},
		{`{"amount":0}`, 0},
		{`{"amount":"12.5"}`, 0},
		{`{"amount":null}`, 0},
		{`{"amount":true}`, 0},
		{`{"amount":{"v":5}}`, 0},
		{`{"amount":[5]}`, 0},
		{`{"price":5}`, 0},
		{`{}`, 0},
		{``, 0},
		{`null`, 0},
		{`[{"amount":5}]`, 0},
		{`{"amount":1,"amount":7}`, 7},
		{`{"nested":{"amount":9},"amount":4}`, 4},
		{`{"nested":{"amount":9}}`, 0},
		{`{"s":"a \"amount\":9, }","amount":6}`, 6},
		{`{"list":[1,{"amount":2},"]}"],"amount":8}`, 8},
		{`{"am\u006funt":11}`, 11},
		{`{"amount\\":3}`, 0},
		{` { "amount" : 42 , "x" : [ ] } `, 42},
		{"{\n\t\"amount\":\r\n5\n}", 5},
		{`{"amount":1.7976931348623157e308}`, 1.7976931348623157e308},
		{`{"é":1,"amount":2}`, 2},
	}
	for _, tc := range cases {
		if got := metadataNumber(json.RawMessage(tc.meta), "amount"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.meta, got, tc.want)
		}
		if got, dec := metadataNumber(json.RawMessage(tc.meta), "amount"), metadataNumberDecoded(json.RawMessage(tc.meta), "amount"); got != dec {
			t.Errorf("%s: scan %v, decoder %v", tc.meta, got, dec)
		}
	}
	// Random objects of the shapes SDKs send, against the decoder.
	r := rand.New(rand.NewPCG(1, 2))
	values := []string{`1`, `-2.5`, `3e2`, `"x"`, `"amount"`, `"a\"b"`, `null`, `true`, `false`, `[]`, `[1,"]",{"amount":3}]`, `{}`, `{"amount":{"amount":1}}`}
	keys := []string{"amount", "amount2", "amoun", "x", `a\"mount`, "Amount"}
	for n := range 5000 {
		var b strings.Builder
		b.WriteString("{")
		for j := range r.IntN(5) {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%q:%s", keys[r.IntN(len(keys))], values[r.IntN(len(values))])
		}
		b.WriteString("}")
		meta := strings.ReplaceAll(b.String(), `\\`, `\`)
		if !json.Valid([]byte(meta)) {
			continue
		}
		if got, dec := metadataNumber(json.RawMessage(meta), "amount"), metadataNumberDecoded(json.RawMessage(meta), "amount"); got != dec {
			t.Fatalf("case %d %s: scan %v, decoder %v", n, meta, got, dec)
		}
	}
}
