package store

import (
	"strings"
	"testing"
)

func TestNumbersInRange(t *testing.T) {
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{}`, true},
		{`{"a":1,"b":-2.5,"c":[0,1e308,-1.7976931348623157e308,5e-324]}`, true},
		{`{"v":1e999}`, false},
		{`{"v":-1e999}`, false},
		{`{"v":1E+400}`, false},
		{`{"v":1.8e308}`, false},
		{`[1,[2,[3,{"d":1e309}]]]`, false},
		{`{"v":1e-999}`, true}, // rounds to 0: a float64, if not the one sent
		{`{"v":"1e999"}`, true},
		{`{"1e999":true}`, true},
		{`{"v":"a\"1e999"}`, true},
		{`{"v":"a\\","w":1e999}`, false},
		{`{"v":1` + strings.Repeat("0", 308) + `}`, true},  // 1e308
		{`{"v":2` + strings.Repeat("0", 308) + `}`, false}, // 2e308
		{`{"v":0.` + strings.Repeat("0", 400) + `1}`, true},
		// Not JSON: left to the JSON checks.
		{`{"v":1e}`, true},
		{`{"v":--1e999`, true},
		{`{"v":"unterminated 1e999`, true},
	} {
		if got := numbersInRange([]byte(tc.doc)); got != tc.ok {
			t.Errorf("numbersInRange(%.60s) = %v, want %v", tc.doc, got, tc.ok)
		}
	}
}
