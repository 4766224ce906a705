// Package rules is the audience rule engine: it compiles a JSON audience
// definition once and then evaluates it against many users.
//
// A definition looks like
//
//	{"logic":"AND","rules":[
//	  {"field":"country","operator":"equals","value":"DE"},
//	  {"ruleType":"event","eventId":"login","operator":"performed_within",
//	   "timeWindow":{"value":7,"unit":"days"}}]}
//
// Compile does all parsing and validation up front so that Match, which runs
// once per user in bulk counting and assignment, only walks precomputed rules
// and does not allocate.
//
// Semantics worth knowing (decisions, not accidents):
//
//   - Missing "logic" means AND.
//   - Attribute lookups use the field name as an exact key of the attribute
//     map; dotted paths are not interpreted.
//   - Comparison is typed. Numbers compare as numbers (5 equals 5.0; ints,
//     float32 and json.Number attributes count as numbers), strings compare
//     byte-wise and case-sensitively, booleans only support
//     equals/not_equals/in/not_in. "5" is never coerced to 5. An attribute
//     whose type does not fit the rule simply makes the positive operator
//     false; it is never an evaluation error.
//   - Ordering operators (greater_than, ...) accept a number or a string
//     value. A string value compares lexicographically, which suits ISO-8601
//     dates but not numbers written as strings ("10" < "9").
//   - contains, not_contains, starts_with and ends_with work on string
//     attributes only (substring tests, not list membership).
//   - not_equals, not_contains, not_in and not_exists are the exact
//     complements of equals, contains, in and exists. Consequently a missing
//     or null attribute, or one of another type, matches every negative
//     operator and fails every positive one. This keeps the invariant that
//     exactly one of a pair matches any user, so an audience and its negation
//     partition the population.
//   - exists means present and not null.
//   - Time windows are fixed durations (a day is 24h, a week 168h; no
//     calendar or DST arithmetic). An event is inside a window when its
//     timestamp is >= now-window: the boundary instant counts. There is no
//     upper bound at now, so events stamped slightly in the future (producer
//     clock skew) still count, which also keeps has_performed consistent with
//     performed_within.
package rules

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Limits enforced by Compile. They exist to keep evaluation cost per user
// bounded and predictable, since Match runs for every user in a batch.
const (
	// MaxRules is the most rules one definition may hold.
	MaxRules = 50
	// MaxListValues is the most values an in/not_in list may hold.
	MaxListValues = 1000
	// MaxDefinitionBytes is the largest raw definition Compile accepts.
	MaxDefinitionBytes = 1 << 20
	// MaxWindow is the widest time window a rule may use.
	MaxWindow = 36500 * 24 * time.Hour
	// MaxCount is the largest count a performed_count rule may use.
	MaxCount = 1<<31 - 1
)

// Facts carries the behavioural data Match needs for one user.
//
// Events maps an event id to that user's event timestamps, sorted ascending.
// The ordering is a precondition, not checked: it lets Match answer window
// questions with one comparison or a binary search instead of a scan. Only
// the ids returned by Definition.EventIDs are consulted, and only events at
// or after now-MaxWindow() matter when MaxWindow reports true, so callers can
// fetch exactly that with one indexed query. Events must be complete in that
// range: performed_count with at_most/exactly and the negative operators
// would give wrong answers on truncated data. A nil map means "no events".
//
// Facts is a plain struct rather than an interface so Match pays no dynamic
// dispatch, and callers streaming users can reuse one map (clear it between
// users) to avoid per-user allocation.
type Facts struct {
	Events map[string][]time.Time
}

// Definition is a compiled, immutable audience definition. It is safe for
// concurrent use by multiple goroutines.
type Definition struct {
	n         int // rules in the definition
	or        bool
	attrs     []attrRule
	events    []eventRule
	eventIDs  []string
	maxWindow time.Duration
	bounded   bool
}

// EventIDs returns the distinct event ids the definition references, in order
// of first appearance, so the caller can fetch only those events. The slice
// is a copy and may be modified.
func (d *Definition) EventIDs() []string { return slices.Clone(d.eventIDs) }

// NeedsEvents reports whether any rule is an event rule. When false, Match
// ignores Facts entirely and callers can skip fetching events. Note that
// negative event rules (has_not_performed) still need Facts: an empty list is
// an answer, not an absence of data.
func (d *Definition) NeedsEvents() bool { return len(d.events) > 0 }

