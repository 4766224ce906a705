package rules

import (
	"regexp"
	"strings"
)

// GrowthBookCondition returns the definition in GrowthBook's condition
// language (its MongoDB-like targeting rules), such that GrowthBook's SDKs
// match exactly the attribute maps Match matches. ok is false when no
// such condition can be written: event rules, or a rule whose meaning
// GrowthBook's evaluation would change. The caller then leaves the
// campaign to the server.
//
// GrowthBook compares loosely where this package compares by type, so
// every operator is guarded:
//   - ordering operators and the string operators add {"$type": …}: JS
//     would compare "10" > 9 numerically, null as 0, and test a regular
//     expression against String(value), so that a missing attribute would
//     contain "ul" through "null";
//   - in adds {"$not": {"$type": "array"}}: GrowthBook's $in intersects
//     an array attribute with the list;
//   - the negative operators are {"$not": positive}, their exact
//     complement, as here;
//   - a string ordering whose value holds a character from U+E000 up is
//     refused: JS orders UTF-16 code units and this package UTF-8 bytes,
//     which disagree only there.
//
// Fields that GrowthBook reads otherwise than as one key of the attribute
// map are refused too: a dot is a path to GrowthBook, a leading $ an
// operator, and names inherited from Object.prototype are found on every
// object. "id" and "userId" are refused as well: the app gives GrowthBook
// the user key as "id" and its userId as "userId" (see the docs), so a
// rule on a profile attribute of either name would read those instead.
func (d *Definition) GrowthBookCondition() (map[string]any, bool) {
	if len(d.events) > 0 {
		return nil, false
	}
	conds := make([]any, 0, len(d.attrs))
	for i := range d.attrs {
		c, ok := d.attrs[i].growthBook()
		if !ok {
			return nil, false
		}
		conds = append(conds, map[string]any{d.attrs[i].field: c})
	}
	if d.or {
		return map[string]any{"$or": conds}, true
	}
	return map[string]any{"$and": conds}, true
}

// jsInherited are the names every JS object answers with `in`.
var jsInherited = map[string]bool{
	"__proto__": true, "constructor": true, "hasOwnProperty": true, "isPrototypeOf": true,
	"propertyIsEnumerable": true, "toLocaleString": true, "toString": true, "valueOf": true,
	"__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
}

func growthBookField(f string) bool {
	return f != "" && !strings.Contains(f, ".") && f[0] != '$' && !jsInherited[f] && f != "id" && f != "userId"
}

func (r *attrRule) growthBook() (any, bool) {
	if !growthBookField(r.field) {
		return nil, false
	}
	var pos map[string]any
	switch r.op {
	case opEquals:
		// Strict equality, as here: no guard needed.
		if r.negate {
			return map[string]any{"$ne": r.val.json()}, true
		}
		return map[string]any{"$eq": r.val.json()}, true
	case opContains:
		pos = map[string]any{"$type": "string", "$regex": regexp.QuoteMeta(r.val.s)}
	case opStartsWith:
		pos = map[string]any{"$type": "string", "$regex": "^" + regexp.QuoteMeta(r.val.s)}
	case opEndsWith:
		pos = map[string]any{"$type": "string", "$regex": regexp.QuoteMeta(r.val.s) + "$"}
	case opGreater, opGreaterEq, opLess, opLessEq:
		op := map[attrOp]string{opGreater: "$gt", opGreaterEq: "$gte", opLess: "$lt", opLessEq: "$lte"}[r.op]
		switch r.val.kind {
		case kindNumber:
			pos = map[string]any{"$type": "number", op: r.val.n}
		case kindString:
			for _, c := range r.val.s {
				if c >= 0xE000 {
					return nil, false
				}
			}
			pos = map[string]any{"$type": "string", op: r.val.s}
		default:
			return nil, false
		}
	case opIn:
		list := make([]any, 0, len(r.set.strs)+len(r.set.nums)+2)
		for _, s := range r.set.strs {
			list = append(list, s)
		}
		for _, n := range r.set.nums {
			list = append(list, n)
		}
		if r.set.hasTrue {
			list = append(list, true)
		}
		if r.set.hasFalse {
			list = append(list, false)
		}
		pos = map[string]any{"$in": list, "$not": map[string]any{"$type": "array"}}
	case opExists:
		// != null in JS, as here: present and not null.
		return map[string]any{"$exists": !r.negate}, true
	default:
		return nil, false
	}
	if r.negate {
		return map[string]any{"$not": pos}, true
	}
	return pos, true
}

// json returns the scalar as encoding/json writes it.
func (s scalar) json() any {
	switch s.kind {
	case kindString:
		return s.s
	case kindNumber:
		return s.n
	case kindBool:
		return s.b
	}
	return nil
}
