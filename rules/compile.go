package rules

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Compile parses and validates a definition once, so that Match has nothing
// left to check. On success it returns the Definition and a nil map. On
// failure it returns nil and a map from JSON path to reason covering every bad
// field found, so a client can fix them all in one round trip. Paths are
// prefixed with prefix (e.g. "definition" gives "definition.rules[2].operator");
// errors about the whole document are reported under prefix itself.
//
// Validation is strict: unknown fields, and fields that mean nothing for the
// chosen operator (a timeWindow on has_performed, a value on exists), are
// rejected rather than ignored, because a silently ignored field is a rule
// that does something other than what its author believes.
func Compile(raw []byte, prefix string) (*Definition, map[string]string) {
	c := &compiler{errs: map[string]string{}}
	if len(raw) > MaxDefinitionBytes {
		c.errs[prefix] = "must be at most " + strconv.Itoa(MaxDefinitionBytes) + " bytes"
		return nil, c.errs
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	// UseNumber keeps number literals intact, so counts like 2.5 or huge
	// values are detected exactly instead of after float rounding.
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		c.errs[prefix] = "must be valid JSON: " + err.Error()
		return nil, c.errs
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		c.errs[prefix] = "must be a single JSON object"
		return nil, c.errs
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		c.errs[prefix] = "must be an object"
		return nil, c.errs
	}
	d := c.definition(obj, prefix)
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return d, nil
}

type compiler struct {
	errs map[string]string
}

func (c *compiler) fail(path, reason string) { c.errs[path] = reason }

// join appends a field name to a path; an empty prefix yields a bare name.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

var (
	topFields   = []string{"logic", "rules"}
	attrFields  = []string{"ruleType", "field", "operator", "value"}
	eventFields = []string{"ruleType", "eventId", "operator", "timeWindow", "count", "comparison"}
)