// MaxWindow returns the widest time window used by any event rule, so callers
// can restrict their event query to timestamps >= now-window (inclusive, with
// the same now later passed to Match). The boolean is false when some event
// rule needs the whole history (has_performed, has_not_performed, or
// performed_count without a window); then the query must not be bounded.
// With no event rules it returns (0, true).
func (d *Definition) MaxWindow() (time.Duration, bool) {
	if !d.bounded {
		return 0, false
	}
	return d.maxWindow, true
}

// Match reports whether a user with the given attributes and events belongs
// to the audience at time now. attrs holds values as produced by
// encoding/json (float64, string, bool, nil, []any, map[string]any), plus
// json.Number and Go integer/float types. Match does not allocate.
func (d *Definition) Match(attrs map[string]any, facts Facts, now time.Time) bool {
	// Attribute rules are cheaper than event rules (no time arithmetic or
	// binary search), so they run first to short-circuit sooner; rules have no
	// side effects, so the order does not change the result.
	if d.or {
		for i := range d.attrs {
			if d.attrs[i].match(attrs) {
				return true
			}
		}
		for i := range d.events {
			if d.events[i].match(facts.Events, now) {
				return true
			}
		}
		return false
	}
	for i := range d.attrs {
		if !d.attrs[i].match(attrs) {
			return false
		}
	}
	for i := range d.events {
		if !d.events[i].match(facts.Events, now) {
			return false
		}
	}
	return true
}

// Explain evaluates every rule for one user, unlike Match, which stops at
// the first rule that decides. results[i] is whether rule i of the
// definition (in its written order) holds; match is what Match answers.
// It is for people asking why a user is in or out, not for bulk use: it
// allocates the result slice.
func (d *Definition) Explain(attrs map[string]any, facts Facts, now time.Time) (match bool, results []bool) {
	results = make([]bool, d.n)
	for i := range d.attrs {
		results[d.attrs[i].pos] = d.attrs[i].match(attrs)
	}
	for i := range d.events {
		results[d.events[i].pos] = d.events[i].match(facts.Events, now)
	}
	return d.Match(attrs, facts, now), results
}

// Rules returns the number of rules in the definition.
func (d *Definition) Rules() int { return d.n }

// kind classifies both rule values and attribute values, so typed comparison
// is a kind check followed by one field comparison.
type kind uint8

const (
	kindMissing kind = iota // attribute absent from the map
	kindNull                // present but null
	kindString
	kindNumber
	kindBool
	kindOther // arrays, objects, unknown Go types: never comparable
)

// scalar is a typed value without interface boxing, so classifying an
// attribute does not allocate.
type scalar struct {
	kind kind
	s    string
	n    float64
	b    bool
}

func classify(v any) scalar {
	switch x := v.(type) {
	case string:
		return scalar{kind: kindString, s: x}
	case float64:
		return scalar{kind: kindNumber, n: x}
	case bool:
		return scalar{kind: kindBool, b: x}
	case nil:
		return scalar{kind: kindNull}
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return scalar{kind: kindOther}
		}
		return scalar{kind: kindNumber, n: f}
	case int:
		return scalar{kind: kindNumber, n: float64(x)}
	case int64:
		return scalar{kind: kindNumber, n: float64(x)}
	case int32:
		return scalar{kind: kindNumber, n: float64(x)}
	case int16:
		return scalar{kind: kindNumber, n: float64(x)}
	case int8:
		return scalar{kind: kindNumber, n: float64(x)}
	case uint:
		return scalar{kind: kindNumber, n: float64(x)}
	case uint64:
		return scalar{kind: kindNumber, n: float64(x)}
	case uint32:
		return scalar{kind: kindNumber, n: float64(x)}
	case uint16:
		return scalar{kind: kindNumber, n: float64(x)}
	case uint8:
		return scalar{kind: kindNumber, n: float64(x)}
	case float32:
		return scalar{kind: kindNumber, n: float64(x)}
	default:
		return scalar{kind: kindOther}
	}
}

// equal is typed equality: different kinds are never equal.
func (a scalar) equal(b scalar) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindString:
		return a.s == b.s
	case kindNumber:
		return a.n == b.n
	case kindBool:
		return a.b == b.b
	}
	return false
}

// attrOp is the positive base operator; negative operators are stored as the
// base plus attrRule.negate, which guarantees they are exact complements.
type attrOp uint8

const (
	opEquals attrOp = iota
	opContains
	opStartsWith
	opEndsWith
	opGreater
	opGreaterEq
	opLess
	opLessEq
	opIn
	opExists
)

