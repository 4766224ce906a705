package dashboard

import (
	"fmt"
	"strconv"
	"strings"
)

// plural is a count followed by the words that agree with it: "1 failed
// attempt", "2 failed attempts", "1,000 impressions". one and many are
// whole phrases, so the noun may sit anywhere in them ("1 failure in a
// row"). n is any integer a page holds.
func plural(n any, one, many string) (string, error) {
	v, err := countOf(n)
	if err != nil {
		return "", err
	}
	return thousands(v) + " " + agree(v, one, many), nil
}

// pluralWord is only the words of plural, for a page that sets the number
// apart (in its own element) from what it counts.
func pluralWord(n any, one, many string) (string, error) {
	v, err := countOf(n)
	if err != nil {
		return "", err
	}
	return agree(v, one, many), nil
}

// agree picks the singular for exactly one and the plural for every other
// count, zero included ("0 failures in a row").
func agree(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// countOf reads the integer types pages hold counts in. Anything else is
// a mistake in a template, reported as an error so the page answers 500
// instead of printing a wrong phrase.
func countOf(n any) (int64, error) {
	switch v := n.(type) {
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case int64:
		return v, nil
	}
	return 0, fmt.Errorf("plural: a count must be an integer, not %T", n)
}

// typedOne reports whether a number a user typed as text ("1", "1.0")
// means exactly one, for phrases built from form values.
func typedOne(s string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil && f == 1
}
