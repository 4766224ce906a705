package dashboard

import (
	"strings"
	"testing"
)

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    any
		want string
	}{
		{0, "0 failures in a row"},
		{1, "1 failure in a row"},
		{2, "2 failures in a row"},
		{int64(1), "1 failure in a row"},
		{int64(-1), "-1 failures in a row"},
		{int32(1), "1 failure in a row"},
		{int64(1000), "1,000 failures in a row"},
		{int64(1001), "1,001 failures in a row"},
	} {
		got, err := plural(tc.n, "failure in a row", "failures in a row")
		if err != nil || got != tc.want {
			t.Errorf("plural(%T %v)=%q, %v; want %q", tc.n, tc.n, got, err, tc.want)
		}
	}
	for n, want := range map[int]string{0: "customers", 1: "customer", 2: "customers", 11: "customers"} {
		if got, err := pluralWord(n, "customer", "customers"); err != nil || got != want {
			t.Errorf("pluralWord(%d)=%q, %v; want %q", n, got, err, want)
		}
	}
	// A number that is no count is a mistake in the page, not a phrase.
	for _, n := range []any{1.0, "1", nil, uint(1)} {
		if got, err := plural(n, "time", "times"); err == nil || !strings.Contains(err.Error(), "integer") {
			t.Errorf("plural(%T %v)=%q, %v; want an error", n, n, got, err)
		}
		if _, err := pluralWord(n, "time", "times"); err == nil {
			t.Errorf("pluralWord(%T %v): no error", n, n)
		}
	}
}

func TestTypedOne(t *testing.T) {
	for s, want := range map[string]bool{"1": true, " 1 ": true, "1.0": true, "01": true,
		"0": false, "2": false, "1.5": false, "0.5": false, "": false, "one": false} {
		if got := typedOne(s); got != want {
			t.Errorf("typedOne(%q)=%v, want %v", s, got, want)
		}
	}
}

// A rule in words, as the check of a user names the rule that failed:
// the count and the time window agree with their numbers.
func TestRuleSummaryAgrees(t *testing.T) {
	for _, tc := range []struct {
		r    ruleRow
		want string
	}{
		{ruleRow{Type: "event", EventID: "login", Operator: "performed_count", Comparison: "at_least", Count: "1", WindowValue: "1", WindowUnit: "days"},
			"login performed count at least 1 time within the last 1 day"},
		{ruleRow{Type: "event", EventID: "login", Operator: "performed_count", Comparison: "exactly", Count: "3", WindowValue: "2", WindowUnit: "weeks"},
			"login performed count exactly 3 times within the last 2 weeks"},
		{ruleRow{Type: "event", EventID: "login", Operator: "performed_count", Comparison: "at_most", Count: "0"},
			"login performed count at most 0 times"},
		{ruleRow{Type: "event", EventID: "buy", Operator: "performed_within", WindowValue: "1", WindowUnit: "hours"},
			"buy performed within the last 1 hour"},
		{ruleRow{Type: "event", EventID: "buy", Operator: "not_performed_within", WindowValue: "1.5", WindowUnit: "minutes"},
			"buy not performed within the last 1.5 minutes"},
	} {
		if got := tc.r.Summary(); got != tc.want {
			t.Errorf("Summary()=%q, want %q", got, tc.want)
		}
	}
}