// checkFields rejects keys outside allowed. other names the fields of the
// other rule type so the message can say why a familiar field is refused.
func (c *compiler) checkFields(obj map[string]any, path string, allowed, other []string, ruleKind string) {
	for k := range obj {
		switch {
		case contains(allowed, k):
		case ruleKind != "" && contains(other, k):
			c.fail(join(path, k), "is not allowed in "+ruleKind+" rule")
		default:
			c.fail(join(path, k), "is not a known field")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *compiler) definition(obj map[string]any, path string) *Definition {
	c.checkFields(obj, path, topFields, nil, "")
	d := &Definition{bounded: true}

	switch v := obj["logic"]; v {
	case nil, "AND": // missing logic means AND
	case "OR":
		d.or = true
	default:
		c.fail(join(path, "logic"), "must be one of AND, OR")
	}

	rulesPath := join(path, "rules")
	rawRules, present := obj["rules"]
	list, isList := rawRules.([]any)
	switch {
	case !present || rawRules == nil:
		c.fail(rulesPath, "is required")
		return d
	case !isList:
		c.fail(rulesPath, "must be an array of rules")
		return d
	case len(list) == 0:
		c.fail(rulesPath, "must have at least one rule")
		return d
	case len(list) > MaxRules:
		// Validating each of an oversized list would only produce a flood of
		// errors for a definition that is rejected anyway.
		c.fail(rulesPath, "must have at most "+strconv.Itoa(MaxRules)+" rules")
		return d
	}

	d.n = len(list)
	for i, raw := range list {
		p := index(rulesPath, i)
		r, ok := raw.(map[string]any)
		if !ok {
			c.fail(p, "must be an object")
			continue
		}
		switch t := r["ruleType"]; t {
		case nil, "attribute":
			if ar, ok := c.attrRule(r, p); ok {
				ar.pos = i
				d.attrs = append(d.attrs, ar)
			}
		case "event":
			if er, ok := c.eventRule(r, p); ok {
				er.pos = i
				d.events = append(d.events, er)
				if !contains(d.eventIDs, er.id) {
					d.eventIDs = append(d.eventIDs, er.id)
				}
				if !er.windowed {
					d.bounded = false
				} else if er.window > d.maxWindow {
					d.maxWindow = er.window
				}
			}
		default:
			c.fail(join(p, "ruleType"), "must be one of attribute, event")
		}
	}
	return d
}

var attrOps = map[string]struct {
	op     attrOp
	negate bool
}{
	"equals":                {opEquals, false},
	"not_equals":            {opEquals, true},
	"contains":              {opContains, false},
	"not_contains":          {opContains, true},
	"starts_with":           {opStartsWith, false},
	"ends_with":             {opEndsWith, false},
	"greater_than":          {opGreater, false},
	"greater_than_or_equal": {opGreaterEq, false},
	"less_than":             {opLess, false},
	"less_than_or_equal":    {opLessEq, false},
	"in":                    {opIn, false},
	"not_in":                {opIn, true},
	"exists":                {opExists, false},
	"not_exists":            {opExists, true},
}

const attrOpList = "equals, not_equals, contains, not_contains, starts_with, ends_with, " +
	"greater_than, greater_than_or_equal, less_than, less_than_or_equal, in, not_in, exists, not_exists"

func (c *compiler) attrRule(obj map[string]any, path string) (attrRule, bool) {
	before := len(c.errs)
	c.checkFields(obj, path, attrFields, eventFields, "an attribute")
	var r attrRule

	r.field, _ = c.nonEmptyString(obj, path, "field")

	opPath := join(path, "operator")
	opName, ok := c.requiredString(obj, path, "operator")
	if !ok {
		return r, false
	}
	op, ok := attrOps[opName]
	if !ok {
		c.fail(opPath, "must be one of "+attrOpList)
		return r, false
	}
	r.op, r.negate = op.op, op.negate

	valPath := join(path, "value")
	raw, present := obj["value"]
	if r.op == opExists {
		// null is tolerated: it carries no meaning a reader could misread.
		if present && raw != nil {
			c.fail(valPath, "must be omitted for operator "+opName)
		}
		return r, len(c.errs) == before
	}
	if !present || raw == nil {
		c.fail(valPath, "is required for operator "+opName)
		return r, false
	}

	switch r.op {
	case opEquals:
		v, ok := scalarValue(raw)
		if !ok {
			c.fail(valPath, "must be a string, number or boolean")
		}
		r.val = v
	case opContains, opStartsWith, opEndsWith:
		s, ok := raw.(string)
		if !ok {
			c.fail(valPath, "must be a string for operator "+opName)
		}
		r.val = scalar{kind: kindString, s: s}
	case opGreater, opGreaterEq, opLess, opLessEq:
		v, ok := scalarValue(raw)
		if !ok || v.kind == kindBool {
			c.fail(valPath, "must be a number or string for operator "+opName)
		}
		r.val = v
	case opIn:
		r.set = c.valueSet(raw, valPath, opName)
	}
	return r, len(c.errs) == before
}

func (c *compiler) valueSet(raw any, path, opName string) *valueSet {
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		// An empty list is rejected because in [] can never match and
		// not_in [] always does; either is almost certainly a mistake.
		c.fail(path, "must be a non-empty array for operator "+opName)
		return nil
	}
	if len(list) > MaxListValues {
		c.fail(path, "must have at most "+strconv.Itoa(MaxListValues)+" values")
		return nil
	}
	s := &valueSet{}
	for i, e := range list {
		v, ok := scalarValue(e)
		if !ok {
			c.fail(index(path, i), "must be a string, number or boolean")
			continue
		}
		switch v.kind {
		case kindString:
			s.strs = append(s.strs, v.s)
		case kindNumber:
			s.nums = append(s.nums, v.n)
		case kindBool:
			if v.b {
				s.hasTrue = true
			} else {
				s.hasFalse = true
			}
		}
	}
	if len(s.strs) >= setMapThreshold {
		s.strSet = make(map[string]struct{}, len(s.strs))
		for _, x := range s.strs {
			s.strSet[x] = struct{}{}
		}
	}
	if len(s.nums) >= setMapThreshold {
		s.numSet = make(map[float64]struct{}, len(s.nums))
		for _, x := range s.nums {
			s.numSet[x] = struct{}{}
		}
	}
	return s
}

// scalarValue converts a decoded rule value (json.Number, string, bool) to a
// scalar; anything else, including numbers outside float64 range, fails.
func scalarValue(raw any) (scalar, bool) {
	switch x := raw.(type) {
	case string:
		return scalar{kind: kindString, s: x}, true
	case bool:
		return scalar{kind: kindBool, b: x}, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return scalar{}, false
		}
		return scalar{kind: kindNumber, n: f}, true
	}
	return scalar{}, false
}

var eventOps = map[string]eventOp{
	"has_performed":        opHasPerformed,
	"has_not_performed":    opHasNotPerformed,
	"performed_within":     opPerformedWithin,
	"not_performed_within": opNotPerformedWithin,
	"performed_count":      opPerformedCount,
}

const eventOpList = "has_performed, has_not_performed, performed_within, not_performed_within, performed_count"

var comparisons = map[string]comparison{
	"at_least": cmpAtLeast,
	"at_most":  cmpAtMost,
	"exactly":  cmpExactly,
}

var units = map[string]time.Duration{
	"minutes": time.Minute,
	"hours":   time.Hour,
	"days":    24 * time.Hour,
	"weeks":   7 * 24 * time.Hour,
}

