package jsonjs

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// TimeLayout is the layout used for time.Time values: RFC 3339 in UTC with
// exactly three fractional digits, the same shape as JavaScript's
// Date.prototype.toISOString, so receivers can pass it straight to new Date().
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Stringify serialises v exactly as JavaScript's JSON.stringify would
// serialise the equivalent JavaScript value: compact, no HTML escaping,
// non-ASCII written as raw UTF-8, numbers formatted by ECMAScript's
// Number::toString, and object keys in JavaScript property order (array-index
// keys such as "0" or "42" first in ascending numeric order, then the other
// keys in their Go order).
//
// Accepted values:
//   - *Object and Object (as returned by Parse), nil, bool, string;
//   - every int, uint and float kind, and json.Number. JavaScript numbers are
//     float64, so integers beyond 2^53 are rounded exactly as JSON.parse
//     would round them; send such identifiers as strings;
//   - slices and arrays (a nil slice is null, []byte is base64 as in
//     encoding/json);
//   - maps with string or integer keys; the non-index keys are sorted, which
//     is what JavaScript sees when parsing a map marshalled by Go;
//   - time.Time, as a string in TimeLayout (UTC, milliseconds);
//   - pointers and interfaces (nil is null);
//   - structs, with fields in declaration order, honouring the encoding/json
//     tag name, "-", omitempty, omitzero and string options and promoting
//     fields of embedded structs as encoding/json does;
//   - types implementing json.Marshaler (the output is parsed and
//     re-serialised by these rules) or encoding.TextMarshaler.
//
// NaN and ±Inf become null, as in JavaScript. Invalid UTF-8 becomes U+FFFD.
// An object whose keys collide after that replacement is an error, because
// JSON.parse would silently drop one of the values.
func Stringify(v any) ([]byte, error) {
	e := &encoder{}
	if err := e.value(reflect.ValueOf(v), 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// AppendQuote appends s to dst as a JSON string literal escaped exactly as
// JSON.stringify escapes strings.
func AppendQuote(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// JavaScript strings cannot carry invalid UTF-8; any decoder
			// on the way in would already have substituted U+FFFD.
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			// Everything else, including U+2028/U+2029, is written raw:
			// well-formed JSON.stringify only escapes lone surrogates,
			// which a Go string cannot contain.
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// appendNumber appends f formatted by ECMAScript's Number::toString
// (ECMA-262 §6.1.6.1.20). bits is 32 for float32 so that a float32 such as
// 0.1 prints as "0.1" rather than its widened float64 digits; the result is
// still a fixed point because a decimal of at most nine significant digits
// is also the shortest representation of the nearest float64.
func appendNumber(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		// Covers -0, which JavaScript prints as "0".
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits, the "k as small as possible" requirement of
	// the spec, e.g. "1.2345e+06".
	e := strconv.FormatFloat(f, 'e', -1, bits)
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	k := len(digits) // number of significant digits
	n := exp + 1     // position of the decimal point relative to digits
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// appendNumberLiteral formats a JSON number literal the way JavaScript does
// after JSON.parse has turned it into a float64. Out-of-range literals become
// ±Inf and thus null, exactly as in JavaScript.
func appendNumberLiteral(dst []byte, s string) ([]byte, error) {
	if !isValidNumber(s) {
		return nil, fmt.Errorf("jsonjs: invalid number literal %q", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("jsonjs: %w", err)
	}
	return appendNumber(dst, f, 64), nil
}

// isValidNumber reports whether s matches the JSON number grammar. It guards
// strconv.ParseFloat, which also accepts forms such as "1_000", "0x1p4",
// "+1" and "Inf" that are not JSON.
func isValidNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		for s = s[1:]; s != "" && isDigit(s[0]); s = s[1:] {
		}
	default:
		return false
	}
	if s != "" && s[0] == '.' {
		s = s[1:]
		if s == "" || !isDigit(s[0]) {
			return false
		}
		for s != "" && isDigit(s[0]) {
			s = s[1:]
		}
	}
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s != "" && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		if s == "" || !isDigit(s[0]) {
			return false
		}
		for s != "" && isDigit(s[0]) {
			s = s[1:]
		}
	}
	return s == ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// arrayIndex reports whether key is a canonical array index: the decimal
// form of an integer in [0, 2^32-2] without sign or leading zeros. JavaScript
// enumerates such keys before all others, in ascending numeric order,
// whatever order they were inserted in.
func arrayIndex(key string) (uint32, bool) {
	if key == "" || len(key) > 10 || (key[0] == '0' && len(key) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(key); i++ {
		if !isDigit(key[i]) {
			return 0, false
		}
		n = n*10 + uint64(key[i]-'0')
	}
	if n > math.MaxUint32-1 {
		return 0, false
	}
	return uint32(n), true
}

var (
	objectType        = reflect.TypeFor[Object]()
	objectPtrType     = reflect.TypeFor[*Object]()
	timeType          = reflect.TypeFor[time.Time]()
	numberType        = reflect.TypeFor[json.Number]()
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

type encoder struct {
	buf []byte
}

// member is one key/value pair of an object about to be written.
type member struct {
	key    string
	val    reflect.Value
	quoted bool // the encoding/json ",string" option
}

func (e *encoder) value(v reflect.Value, depth int) error {
	if depth > maxDepth {
		return errors.New("jsonjs: nesting too deep (cyclic value?)")
	}
	if !v.IsValid() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	t := v.Type()
	// Types with fixed meaning come first so that, for example, time.Time
	// uses TimeLayout rather than its own MarshalJSON.
	switch t {
	case objectPtrType:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		return e.object(v.Elem(), depth)
	case objectType:
		return e.object(v, depth)
	case timeType:
		if !v.CanInterface() {
			break
		}
		e.buf = AppendQuotedTime(e.buf, v.Interface().(time.Time))
		return nil
	case numberType:
		b, err := appendNumberLiteral(e.buf, v.String())
		if err != nil {
			return err
		}
		e.buf = b
		return nil
	}

	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		// The element of a pointer is addressable, so pointer-receiver
		// marshalers are found below.
		return e.value(v.Elem(), depth+1)
	}

	if handled, err := e.marshaler(v, depth); handled {
		return err
	}

	switch v.Kind() {
	case reflect.Bool:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case reflect.String:
		e.buf = AppendQuote(e.buf, v.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// Round through the decimal text so that integers beyond 2^53 get
		// exactly the float64 JSON.parse would give them.
		b, err := appendNumberLiteral(e.buf, strconv.FormatInt(v.Int(), 10))
		if err != nil {
			return err
		}
		e.buf = b
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b, err := appendNumberLiteral(e.buf, strconv.FormatUint(v.Uint(), 10))
		if err != nil {
			return err
		}
		e.buf = b
	case reflect.Float32:
		e.buf = appendNumber(e.buf, v.Float(), 32)
	case reflect.Float64:
		e.buf = appendNumber(e.buf, v.Float(), 64)
	case reflect.Slice:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		if isByteSlice(t) {
			e.buf = AppendQuote(e.buf, base64.StdEncoding.EncodeToString(v.Bytes()))
			return nil
		}
		return e.array(v, depth)
	case reflect.Array:
		return e.array(v, depth)
	case reflect.Map:
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		return e.mapValue(v, depth)
	case reflect.Struct:
		return e.structValue(v, depth)
	default:
		return fmt.Errorf("jsonjs: unsupported type %s", t)
	}
	return nil
}

// isByteSlice mirrors encoding/json: []byte is base64 unless the element
// type has its own marshaling.
func isByteSlice(t reflect.Type) bool {
	if t.Elem().Kind() != reflect.Uint8 {
		return false
	}
	p := reflect.PointerTo(t.Elem())
	return !p.Implements(marshalerType) && !p.Implements(textMarshalerType)
}

// marshaler handles json.Marshaler and encoding.TextMarshaler, with the same
// precedence as encoding/json. MarshalJSON output is parsed and
// re-serialised because its formatting (HTML escaping, number forms, key
// order) is not under our control.
func (e *encoder) marshaler(v reflect.Value, depth int) (bool, error) {
	m, ok := methodValue(v, marshalerType)
	if ok {
		b, err := m.(json.Marshaler).MarshalJSON()
		if err != nil {
			return true, fmt.Errorf("jsonjs: MarshalJSON for %s: %w", v.Type(), err)
		}
		parsed, err := Parse(b)
		if err != nil {
			return true, fmt.Errorf("jsonjs: MarshalJSON for %s: %w", v.Type(), err)
		}
		return true, e.value(reflect.ValueOf(parsed), depth+1)
	}
	m, ok = methodValue(v, textMarshalerType)
	if ok {
		b, err := m.(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return true, fmt.Errorf("jsonjs: MarshalText for %s: %w", v.Type(), err)
		}
		e.buf = AppendQuote(e.buf, string(b))
		return true, nil
	}
	return false, nil
}

// methodValue returns v (or &v for pointer-receiver methods when v is
// addressable) as an interface if it implements iface.
func methodValue(v reflect.Value, iface reflect.Type) (any, bool) {
	if v.Type().Implements(iface) && v.CanInterface() {
		return v.Interface(), true
	}
	if v.CanAddr() && reflect.PointerTo(v.Type()).Implements(iface) && v.Addr().CanInterface() {
		return v.Addr().Interface(), true
	}
	return nil, false
}

func (e *encoder) array(v reflect.Value, depth int) error {
	e.buf = append(e.buf, '[')
	for i := range v.Len() {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(v.Index(i), depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// object writes an Object value (not pointer); v may be unaddressable.
func (e *encoder) object(v reflect.Value, depth int) error {
	o := v.Interface().(Object)
	ms := make([]member, 0, len(o.keys))
	for _, k := range o.keys {
		ms = append(ms, member{key: k, val: reflect.ValueOf(o.values[k])})
	}
	return e.members(ms, depth)
}

func (e *encoder) mapValue(v reflect.Value, depth int) error {
	ms := make([]member, 0, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		k, err := mapKey(iter.Key())
		if err != nil {
			return err
		}
		ms = append(ms, member{key: k, val: iter.Value()})
	}
	// Go's own encoding order; members() then moves index keys first,
	// reproducing what JavaScript holds after parsing Go's output.
	sort.Slice(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
	return e.members(ms, depth)
}

// mapKey converts a map key to a string following encoding/json's rules.
func mapKey(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if m, ok := methodValue(k, textMarshalerType); ok {
		b, err := m.(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return "", fmt.Errorf("jsonjs: MarshalText for map key %s: %w", k.Type(), err)
		}
		return string(b), nil
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("jsonjs: unsupported map key type %s", k.Type())
}

// members writes an object whose members are given in their Go order,
// reordering them into JavaScript property order.
func (e *encoder) members(ms []member, depth int) error {
	type entry struct {
		member
		quotedKey []byte
		index     uint32
		isIndex   bool
	}
	entries := make([]entry, len(ms))
	seen := make(map[string]bool, len(ms))
	for i, m := range ms {
		qk := AppendQuote(nil, m.key)
		if seen[string(qk)] {
			return fmt.Errorf("jsonjs: duplicate object key %s", qk)
		}
		seen[string(qk)] = true
		idx, ok := arrayIndex(m.key)
		entries[i] = entry{member: m, quotedKey: qk, index: idx, isIndex: ok}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.isIndex != b.isIndex {
			return a.isIndex
		}
		return a.isIndex && a.index < b.index
	})
	e.buf = append(e.buf, '{')
	for i, en := range entries {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, en.quotedKey...)
		e.buf = append(e.buf, ':')
		if err := e.memberValue(en.member, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) memberValue(m member, depth int) error {
	if !m.quoted {
		return e.value(m.val, depth)
	}
	v := m.val
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		v = v.Elem()
	}
	inner := &encoder{}
	if err := inner.value(v, depth); err != nil {
		return err
	}
	e.buf = AppendQuote(e.buf, string(inner.buf))
	return nil
}

func (e *encoder) structValue(v reflect.Value, depth int) error {
	fields := structFields(v.Type())
	ms := make([]member, 0, len(fields))
	for _, f := range fields {
		fv, ok := fieldByIndex(v, f.index)
		if !ok {
			continue // inside a nil embedded pointer
		}
		if f.omitEmpty && isEmptyValue(fv) {
			continue
		}
		if f.omitZero && isZeroValue(fv) {
			continue
		}
		ms = append(ms, member{key: f.name, val: fv, quoted: f.quoted})
	}
	return e.members(ms, depth)
}

// fieldByIndex is reflect.Value.FieldByIndex without the panic on nil
// embedded pointers.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZeroValue implements omitzero: an IsZero() bool method wins (so that,
// for example, a time.Time in another location still counts as zero).
func isZeroValue(v reflect.Value) bool {
	type zeroer interface{ IsZero() bool }
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return true
	}
	if z, ok := methodValue(v, reflect.TypeFor[zeroer]()); ok {
		return z.(zeroer).IsZero()
	}
	return v.IsZero()
}

type field struct {
	name      string
	index     []int
	tagged    bool
	omitEmpty bool
	omitZero  bool
	quoted    bool
}

// structFields lists the JSON fields of t in declaration order, with the
// fields of embedded structs promoted at the embedding position and name
// conflicts resolved by encoding/json's rules (shallowest wins, then the one
// with a tag, otherwise the name is dropped).
func structFields(t reflect.Type) []field {
	var all []field
	collectFields(t, nil, map[reflect.Type]bool{}, &all)

	byName := make(map[string][]int) // name -> positions in all
	for i, f := range all {
		byName[f.name] = append(byName[f.name], i)
	}
	out := make([]field, 0, len(all))
	for i, f := range all {
		pos := byName[f.name]
		if len(pos) == 1 {
			out = append(out, f)
			continue
		}
		if dominant(all, pos) == i {
			out = append(out, f)
		}
	}
	return out
}

// dominant returns the position in all of the field that wins among the
// same-named fields at pos, or -1 if none does.
func dominant(all []field, pos []int) int {
	minDepth := len(all[pos[0]].index)
	for _, p := range pos[1:] {
		minDepth = min(minDepth, len(all[p].index))
	}
	winner, tagged, count := -1, 0, 0
	for _, p := range pos {
		if len(all[p].index) != minDepth {
			continue
		}
		count++
		if all[p].tagged {
			tagged++
			winner = p
		}
	}
	switch {
	case count == 1:
		for _, p := range pos {
			if len(all[p].index) == minDepth {
				return p
			}
		}
	case tagged == 1:
		return winner
	}
	return -1
}

func collectFields(t reflect.Type, prefix []int, onPath map[reflect.Type]bool, out *[]field) {
	if onPath[t] {
		return // embedded type cycle, e.g. type T struct{ *T }
	}
	onPath[t] = true
	defer delete(onPath, t)

	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !isValidTag(name) {
			name = ""
		}
		index := append(append([]int(nil), prefix...), i)

		if sf.Anonymous {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				if !sf.IsExported() {
					// encoding/json ignores these: they cannot be
					// reached without unsafe.
					continue
				}
				ft = ft.Elem()
			}
			if name == "" && ft.Kind() == reflect.Struct {
				collectFields(ft, index, onPath, out)
				continue
			}
			if !sf.IsExported() {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}

		f := field{name: name, index: index, tagged: name != ""}
		if f.name == "" {
			f.name = sf.Name
		}
		for opts != "" {
			var opt string
			opt, opts, _ = strings.Cut(opts, ",")
			switch opt {
			case "omitempty":
				f.omitEmpty = true
			case "omitzero":
				f.omitZero = true
			case "string":
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				switch ft.Kind() {
				case reflect.Bool, reflect.String,
					reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
					reflect.Float32, reflect.Float64:
					f.quoted = true
				}
			}
		}
		*out = append(*out, f)
	}
}

// isValidTag mirrors encoding/json: an invalid tag name falls back to the Go
// field name.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
