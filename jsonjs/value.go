// Package jsonjs produces JSON that is byte-identical to what JavaScript's
// JSON.stringify would produce for the same data.
//
// Webhook receivers written in JavaScript verify signatures by computing
// HMAC(JSON.stringify(JSON.parse(body).data)), so the bytes we sign must be
// a fixed point of JSON.parse followed by JSON.stringify. encoding/json does
// not give that guarantee: it escapes <, > and & (and U+2028/U+2029), sorts
// map keys without regard to JavaScript's "integer keys first" property
// order, and formats numbers differently from ECMAScript's Number::toString.
// This package reproduces the JavaScript rules exactly.
//
// Stringify walks Go values itself (stringify.go) rather than running
// encoding/json and then Canonicalize, although that would drop most of its
// struct encoder. Measured on a webhook-sized payload, the two-pass route
// gave the same bytes where both work but took about twice the time and
// 2.8 times the allocations (563 against 202), and it differs in two ways
// the contract forbids: encoding/json refuses NaN and ±Inf where
// JSON.stringify writes null, and it writes time.Time as RFC 3339 with
// variable fractional digits instead of toISOString's exactly three.
package jsonjs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxDepth bounds nesting in both Parse and Stringify so that hostile input
// or a pointer cycle yields an error instead of exhausting the stack.
const maxDepth = 10000

// Value is a decoded JSON value as returned by Parse: nil, bool, string,
// json.Number, []Value or *Object.
//
// Numbers are kept as json.Number (the original text) so that Go callers can
// still read large integers exactly; Stringify formats them the way
// JavaScript would after converting them to a float64.
type Value = any

// Object is a JSON object that remembers the order in which its keys were
// first inserted. The zero value is an empty object ready to use.
//
// The order kept here is insertion order; Stringify applies JavaScript's
// property order on output (array-index keys first, ascending), because that
// is what JSON.stringify does to any object.
type Object struct {
	keys   []string
	values map[string]Value
}

// NewObject returns an empty Object.
func NewObject() *Object { return &Object{} }

// Set stores v under key. Setting an existing key replaces its value but keeps
// the key's original position, which is exactly how JSON.parse treats
// duplicate keys ("last value wins, first position kept").
func (o *Object) Set(key string, v Value) {
	if o.values == nil {
		o.values = make(map[string]Value)
	}
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = v
}

// Get returns the value stored under key and whether the key is present.
func (o *Object) Get(key string) (Value, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.values[key]
	return v, ok
}

// Keys returns a copy of the keys in insertion order.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return append([]string(nil), o.keys...)
}

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Parse decodes a single JSON text, preserving object key order.
//
// Objects become *Object, arrays []Value, numbers json.Number, and strings,
// booleans and null their natural Go values. Duplicate keys behave as in
// JSON.parse: the last value wins and the key keeps its first position.
//
// One unavoidable difference from JavaScript: Go strings cannot hold lone
// UTF-16 surrogates, so an escaped lone surrogate such as "\ud800" (and any
// invalid UTF-8 in the input) decodes to U+FFFD. Output produced from such
// values is still a fixed point of JSON.parse + JSON.stringify.
func Parse(b []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	// The decoder accepts a stream of values; JSON.parse accepts exactly one.
	switch tok, err := dec.Token(); {
	case err == io.EOF:
		return v, nil
	case err != nil:
		return nil, fmt.Errorf("jsonjs: %w", err)
	default:
		return nil, fmt.Errorf("jsonjs: unexpected %v after top-level value", tok)
	}
}

func parseValue(dec *json.Decoder, depth int) (Value, error) {
	if depth > maxDepth {
		return nil, errors.New("jsonjs: nesting too deep")
	}
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, fmt.Errorf("jsonjs: %w", io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, fmt.Errorf("jsonjs: %w", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		// string, json.Number, bool or nil.
		return tok, nil
	}
	switch d {
	case '{':
		obj := NewObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("jsonjs: %w", err)
			}
			key, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("jsonjs: object key is %T, not string", kt)
			}
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			obj.Set(key, v)
		}
		if err := expectDelim(dec, '}'); err != nil {
			return nil, err
		}
		return obj, nil
	case '[':
		// Non-nil so that an empty array stringifies as [] rather than null.
		arr := []Value{}
		for dec.More() {
			v, err := parseValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if err := expectDelim(dec, ']'); err != nil {
			return nil, err
		}
		return arr, nil
	default:
		return nil, fmt.Errorf("jsonjs: unexpected %q", rune(d))
	}
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err == io.EOF {
		return fmt.Errorf("jsonjs: %w", io.ErrUnexpectedEOF)
	}
	if err != nil {
		return fmt.Errorf("jsonjs: %w", err)
	}
	if tok != want {
		return fmt.Errorf("jsonjs: expected %q, got %v", rune(want), tok)
	}
	return nil
}

// Canonicalize re-serialises an arbitrary JSON text exactly as
// JSON.stringify(JSON.parse(text)) would. Use it for data whose shape is not
// known in advance, such as user-submitted form fields.
func Canonicalize(b []byte) ([]byte, error) {
	v, err := Parse(b)
	if err != nil {
		return nil, err
	}
	return Stringify(v)
}