func (c *compiler) eventRule(obj map[string]any, path string) (eventRule, bool) {
	before := len(c.errs)
	c.checkFields(obj, path, eventFields, attrFields, "an event")
	var r eventRule

	r.id, _ = c.nonEmptyString(obj, path, "eventId")

	opName, ok := c.requiredString(obj, path, "operator")
	if !ok {
		return r, false
	}
	op, ok := eventOps[opName]
	if !ok {
		c.fail(join(path, "operator"), "must be one of "+eventOpList)
		return r, false
	}
	r.op = op

	tw, hasWindow := obj["timeWindow"]
	hasWindow = hasWindow && tw != nil
	switch op {
	case opHasPerformed, opHasNotPerformed:
		if hasWindow {
			c.fail(join(path, "timeWindow"), "is not allowed for operator "+opName+"; use performed_within or not_performed_within")
		}
	case opPerformedWithin, opNotPerformedWithin:
		if !hasWindow {
			c.fail(join(path, "timeWindow"), "is required for operator "+opName)
		}
	}
	if hasWindow && op != opHasPerformed && op != opHasNotPerformed {
		r.window, r.windowed = c.timeWindow(tw, join(path, "timeWindow"))
	}

	if op == opPerformedCount {
		r.count = c.count(obj, join(path, "count"))
		cmpPath := join(path, "comparison")
		switch v, present := obj["comparison"]; {
		case !present || v == nil:
			c.fail(cmpPath, "is required for operator performed_count")
		default:
			s, _ := v.(string)
			cmp, ok := comparisons[s]
			if !ok {
				c.fail(cmpPath, "must be one of at_least, at_most, exactly")
			}
			r.cmp = cmp
		}
	} else {
		for _, k := range []string{"count", "comparison"} {
			if _, present := obj[k]; present {
				c.fail(join(path, k), "is only allowed for operator performed_count")
			}
		}
	}
	return r, len(c.errs) == before
}

func (c *compiler) count(obj map[string]any, path string) int {
	raw, present := obj["count"]
	if !present || raw == nil {
		c.fail(path, "is required for operator performed_count")
		return 0
	}
	num, ok := raw.(json.Number)
	if !ok {
		c.fail(path, "must be a non-negative integer")
		return 0
	}
	// Integral literals such as 3.0 or 1e2 are accepted: the value, not the
	// spelling, is what has to be an integer.
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || f < 0 {
		c.fail(path, "must be a non-negative integer")
		return 0
	}
	if f > MaxCount {
		c.fail(path, "must be at most "+strconv.Itoa(MaxCount))
		return 0
	}
	return int(f)
}

func (c *compiler) timeWindow(raw any, path string) (time.Duration, bool) {
	obj, ok := raw.(map[string]any)
	if !ok {
		c.fail(path, "must be an object with value and unit")
		return 0, false
	}
	before := len(c.errs)
	c.checkFields(obj, path, []string{"value", "unit"}, nil, "")

	valPath := join(path, "value")
	var value float64
	switch v := obj["value"].(type) {
	case nil:
		c.fail(valPath, "is required")
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || !(f > 0) {
			c.fail(valPath, "must be a positive number")
		}
		value = f
	default:
		c.fail(valPath, "must be a positive number")
	}

	unitPath := join(path, "unit")
	var unit time.Duration
	switch u := obj["unit"].(type) {
	case nil:
		c.fail(unitPath, "is required")
	case string:
		if unit, ok = units[u]; !ok {
			c.fail(unitPath, "must be one of minutes, hours, days, weeks")
		}
	default:
		c.fail(unitPath, "must be one of minutes, hours, days, weeks")
	}

	if len(c.errs) > before {
		return 0, false
	}
	// Checked in float before converting so an enormous value cannot
	// overflow time.Duration into a negative window.
	ns := math.Round(value * float64(unit))
	if ns > float64(MaxWindow) {
		c.fail(valPath, "must not make the window longer than 36500 days")
		return 0, false
	}
	if ns < float64(time.Second) {
		// Sub-second windows are below the precision events are recorded
		// at, so they are rejected as a likely unit mistake.
		c.fail(valPath, "must make the window at least one second long")
		return 0, false
	}
	return time.Duration(ns), true
}

// requiredString reads a mandatory string field, reporting absence or a wrong
// type at its path.
func (c *compiler) requiredString(obj map[string]any, path, name string) (string, bool) {
	raw, present := obj[name]
	if !present || raw == nil {
		c.fail(join(path, name), "is required")
		return "", false
	}
	s, ok := raw.(string)
	if !ok {
		c.fail(join(path, name), "must be a string")
		return "", false
	}
	return s, true
}

// nonEmptyString is requiredString that also rejects blank values, used for
// identifiers that could never match anything when blank.
func (c *compiler) nonEmptyString(obj map[string]any, path, name string) (string, bool) {
	raw, present := obj[name]
	if !present || raw == nil {
		c.fail(join(path, name), "is required")
		return "", false
	}
	s, ok := raw.(string)
	if !ok || strings.TrimSpace(s) == "" {
		c.fail(join(path, name), "must be a non-empty string")
		return "", false
	}
	return s, true
}
