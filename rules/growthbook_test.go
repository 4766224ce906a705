package rules

import (
	"encoding/json"
	"testing"
)

// TestGrowthBookCondition pins the condition written for each operator,
// with the guards that keep GrowthBook's loose comparisons to this
// package's typed ones, and the definitions it refuses. Whether GrowthBook
// then matches what Match matches is checked against GrowthBook's own SDK
// (sdk/js/test/growthbook.test.js).
func TestGrowthBookCondition(t *testing.T) {
	for _, tc := range []struct {
		def  string
		want string // "" when refused
	}{
		{one(attr("equals", `"DE"`)), `{"$and":[{"a":{"$eq":"DE"}}]}`},
		{one(attr("equals", `5`)), `{"$and":[{"a":{"$eq":5}}]}`},
		{one(attr("equals", `true`)), `{"$and":[{"a":{"$eq":true}}]}`},
		{one(attr("not_equals", `"DE"`)), `{"$and":[{"a":{"$ne":"DE"}}]}`},
		{one(attr("contains", `"a.b*"`)), `{"$and":[{"a":{"$regex":"a\\.b\\*","$type":"string"}}]}`},
		{one(attr("not_contains", `"x"`)), `{"$and":[{"a":{"$not":{"$regex":"x","$type":"string"}}}]}`},
		{one(attr("starts_with", `"(x"`)), `{"$and":[{"a":{"$regex":"^\\(x","$type":"string"}}]}`},
		{one(attr("ends_with", `"$"`)), `{"$and":[{"a":{"$regex":"\\$$","$type":"string"}}]}`},
		{one(attr("greater_than", `17`)), `{"$and":[{"a":{"$gt":17,"$type":"number"}}]}`},
		{one(attr("greater_than_or_equal", `"2024-01-01"`)), `{"$and":[{"a":{"$gte":"2024-01-01","$type":"string"}}]}`},
		{one(attr("less_than", `1.5`)), `{"$and":[{"a":{"$lt":1.5,"$type":"number"}}]}`},
		{one(attr("less_than_or_equal", `"é"`)), `{"$and":[{"a":{"$lte":"é","$type":"string"}}]}`},
		{one(attr("in", `["DE",1,true]`)), `{"$and":[{"a":{"$in":["DE",1,true],"$not":{"$type":"array"}}}]}`},
		{one(attr("not_in", `[false]`)), `{"$and":[{"a":{"$not":{"$in":[false],"$not":{"$type":"array"}}}}]}`},
		{one(attr("exists", ``)), `{"$and":[{"a":{"$exists":true}}]}`},
		{one(attr("not_exists", ``)), `{"$and":[{"a":{"$exists":false}}]}`},
		{`{"logic":"OR","rules":[` + attr("equals", `1`) + `,{"field":"b","operator":"exists"}]}`, `{"$or":[{"a":{"$eq":1}},{"b":{"$exists":true}}]}`},
		// Refused: events, characters JS orders otherwise, fields GrowthBook
		// reads otherwise.
		{one(`{"ruleType":"event","eventId":"buy","operator":"has_performed"}`), ""},
		{one(attr("less_than", `"\uE000"`)), ""},
		{one(attr("greater_than", `"😀"`)), ""},
		{one(`{"field":"a.b","operator":"exists"}`), ""},
		{one(`{"field":"$or","operator":"exists"}`), ""},
		{one(`{"field":"constructor","operator":"exists"}`), ""},
		{one(`{"field":"id","operator":"exists"}`), ""},
		{one(`{"field":"userId","operator":"exists"}`), ""},
	} {
		got, ok := compile(t, tc.def).GrowthBookCondition()
		if tc.want == "" {
			if ok {
				t.Errorf("%s: %v, want it refused", tc.def, got)
			}
			continue
		}
		b, _ := json.Marshal(got)
		if !ok || string(b) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.def, b, ok, tc.want)
		}
	}
}
