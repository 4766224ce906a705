package rules

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// Explain reports each rule in written order, whatever order Match runs
// them in (attribute rules first), and agrees with Match.
func TestExplain(t *testing.T) {
	def := `{"logic":"%s","rules":[
		{"ruleType":"event","eventId":"login","operator":"performed_within","timeWindow":{"value":7,"unit":"days"}},
		{"field":"country","operator":"equals","value":"DE"},
		{"field":"plan","operator":"in","value":["pro","team"]}]}`
	recent := Facts{Events: map[string][]time.Time{"login": {now.Add(-time.Hour)}}}
	tests := []struct {
		name  string
		logic string
		attrs map[string]any
		facts Facts
		want  []bool
		match bool
	}{
		{"all hold", "AND", map[string]any{"country": "DE", "plan": "pro"}, recent, []bool{true, true, true}, true},
		{"event fails", "AND", map[string]any{"country": "DE", "plan": "pro"}, Facts{}, []bool{false, true, true}, false},
		{"second fails", "AND", map[string]any{"country": "FR", "plan": "pro"}, recent, []bool{true, false, true}, false},
		{"or one holds", "OR", map[string]any{"plan": "team"}, Facts{}, []bool{false, false, true}, true},
		{"or none", "OR", nil, Facts{}, []bool{false, false, false}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := compile(t, fmt.Sprintf(def, tt.logic))
			if d.Rules() != 3 {
				t.Fatalf("Rules()=%d", d.Rules())
			}
			match, got := d.Explain(tt.attrs, tt.facts, now)
			if match != tt.match || !slices.Equal(got, tt.want) {
				t.Fatalf("Explain = %v %v, want %v %v", match, got, tt.match, tt.want)
			}
			if m := d.Match(tt.attrs, tt.facts, now); m != match {
				t.Fatalf("Match=%v, Explain=%v", m, match)
			}
		})
	}
}
