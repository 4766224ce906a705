package rules

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

func compile(t testing.TB, def string) *Definition {
	t.Helper()
	d, errs := Compile([]byte(def), "definition")
	if errs != nil {
		t.Fatalf("Compile(%s) errors: %v", def, errs)
	}
	return d
}

// one wraps a single rule into a definition.
func one(rule string) string { return `{"rules":[` + rule + `]}` }

func attr(op string, value string) string {
	if value == "" {
		return fmt.Sprintf(`{"field":"a","operator":%q}`, op)
	}
	return fmt.Sprintf(`{"field":"a","operator":%q,"value":%s}`, op, value)
}

func TestAttributeOperators(t *testing.T) {
	type row struct {
		name  string
		rule  string
		attrs map[string]any
		want  bool
	}
	missing := map[string]any{}
	null := map[string]any{"a": nil}
	s := func(v any) map[string]any { return map[string]any{"a": v} }
	tests := []row{
		{"equals string", attr("equals", `"DE"`), s("DE"), true},
		{"equals string other", attr("equals", `"DE"`), s("FR"), false},
		{"equals is case-sensitive", attr("equals", `"DE"`), s("de"), false},
		{"equals number", attr("equals", `5`), s(5.0), true},
		{"equals 5 vs 5.0", attr("equals", `5.0`), s(float64(5)), true},
		{"equals int attribute", attr("equals", `5`), s(5), true},
		{"equals int64 attribute", attr("equals", `5`), s(int64(5)), true},
		{"equals json.Number attribute", attr("equals", `5`), s(json.Number("5.0")), true},
		{"equals number other", attr("equals", `5`), s(6.0), false},
		{"equals int32 attribute", attr("equals", `5`), s(int32(5)), true},
		{"equals uint64 attribute", attr("equals", `5`), s(uint64(5)), true},
		{"equals float32 attribute", attr("equals", `0.5`), s(float32(0.5)), true},
		{"equals invalid json.Number attribute", attr("equals", `5`), s(json.Number("5x")), false},
		{"not_equals invalid json.Number attribute", attr("not_equals", `5`), s(json.Number("5x")), true},
		{"equals bool", attr("equals", `true`), s(true), true},
		{"equals bool other", attr("equals", `true`), s(false), false},
		{"equals mismatch string vs number", attr("equals", `5`), s("5"), false},
		{"equals mismatch number vs string", attr("equals", `"5"`), s(5.0), false},
		{"equals mismatch bool vs string", attr("equals", `true`), s("true"), false},
		{"equals missing", attr("equals", `"DE"`), missing, false},
		{"equals null", attr("equals", `"DE"`), null, false},
		{"equals array attribute", attr("equals", `"DE"`), s([]any{"DE"}), false},

		{"not_equals different", attr("not_equals", `"DE"`), s("FR"), true},
		{"not_equals same", attr("not_equals", `"DE"`), s("DE"), false},
		{"not_equals number same", attr("not_equals", `5`), s(5.0), false},
		{"not_equals mismatch type", attr("not_equals", `5`), s("5"), true},
		{"not_equals missing", attr("not_equals", `"DE"`), missing, true},
		{"not_equals null", attr("not_equals", `"DE"`), null, true},

		{"contains", attr("contains", `"ell"`), s("hello"), true},
		{"contains no", attr("contains", `"xyz"`), s("hello"), false},
		{"contains number attribute", attr("contains", `"5"`), s(15.0), false},
		{"contains missing", attr("contains", `"x"`), missing, false},
		{"not_contains", attr("not_contains", `"xyz"`), s("hello"), true},
		{"not_contains no", attr("not_contains", `"ell"`), s("hello"), false},
		{"not_contains number attribute", attr("not_contains", `"5"`), s(15.0), true},
		{"not_contains missing", attr("not_contains", `"x"`), missing, true},

		{"starts_with", attr("starts_with", `"he"`), s("hello"), true},
		{"starts_with no", attr("starts_with", `"lo"`), s("hello"), false},
		{"starts_with number attribute", attr("starts_with", `"1"`), s(15.0), false},
		{"starts_with missing", attr("starts_with", `"he"`), missing, false},
		{"ends_with", attr("ends_with", `"lo"`), s("hello"), true},
		{"ends_with no", attr("ends_with", `"he"`), s("hello"), false},
		{"ends_with bool attribute", attr("ends_with", `"e"`), s(true), false},
		{"ends_with missing", attr("ends_with", `"lo"`), missing, false},

		{"greater_than", attr("greater_than", `18`), s(19.0), true},
		{"greater_than equal", attr("greater_than", `18`), s(18.0), false},
		{"greater_than less", attr("greater_than", `18`), s(17.5), false},
		{"greater_than string attribute", attr("greater_than", `18`), s("19"), false},
		{"greater_than string value lexicographic", attr("greater_than", `"2024-01-01"`), s("2024-06-01"), true},
		{"greater_than string value no", attr("greater_than", `"2024-01-01"`), s("2023-06-01"), false},
		{"greater_than string value number attribute", attr("greater_than", `"10"`), s(20.0), false},
		{"greater_than missing", attr("greater_than", `18`), missing, false},
		{"greater_than_or_equal equal", attr("greater_than_or_equal", `18`), s(18.0), true},
		{"greater_than_or_equal above", attr("greater_than_or_equal", `18`), s(30), true},
		{"greater_than_or_equal below", attr("greater_than_or_equal", `18`), s(17.0), false},
		{"greater_than_or_equal string attribute", attr("greater_than_or_equal", `18`), s("18"), false},
		{"less_than", attr("less_than", `18`), s(17.0), true},
		{"less_than equal", attr("less_than", `18`), s(18.0), false},
		{"less_than bool attribute", attr("less_than", `18`), s(false), false},
		{"less_than null", attr("less_than", `18`), null, false},
		{"less_than_or_equal equal", attr("less_than_or_equal", `18`), s(18.0), true},
		{"less_than_or_equal above", attr("less_than_or_equal", `18`), s(18.5), false},
		{"less_than_or_equal string attribute", attr("less_than_or_equal", `18`), s("1"), false},

		{"in string", attr("in", `["DE","FR"]`), s("FR"), true},
		{"in string no", attr("in", `["DE","FR"]`), s("IT"), false},
		{"in number", attr("in", `[1,2,3]`), s(2.0), true},
		{"in number as int", attr("in", `[1,2,3]`), s(uint8(3)), true},
		{"in number no", attr("in", `[1,2,3]`), s(4.0), false},
		{"in bool", attr("in", `[true]`), s(true), true},
		{"in bool no", attr("in", `[true]`), s(false), false},
		{"in mixed list", attr("in", `["1",2,false]`), s(false), true},
		{"in type mismatch", attr("in", `["1","2"]`), s(1.0), false},
		{"in missing", attr("in", `["DE"]`), missing, false},
		{"in large list uses set", attr("in", largeList(40)), s("v37"), true},
		{"in large list uses set no", attr("in", largeList(40)), s("v40"), false},
		{"in large number list", attr("in", largeNumList(40)), s(39.0), true},
		{"not_in", attr("not_in", `["DE","FR"]`), s("IT"), true},
		{"not_in no", attr("not_in", `["DE","FR"]`), s("DE"), false},
		{"not_in type mismatch", attr("not_in", `["1"]`), s(1.0), true},
		{"not_in missing", attr("not_in", `["DE"]`), missing, true},

		{"exists", attr("exists", ``), s("x"), true},
		{"exists false value", attr("exists", ``), s(false), true},
		{"exists missing", attr("exists", ``), missing, false},
		{"exists null", attr("exists", ``), null, false},
		{"not_exists missing", attr("not_exists", ``), missing, true},
		{"not_exists null", attr("not_exists", ``), null, true},
		{"not_exists present", attr("not_exists", ``), s(0.0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := compile(t, one(tt.rule))
			if got, want := d.Match(tt.attrs, Facts{}, now), tt.want; got != want {
				t.Errorf("Match(%v) with %s = %v, want %v", tt.attrs, tt.rule, got, want)
			}
		})
	}
}