type attrRule struct {
	pos    int // index in the definition's rules
	field  string
	op     attrOp
	negate bool
	val    scalar
	set    *valueSet // only for opIn
}

func (r *attrRule) match(attrs map[string]any) bool {
	v := scalar{kind: kindMissing}
	if raw, ok := attrs[r.field]; ok {
		v = classify(raw)
	}
	return r.eval(v) != r.negate
}

func (r *attrRule) eval(v scalar) bool {
	switch r.op {
	case opEquals:
		return r.val.equal(v)
	case opContains:
		return v.kind == kindString && strings.Contains(v.s, r.val.s)
	case opStartsWith:
		return v.kind == kindString && strings.HasPrefix(v.s, r.val.s)
	case opEndsWith:
		return v.kind == kindString && strings.HasSuffix(v.s, r.val.s)
	case opGreater:
		c, ok := order(v, r.val)
		return ok && c > 0
	case opGreaterEq:
		c, ok := order(v, r.val)
		return ok && c >= 0
	case opLess:
		c, ok := order(v, r.val)
		return ok && c < 0
	case opLessEq:
		c, ok := order(v, r.val)
		return ok && c <= 0
	case opIn:
		return r.set.has(v)
	case opExists:
		return v.kind != kindMissing && v.kind != kindNull
	}
	return false
}

// order compares attribute a with rule value b. ok is false when the kinds
// differ or a number is NaN, so every ordering operator fails in that case.
func order(a, b scalar) (c int, ok bool) {
	if a.kind != b.kind {
		return 0, false
	}
	switch a.kind {
	case kindNumber:
		switch {
		case a.n < b.n:
			return -1, true
		case a.n > b.n:
			return 1, true
		case a.n == b.n:
			return 0, true
		}
	case kindString:
		return strings.Compare(a.s, b.s), true
	}
	return 0, false
}

// setMapThreshold is the list size from which in/not_in use a hash set; below
// it a linear scan over a contiguous slice is faster than hashing.
const setMapThreshold = 16

// valueSet is an in/not_in list split by type so membership is a typed
// lookup without boxing.
type valueSet struct {
	strs     []string
	strSet   map[string]struct{}
	nums     []float64
	numSet   map[float64]struct{}
	hasTrue  bool
	hasFalse bool
}

func (s *valueSet) has(v scalar) bool {
	switch v.kind {
	case kindString:
		if s.strSet != nil {
			_, ok := s.strSet[v.s]
			return ok
		}
		for _, x := range s.strs {
			if x == v.s {
				return true
			}
		}
	case kindNumber:
		if s.numSet != nil {
			_, ok := s.numSet[v.n]
			return ok
		}
		for _, x := range s.nums {
			if x == v.n {
				return true
			}
		}
	case kindBool:
		if v.b {
			return s.hasTrue
		}
		return s.hasFalse
	}
	return false
}

type eventOp uint8

const (
	opHasPerformed eventOp = iota
	opHasNotPerformed
	opPerformedWithin
	opNotPerformedWithin
	opPerformedCount
)

type comparison uint8

const (
	cmpAtLeast comparison = iota
	cmpAtMost
	cmpExactly
)

type eventRule struct {
	pos      int // index in the definition's rules
	id       string
	op       eventOp
	window   time.Duration
	windowed bool
	count    int
	cmp      comparison
}

func (r *eventRule) match(events map[string][]time.Time, now time.Time) bool {
	ts := events[r.id]
	switch r.op {
	case opHasPerformed:
		return len(ts) > 0
	case opHasNotPerformed:
		return len(ts) == 0
	case opPerformedWithin:
		// Sorted ascending, so the newest event alone decides.
		return len(ts) > 0 && !ts[len(ts)-1].Before(now.Add(-r.window))
	case opNotPerformedWithin:
		return len(ts) == 0 || ts[len(ts)-1].Before(now.Add(-r.window))
	case opPerformedCount:
		n := len(ts)
		if r.windowed {
			n -= firstAtOrAfter(ts, now.Add(-r.window))
		}
		switch r.cmp {
		case cmpAtLeast:
			return n >= r.count
		case cmpAtMost:
			return n <= r.count
		case cmpExactly:
			return n == r.count
		}
	}
	return false
}

// firstAtOrAfter returns the index of the first timestamp >= cutoff in the
// ascending slice ts (len(ts) if none). Hand-written rather than sort.Search
// to keep the hot path free of closures.
func firstAtOrAfter(ts []time.Time, cutoff time.Time) int {
	lo, hi := 0, len(ts)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ts[mid].Before(cutoff) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