func largeList(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf(`"v%d"`, i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func largeNumList(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprint(i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// ago builds an ascending timestamp list from offsets before now.
func ago(ds ...time.Duration) []time.Time {
	ts := make([]time.Time, 0, len(ds))
	for _, d := range ds {
		ts = append(ts, now.Add(-d))
	}
	slices.SortFunc(ts, time.Time.Compare)
	return ts
}

const day = 24 * time.Hour

func TestEventOperators(t *testing.T) {
	facts := Facts{Events: map[string][]time.Time{
		"purchase": ago(1*day, 3*day, 10*day, 40*day),
		"login":    ago(20 * day),
	}}
	tests := []struct {
		name string
		rule string
		want bool
	}{
		{"has_performed", `{"ruleType":"event","eventId":"purchase","operator":"has_performed"}`, true},
		{"has_performed never", `{"ruleType":"event","eventId":"signup","operator":"has_performed"}`, false},
		{"has_not_performed never", `{"ruleType":"event","eventId":"signup","operator":"has_not_performed"}`, true},
		{"has_not_performed did", `{"ruleType":"event","eventId":"purchase","operator":"has_not_performed"}`, false},
		{"performed_within", `{"ruleType":"event","eventId":"login","operator":"performed_within","timeWindow":{"value":30,"unit":"days"}}`, true},
		{"performed_within too old", `{"ruleType":"event","eventId":"login","operator":"performed_within","timeWindow":{"value":7,"unit":"days"}}`, false},
		{"performed_within never", `{"ruleType":"event","eventId":"signup","operator":"performed_within","timeWindow":{"value":7,"unit":"days"}}`, false},
		{"not_performed_within too old", `{"ruleType":"event","eventId":"login","operator":"not_performed_within","timeWindow":{"value":7,"unit":"days"}}`, true},
		{"not_performed_within never", `{"ruleType":"event","eventId":"signup","operator":"not_performed_within","timeWindow":{"value":7,"unit":"days"}}`, true},
		{"not_performed_within recent", `{"ruleType":"event","eventId":"login","operator":"not_performed_within","timeWindow":{"value":30,"unit":"days"}}`, false},
		{"fractional window", `{"ruleType":"event","eventId":"purchase","operator":"performed_within","timeWindow":{"value":1.5,"unit":"days"}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := compile(t, one(tt.rule))
			if got, want := d.Match(nil, facts, now), tt.want; got != want {
				t.Errorf("Match = %v, want %v", got, want)
			}
		})
	}
}

func TestWindowBoundaries(t *testing.T) {
	units := []struct {
		name string
		unit time.Duration
	}{
		{"minutes", time.Minute},
		{"hours", time.Hour},
		{"days", day},
		{"weeks", 7 * day},
	}
	positions := []struct {
		name   string
		offset time.Duration // added to now-window
		inside bool
	}{
		{"exactly at boundary", 0, true},
		{"one second inside", time.Second, true},
		{"one second outside", -time.Second, false},
	}
	ops := []struct {
		op     string
		extra  string
		inside bool // result when the event is inside the window
	}{
		{"performed_within", "", true},
		{"not_performed_within", "", false},
		{"performed_count", `,"count":1,"comparison":"at_least"`, true},
		{"performed_count", `,"count":0,"comparison":"exactly"`, false},
	}
	for _, u := range units {
		for _, p := range positions {
			for _, o := range ops {
				name := fmt.Sprintf("%s/%s/%s%s", u.name, p.name, o.op, o.extra)
				t.Run(name, func(t *testing.T) {
					rule := fmt.Sprintf(`{"ruleType":"event","eventId":"e","operator":%q,"timeWindow":{"value":3,"unit":%q}%s}`, o.op, u.name, o.extra)
					d := compile(t, one(rule))
					ts := now.Add(-3 * u.unit).Add(p.offset)
					facts := Facts{Events: map[string][]time.Time{"e": {ts}}}
					want := o.inside
					if !p.inside {
						want = !want
					}
					if got := d.Match(nil, facts, now); got != want {
						t.Errorf("event at %v, now %v: Match = %v, want %v", ts, now, got, want)
					}
				})
			}
		}
	}
}

func TestPerformedCount(t *testing.T) {
	// 4 events in all history, 2 of them within 7 days.
	facts := Facts{Events: map[string][]time.Time{"p": ago(1*day, 3*day, 10*day, 40*day)}}
	rule := func(count int, cmp string, window bool) string {
		w := ""
		if window {
			w = `,"timeWindow":{"value":7,"unit":"days"}`
		}
		return fmt.Sprintf(`{"ruleType":"event","eventId":"p","operator":"performed_count","count":%d,"comparison":%q%s}`, count, cmp, w)
	}
	tests := []struct {
		count  int
		cmp    string
		window bool
		facts  Facts
		want   bool
	}{
		{4, "at_least", false, facts, true},
		{5, "at_least", false, facts, false},
		{2, "at_least", true, facts, true},
		{3, "at_least", true, facts, false},
		{4, "at_most", false, facts, true},
		{3, "at_most", false, facts, false},
		{2, "at_most", true, facts, true},
		{1, "at_most", true, facts, false},
		{4, "exactly", false, facts, true},
		{3, "exactly", false, facts, false},
		{2, "exactly", true, facts, true},
		{4, "exactly", true, facts, false},
		// count 0
		{0, "at_least", false, Facts{}, true},
		{0, "at_least", true, facts, true},
		{0, "at_most", false, Facts{}, true},
		{0, "at_most", false, facts, false},
		{0, "at_most", true, Facts{Events: map[string][]time.Time{"p": ago(40 * day)}}, true},
		{0, "exactly", false, Facts{}, true},
		{0, "exactly", true, facts, false},
		{0, "exactly", true, Facts{Events: map[string][]time.Time{"p": ago(8 * day)}}, true},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s %d window=%v events=%d", tt.cmp, tt.count, tt.window, len(tt.facts.Events["p"]))
		t.Run(name, func(t *testing.T) {
			d := compile(t, one(rule(tt.count, tt.cmp, tt.window)))
			if got, want := d.Match(nil, tt.facts, now), tt.want; got != want {
				t.Errorf("Match = %v, want %v", got, want)
			}
		})
	}
}

func TestLogic(t *testing.T) {
	rules := `[{"field":"country","operator":"equals","value":"DE"},
		{"ruleType":"event","eventId":"purchase","operator":"has_performed"}]`
	buyer := Facts{Events: map[string][]time.Time{"purchase": ago(day)}}
	de := map[string]any{"country": "DE"}
	fr := map[string]any{"country": "FR"}
	tests := []struct {
		logic string
		attrs map[string]any
		facts Facts
		want  bool
	}{
		{`"AND"`, de, buyer, true},
		{`"AND"`, de, Facts{}, false},
		{`"AND"`, fr, buyer, false},
		{`"AND"`, fr, Facts{}, false},
		{`"OR"`, de, buyer, true},
		{`"OR"`, de, Facts{}, true},
		{`"OR"`, fr, buyer, true},
		{`"OR"`, fr, Facts{}, false},
		{``, de, Facts{}, false}, // missing logic means AND
		{`null`, de, Facts{}, false},
	}
	for _, tt := range tests {
		def := `{"rules":` + rules + `}`
		if tt.logic != "" {
			def = `{"logic":` + tt.logic + `,"rules":` + rules + `}`
		}
		t.Run(fmt.Sprintf("%s %v %d", tt.logic, tt.attrs["country"], len(tt.facts.Events)), func(t *testing.T) {
			d := compile(t, def)
			if got, want := d.Match(tt.attrs, tt.facts, now), tt.want; got != want {
				t.Errorf("Match = %v, want %v", got, want)
			}
		})
	}
}

func TestDefinitionMetadata(t *testing.T) {
	tests := []struct {
		name        string
		def         string
		ids         []string
		needsEvents bool
		window      time.Duration
		bounded     bool
	}{
		{"attributes only", one(attr("exists", "")), nil, false, 0, true},
		{"windowed only", `{"rules":[
			{"ruleType":"event","eventId":"b","operator":"performed_within","timeWindow":{"value":2,"unit":"hours"}},
			{"ruleType":"event","eventId":"a","operator":"performed_count","count":1,"comparison":"at_least","timeWindow":{"value":1,"unit":"weeks"}},
			{"ruleType":"event","eventId":"b","operator":"not_performed_within","timeWindow":{"value":3,"unit":"days"}}]}`,
			[]string{"b", "a"}, true, 7 * day, true},
		{"has_performed needs history", `{"rules":[
			{"ruleType":"event","eventId":"a","operator":"performed_within","timeWindow":{"value":2,"unit":"hours"}},
			{"ruleType":"event","eventId":"c","operator":"has_performed"}]}`,
			[]string{"a", "c"}, true, 0, false},
		{"unwindowed count needs history", one(`{"ruleType":"event","eventId":"x","operator":"performed_count","count":1,"comparison":"exactly"}`),
			[]string{"x"}, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := compile(t, tt.def)
			if got, want := d.EventIDs(), tt.ids; !slices.Equal(got, want) {
				t.Errorf("EventIDs = %v, want %v", got, want)
			}
			if got, want := d.NeedsEvents(), tt.needsEvents; got != want {
				t.Errorf("NeedsEvents = %v, want %v", got, want)
			}
			w, ok := d.MaxWindow()
			if got, want := ok, tt.bounded; got != want {
				t.Errorf("MaxWindow bounded = %v, want %v", got, want)
			}
			if got, want := w, tt.window; got != want {
				t.Errorf("MaxWindow = %v, want %v", got, want)
			}
		})
	}
}

func TestValidation(t *testing.T) {
	ev := func(fields string) string { return one(`{"ruleType":"event","eventId":"e",` + fields + `}`) }
	tests := []struct {
		name string
		def  string
		want map[string]string // path -> substring of the reason
	}{
		{"not JSON", `{`, map[string]string{"definition": "valid JSON"}},
		{"not an object", `[1]`, map[string]string{"definition": "must be an object"}},
		{"trailing data", `{"rules":[]} {}`, map[string]string{"definition": "single JSON object"}},
		{"unknown top-level field", `{"rules":[{"field":"a","operator":"exists"}],"x":1}`, map[string]string{"definition.x": "not a known field"}},
		{"bad logic", `{"logic":"XOR","rules":[{"field":"a","operator":"exists"}]}`, map[string]string{"definition.logic": "must be one of AND, OR"}},
		{"lowercase logic", `{"logic":"and","rules":[{"field":"a","operator":"exists"}]}`, map[string]string{"definition.logic": "must be one of AND, OR"}},
		{"rules missing", `{}`, map[string]string{"definition.rules": "is required"}},
		{"rules not array", `{"rules":{}}`, map[string]string{"definition.rules": "must be an array"}},
		{"rules empty", `{"rules":[]}`, map[string]string{"definition.rules": "must have at least one rule"}},
		{"too many rules", `{"rules":[` + strings.Repeat(`{"field":"a","operator":"exists"},`, 50) + `{"field":"a","operator":"exists"}]}`,
			map[string]string{"definition.rules": "at most 50"}},
		{"rule not object", one(`"x"`), map[string]string{"definition.rules[0]": "must be an object"}},
		{"bad ruleType", one(`{"ruleType":"segment","field":"a","operator":"exists"}`), map[string]string{"definition.rules[0].ruleType": "must be one of attribute, event"}},
		{"unknown attribute operator", one(attr("like", `"x"`)), map[string]string{"definition.rules[0].operator": "must be one of equals, not_equals"}},
		{"event operator on attribute rule", one(attr("has_performed", "")), map[string]string{"definition.rules[0].operator": "must be one of equals"}},
		{"non-string operator", one(`{"field":"a","operator":1,"value":1}`), map[string]string{"definition.rules[0].operator": "must be a string"}},
		{"definition too large", `{"rules":[` + strings.Repeat(" ", MaxDefinitionBytes) + `]}`, map[string]string{"definition": "at most"}},
		{"missing operator", one(`{"field":"a","value":1}`), map[string]string{"definition.rules[0].operator": "is required"}},
		{"missing field", one(`{"operator":"equals","value":1}`), map[string]string{"definition.rules[0].field": "is required"}},
		{"empty field", one(`{"field":" ","operator":"equals","value":1}`), map[string]string{"definition.rules[0].field": "non-empty string"}},
		{"non-string field", one(`{"field":3,"operator":"equals","value":1}`), map[string]string{"definition.rules[0].field": "non-empty string"}},
		{"missing value", one(attr("equals", "")), map[string]string{"definition.rules[0].value": "is required"}},
		{"null value", one(attr("equals", "null")), map[string]string{"definition.rules[0].value": "is required"}},
		{"object value", one(attr("equals", `{}`)), map[string]string{"definition.rules[0].value": "string, number or boolean"}},
		{"value with exists", one(attr("exists", `"x"`)), map[string]string{"definition.rules[0].value": "must be omitted"}},
		{"contains number value", one(attr("contains", `5`)), map[string]string{"definition.rules[0].value": "must be a string"}},
		{"greater_than bool value", one(attr("greater_than", `true`)), map[string]string{"definition.rules[0].value": "number or string"}},
		{"in non-array value", one(attr("in", `"DE"`)), map[string]string{"definition.rules[0].value": "non-empty array"}},
		{"not_in empty array", one(attr("not_in", `[]`)), map[string]string{"definition.rules[0].value": "non-empty array"}},
		{"in nested element", one(attr("in", `["a",[1],"b",{}]`)), map[string]string{
			"definition.rules[0].value[1]": "string, number or boolean",
			"definition.rules[0].value[3]": "string, number or boolean",
		}},
		{"in too many values", one(attr("in", largeNumList(MaxListValues+1))), map[string]string{"definition.rules[0].value": "at most 1000"}},
		{"unknown rule field", one(`{"field":"a","operator":"exists","fiel":"b"}`), map[string]string{"definition.rules[0].fiel": "not a known field"}},
		{"event field on attribute rule", one(`{"field":"a","operator":"exists","timeWindow":{"value":1,"unit":"days"}}`), map[string]string{"definition.rules[0].timeWindow": "not allowed in an attribute rule"}},
		{"attribute field on event rule", ev(`"operator":"has_performed","value":1`), map[string]string{"definition.rules[0].value": "not allowed in an event rule"}},
		{"missing eventId", one(`{"ruleType":"event","operator":"has_performed"}`), map[string]string{"definition.rules[0].eventId": "is required"}},
		{"empty eventId", one(`{"ruleType":"event","eventId":"","operator":"has_performed"}`), map[string]string{"definition.rules[0].eventId": "non-empty string"}},
		{"unknown event operator", ev(`"operator":"performed_twice"`), map[string]string{"definition.rules[0].operator": "must be one of has_performed"}},
		{"attribute operator on event rule", ev(`"operator":"equals"`), map[string]string{"definition.rules[0].operator": "must be one of has_performed"}},
		{"performed_within without window", ev(`"operator":"performed_within"`), map[string]string{"definition.rules[0].timeWindow": "is required"}},
		{"not_performed_within without window", ev(`"operator":"not_performed_within"`), map[string]string{"definition.rules[0].timeWindow": "is required"}},
		{"has_performed with window", ev(`"operator":"has_performed","timeWindow":{"value":1,"unit":"days"}`), map[string]string{"definition.rules[0].timeWindow": "not allowed"}},
		{"unknown unit", ev(`"operator":"performed_within","timeWindow":{"value":1,"unit":"months"}`), map[string]string{"definition.rules[0].timeWindow.unit": "must be one of minutes, hours, days, weeks"}},
		{"missing unit", ev(`"operator":"performed_within","timeWindow":{"value":1}`), map[string]string{"definition.rules[0].timeWindow.unit": "is required"}},
		{"zero window value", ev(`"operator":"performed_within","timeWindow":{"value":0,"unit":"days"}`), map[string]string{"definition.rules[0].timeWindow.value": "positive number"}},
		{"negative window value", ev(`"operator":"performed_within","timeWindow":{"value":-1,"unit":"days"}`), map[string]string{"definition.rules[0].timeWindow.value": "positive number"}},
		{"string window value", ev(`"operator":"performed_within","timeWindow":{"value":"7","unit":"days"}`), map[string]string{"definition.rules[0].timeWindow.value": "positive number"}},
		{"huge window value", ev(`"operator":"performed_within","timeWindow":{"value":1e300,"unit":"weeks"}`), map[string]string{"definition.rules[0].timeWindow.value": "36500 days"}},
		{"tiny window value", ev(`"operator":"performed_within","timeWindow":{"value":0.001,"unit":"minutes"}`), map[string]string{"definition.rules[0].timeWindow.value": "at least one second"}},
		{"window not object", ev(`"operator":"performed_within","timeWindow":7`), map[string]string{"definition.rules[0].timeWindow": "must be an object"}},
		{"unknown window field", ev(`"operator":"performed_within","timeWindow":{"value":1,"unit":"days","tz":"UTC"}`), map[string]string{"definition.rules[0].timeWindow.tz": "not a known field"}},
		{"count missing", ev(`"operator":"performed_count","comparison":"at_least"`), map[string]string{"definition.rules[0].count": "is required"}},
		{"count negative", ev(`"operator":"performed_count","count":-1,"comparison":"at_least"`), map[string]string{"definition.rules[0].count": "non-negative integer"}},
		{"count non-integer", ev(`"operator":"performed_count","count":2.5,"comparison":"at_least"`), map[string]string{"definition.rules[0].count": "non-negative integer"}},
		{"count string", ev(`"operator":"performed_count","count":"3","comparison":"at_least"`), map[string]string{"definition.rules[0].count": "non-negative integer"}},
		{"count too large", ev(`"operator":"performed_count","count":1e12,"comparison":"at_least"`), map[string]string{"definition.rules[0].count": "at most"}},
		{"comparison missing", ev(`"operator":"performed_count","count":3`), map[string]string{"definition.rules[0].comparison": "is required"}},
		{"comparison unknown", ev(`"operator":"performed_count","count":3,"comparison":"more_than"`), map[string]string{"definition.rules[0].comparison": "must be one of at_least, at_most, exactly"}},
		{"count on has_performed", ev(`"operator":"has_performed","count":3,"comparison":"at_least"`), map[string]string{
			"definition.rules[0].count":      "only allowed for operator performed_count",
			"definition.rules[0].comparison": "only allowed for operator performed_count",
		}},
		{"several bad rules at once", `{"logic":"NAND","rules":[
			{"field":"a","operator":"equals","value":"ok"},
			{"field":"a","operator":"bogus","value":1},
			{"operator":"in","value":"DE"},
			{"ruleType":"event","eventId":"e","operator":"performed_within","timeWindow":{"value":7,"unit":"fortnights"}},
			{"ruleType":"event","eventId":"e","operator":"performed_count","count":-2}]}`,
			map[string]string{
				"definition.logic":                    "must be one of AND, OR",
				"definition.rules[1].operator":        "must be one of",
				"definition.rules[2].field":           "is required",
				"definition.rules[2].value":           "non-empty array",
				"definition.rules[3].timeWindow.unit": "must be one of",
				"definition.rules[4].count":           "non-negative integer",
				"definition.rules[4].comparison":      "is required",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, errs := Compile([]byte(tt.def), "definition")
			if d != nil {
				t.Errorf("Compile returned a definition despite errors")
			}
			if got, want := sortedKeys(errs), sortedKeys(tt.want); !slices.Equal(got, want) {
				t.Fatalf("error paths = %v, want %v (errors: %v)", got, want, errs)
			}
			for path, sub := range tt.want {
				if got := errs[path]; !strings.Contains(got, sub) {
					t.Errorf("errs[%q] = %q, want it to contain %q", path, got, sub)
				}
			}
		})
	}
}

func sortedKeys(m map[string]string) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}

func TestCompileAcceptsValidForms(t *testing.T) {
	tests := []struct {
		name string
		def  string
	}{
		{"brief example", `{"logic":"AND","rules":[{"field":"country","operator":"equals","value":"DE"}, {"ruleType":"event","eventId":"purchase","operator":"has_performed"}, {"ruleType":"event","eventId":"login","operator":"performed_within","timeWindow":{"value":7,"unit":"days"}}, {"ruleType":"event","eventId":"purchase","operator":"performed_count","count":3,"comparison":"at_least","timeWindow":{"value":30,"unit":"days"}}]}`},
		{"explicit attribute ruleType", one(`{"ruleType":"attribute","field":"a","operator":"exists"}`)},
		{"null value with exists", one(attr("not_exists", "null"))},
		{"integral float count", one(`{"ruleType":"event","eventId":"e","operator":"performed_count","count":3.0,"comparison":"exactly"}`)},
		{"exactly 50 rules", `{"rules":[` + strings.Repeat(`{"field":"a","operator":"exists"},`, 49) + `{"field":"a","operator":"exists"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, errs := Compile([]byte(tt.def), "definition"); errs != nil {
				t.Errorf("Compile errors = %v, want none", errs)
			}
		})
	}
}

func TestEmptyPrefix(t *testing.T) {
	_, errs := Compile([]byte(one(attr("bogus", "1"))), "")
	if got, want := sortedKeys(errs), []string{"rules[0].operator"}; !slices.Equal(got, want) {
		t.Errorf("error paths = %v, want %v", got, want)
	}
}

// benchDef is a 5-rule mixed definition; with benchAttrs and benchFacts every
// rule matches, so AND evaluates all of them (the worst case).
const benchDef = `{"logic":"AND","rules":[
	{"field":"country","operator":"in","value":["DE","AT","CH","FR","IT"]},
	{"field":"age","operator":"greater_than_or_equal","value":18},
	{"field":"email","operator":"ends_with","value":"@example.com"},
	{"ruleType":"event","eventId":"login","operator":"performed_within","timeWindow":{"value":7,"unit":"days"}},
	{"ruleType":"event","eventId":"purchase","operator":"performed_count","count":3,"comparison":"at_least","timeWindow":{"value":30,"unit":"days"}}]}`

func benchInputs() (map[string]any, Facts) {
	attrs := map[string]any{"country": "CH", "age": 31.0, "email": "x@example.com", "plan": "pro"}
	var purchases []time.Duration
	for i := range 60 {
		purchases = append(purchases, time.Duration(i)*day)
	}
	facts := Facts{Events: map[string][]time.Time{
		"login":    ago(2*day, 9*day),
		"purchase": ago(purchases...),
	}}
	return attrs, facts
}

func TestMatchDoesNotAllocate(t *testing.T) {
	d := compile(t, benchDef)
	attrs, facts := benchInputs()
	if !d.Match(attrs, facts, now) {
		t.Fatal("benchmark inputs must match so every rule is evaluated")
	}
	if got, want := testing.AllocsPerRun(100, func() { d.Match(attrs, facts, now) }), 0.0; got != want {
		t.Errorf("allocs per Match = %v, want %v", got, want)
	}
}

func BenchmarkMatch5Rules(b *testing.B) {
	d := compile(b, benchDef)
	attrs, facts := benchInputs()
	b.ReportAllocs()
	for b.Loop() {
		if !d.Match(attrs, facts, now) {
			b.Fatal("no match")
		}
	}
}
