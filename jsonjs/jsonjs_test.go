package jsonjs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"service/internal/fixture"
)

// canonicalVector is a JSON text and what Node.js makes of it.
type canonicalVector struct{ name, in, want string }

// loadCanonicalVectors reads the shared testdata/jsonjs_canonical.json:
// texts and JSON.stringify(JSON.parse(text)) as Node.js v20 printed it.
func loadCanonicalVectors(t *testing.T) []canonicalVector {
	var doc struct {
		About   string `json:"about"`
		Vectors []struct {
			Name string `json:"name"`
			In   string `json:"in"`
			Want string `json:"want"`
		} `json:"vectors"`
	}
	fixture.JSON(t, "jsonjs_canonical.json", &doc)
	if len(doc.Vectors) == 0 {
		t.Fatal("jsonjs_canonical.json has no vectors")
	}
	out := make([]canonicalVector, len(doc.Vectors))
	for i, v := range doc.Vectors {
		out[i] = canonicalVector{v.Name, v.In, v.Want}
	}
	return out
}

func TestCanonicalizeMatchesNodeVectors(t *testing.T) {
	for _, tc := range loadCanonicalVectors(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err != nil {
				t.Fatalf("Canonicalize(%q): %v", tc.in, err)
			}
			if string(got) != tc.want {
				t.Errorf("Canonicalize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// Expected strings are JSON.stringify(x) from Node.js v20.
func TestNumberFormatting(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, `0`},
		{math.Copysign(0, -1), `0`},
		{1, `1`},
		{-1, `-1`},
		{0.1, `0.1`},
		{-0.1, `-0.1`},
		{1.0 / 3, `0.3333333333333333`},
		{2.0 / 3, `0.6666666666666666`},
		{100, `100`},
		{123.456, `123.456`},
		{-123.456e10, `-1234560000000`},
		{1e21, `1e+21`},
		{1e21 - 65536, `1e+21`},
		{999999999999999900000, `999999999999999900000`},
		{1e-6, `0.000001`},
		{1e-7, `1e-7`},
		{1.2e-6, `0.0000012`},
		{1.25e-7, `1.25e-7`},
		{5e-324, `5e-324`},
		{2.2250738585072014e-308, `2.2250738585072014e-308`},
		{1.7976931348623157e308, `1.7976931348623157e+308`},
		{9007199254740991, `9007199254740991`},
		{9007199254740992, `9007199254740992`},
		{4294967295, `4294967295`},
		{1e100, `1e+100`},
		{-1.5e300, `-1.5e+300`},
		{0.000001234, `0.000001234`},
		{12345678.9, `12345678.9`},
		{1.5e-10, `1.5e-10`},
		{3e6, `3000000`},
		{0.5, `0.5`},
		{math.NaN(), `null`},
		{math.Inf(1), `null`},
		{math.Inf(-1), `null`},
	}
	for _, tc := range tests {
		got, err := Stringify(tc.f)
		if err != nil {
			t.Fatalf("Stringify(%v): %v", tc.f, err)
		}
		if string(got) != tc.want {
			t.Errorf("Stringify(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

// Integers are JavaScript numbers once parsed, so values beyond 2^53 must
// come out as JSON.parse would round them. Expected values from Node.js:
// JSON.stringify(JSON.parse("[9223372036854775807,18446744073709551615,
// -9223372036854775808,9007199254740993]")).
func TestIntegerKinds(t *testing.T) {
	got, err := Stringify([]any{
		int64(math.MaxInt64), uint64(math.MaxUint64), int64(math.MinInt64), int64(1<<53 + 1),
		int8(-8), uint8(8), int16(-16), uint16(16), int32(-32), uint32(32), int(42), uint(43), uintptr(44),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[9223372036854776000,18446744073709552000,-9223372036854776000,9007199254740992,-8,8,-16,16,-32,32,42,43,44]`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFloat32UsesShortestFloat32Digits(t *testing.T) {
	got, err := Stringify([]float32{0.1, 1.5, 16777216, 3.4028235e38, 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	want := `[0.1,1.5,16777216,3.4028235e+38,1e-7]`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	assertFixedPoint(t, got)
}

func TestJSONNumber(t *testing.T) {
	got, err := Stringify([]json.Number{"1.0", "-0", "1e21", "123456789012345678901234", "1E-7", "1e999"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `[1,0,1e+21,1.2345678901234569e+23,1e-7,null]`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// strconv.ParseFloat accepts these, JSON does not.
	for _, bad := range []json.Number{"", "1_000", "0x10", "+1", ".5", "1.", "Inf", "NaN", "01", "1e", "--1"} {
		if _, err := Stringify(bad); err == nil {
			t.Errorf("Stringify(json.Number(%q)) succeeded, want error", bad)
		}
	}
}

func TestStringEscaping(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<>&'", `"<>&'"`},
		{`"\`, `"\"\\"`},
		{"\b\f\n\r\t\x00\x1f\x7f", "\"\\b\\f\\n\\r\\t\\u0000\\u001f\x7f\""},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"é ü 中文 😀", `"é ü 中文 😀"`},
		// Invalid UTF-8: every bad byte is replaced, like encoding/json.
		{"a\xffb\xc3", "\"a\ufffdb\ufffd\""},
		// An encoded surrogate (WTF-8) is not valid UTF-8 either.
		{"\xed\xa0\x80", "\"\ufffd\ufffd\ufffd\""},
	}
	for _, tc := range tests {
		got, err := Stringify(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("Stringify(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if q := AppendQuote([]byte("x"), tc.in); string(q) != "x"+tc.want {
			t.Errorf("AppendQuote(%q) = %q", tc.in, q)
		}
	}
}

func TestParsePreservesOrderAndDuplicates(t *testing.T) {
	v, err := Parse([]byte(`{"b":1,"2":2,"a":{"y":1,"x":2},"b":3}`))
	if err != nil {
		t.Fatal(err)
	}
	obj, ok := v.(*Object)
	if !ok {
		t.Fatalf("Parse returned %T, want *Object", v)
	}
	if got := strings.Join(obj.Keys(), ","); got != "b,2,a" {
		t.Errorf("keys = %s, want b,2,a", got)
	}
	if b, _ := obj.Get("b"); b != json.Number("3") {
		t.Errorf("b = %v, want last value 3", b)
	}
	inner, _ := obj.Get("a")
	if got := strings.Join(inner.(*Object).Keys(), ","); got != "y,x" {
		t.Errorf("inner keys = %s, want y,x", got)
	}
	if _, ok := obj.Get("missing"); ok {
		t.Error("Get(missing) reported present")
	}
	if obj.Len() != 3 {
		t.Errorf("Len = %d, want 3", obj.Len())
	}
}

// Parse must accept exactly the JSON texts encoding/json (and JSON.parse)
// accept.
func TestParseRejectsInvalidJSON(t *testing.T) {
	inputs := []string{
		``, ` `, `{`, `}`, `[`, `]`, `{"a":1,}`, `[1,]`, `[,1]`, `01`, `1.`, `.5`, `+1`, `-`,
		`NaN`, `Infinity`, `{"a"}`, `{"a":}`, `{a:1}`, `{1:2}`, `"\x"`, `"abc`, `[1 2]`,
		`{} {}`, `1 2`, `tru`, `nul`, `{"a":1}}`, `[1]]`, `'a'`, "\"a\tb\"", `"\u12"`,
		`{"a":1 "b":2}`, `[1,,2]`, `{"a"::1}`,
		// Valid ones for contrast.
		`0`, `-0.0e-0`, `"\u0000"`, `[[],{}]`, ` {"a":[1,{"b":null}]} `,
	}
	for _, in := range inputs {
		_, err := Parse([]byte(in))
		if valid := json.Valid([]byte(in)); valid != (err == nil) {
			t.Errorf("Parse(%q): err = %v, but json.Valid = %v", in, err, valid)
		}
	}
}

func TestParseDepthLimit(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	if _, err := Parse([]byte(deep)); err == nil {
		t.Error("Parse accepted nesting beyond maxDepth")
	}
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := Parse([]byte(ok)); err != nil {
		t.Errorf("Parse of depth 100: %v", err)
	}
}

type address struct {
	Street string `json:"street"`
	City   string `json:"city,omitempty"`
}

// Base is embedded to check that its fields are promoted in place.
type Base struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
}

type textID [4]byte

func (t textID) MarshalText() ([]byte, error) {
	return []byte("id-" + string(t[:])), nil
}

type ptrMarshaler struct{ n int }

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{"z":"<&>","1":1.0,"n":` + string(rune('0'+p.n)) + `}`), nil
}

type submission struct {
	Base
	Form       map[string]any `json:"form"`
	Tags       []string       `json:"tags"`
	NilSlice   []string       `json:"nil_slice"`
	Score      float64        `json:"score"`
	Count      int64          `json:"count,string"`
	Secret     string         `json:"-"`
	Empty      string         `json:"empty,omitempty"`
	When       time.Time      `json:"when"`
	Zero       time.Time      `json:"zero,omitzero"`
	Ptr        *address       `json:"ptr"`
	NilPtr     *address       `json:"nil_ptr"`
	Numeric    string         `json:"7"`
	unexported int            // ignored: unexported
	NoTag      bool
	Raw        json.RawMessage `json:"raw"`
	Text       textID          `json:"text"`
	Custom     ptrMarshaler    `json:"custom"`
	Bytes      []byte          `json:"bytes"`
	Any        any             `json:"any"`
	Dash       int             `json:"-,"`
}

func TestStringifyGoValues(t *testing.T) {
	when := time.Date(2024, 3, 9, 10, 11, 12, 345678901, time.FixedZone("X", 3600))
	tenth := 0.1 // a variable, so that tenth+0.2 is float64 arithmetic, not an exact constant
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"bool", true, `true`},
		{"nil pointer", (*address)(nil), `null`},
		{"nil Object", (*Object)(nil), `null`},
		{"nil map", map[string]any(nil), `null`},
		{"time", when, `"2024-03-09T09:11:12.345Z"`},
		{"time pointer", &when, `"2024-03-09T09:11:12.345Z"`},
		{
			"map ordering",
			map[string]any{"b": 1, "2": 2, "a": 3, "1": 4, "01": 5, "-1": 6, "4294967295": 7, "4294967294": 8, "10": 9},
			`{"1":4,"2":2,"10":9,"4294967294":8,"-1":6,"01":5,"4294967295":7,"a":3,"b":1}`,
		},
		{"int keys", map[int]string{10: "ten", -1: "neg", 2: "two"}, `{"2":"two","10":"ten","-1":"neg"}`},
		{"array", [3]int{1, 2, 3}, `[1,2,3]`},
		{"empty slice", []any{}, `[]`},
		{
			// A pointer, so that the pointer-receiver MarshalJSON of Custom
			// is reachable, as with encoding/json.
			"struct",
			&submission{
				Base:    Base{ID: "sub_1", Kind: "contact"},
				Form:    map[string]any{"message": "<b>Hi</b> & bye", "2": "second", "name": "Zoë", "10": "tenth", "agree": true},
				Tags:    []string{"a", "b"},
				Score:   tenth + 0.2,
				Count:   12,
				Secret:  "hidden",
				When:    when,
				Ptr:     &address{Street: "Main St 1"},
				Numeric: "index key",
				NoTag:   true,
				Raw:     json.RawMessage(`{"b":1,"a":"\u003c\u0026\u003e","1":1.0}`),
				Text:    textID{'a', 'b', 'c', 'd'},
				Custom:  ptrMarshaler{n: 5},
				Bytes:   []byte("hi"),
				Any:     []any{1.5, "x", nil},
				Dash:    3,
			},
			`{"7":"index key","id":"sub_1","kind":"contact",` +
				`"form":{"2":"second","10":"tenth","agree":true,"message":"<b>Hi</b> & bye","name":"Zoë"},` +
				`"tags":["a","b"],"nil_slice":null,"score":0.30000000000000004,"count":"12",` +
				`"when":"2024-03-09T09:11:12.345Z","ptr":{"street":"Main St 1"},"nil_ptr":null,"NoTag":true,` +
				`"raw":{"1":1,"b":1,"a":"<&>"},"text":"id-abcd","custom":{"1":1,"z":"<&>","n":5},` +
				`"bytes":"aGk=","any":[1.5,"x",null],"-":3}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Stringify(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
			assertFixedPoint(t, got)
		})
	}
}

// Pointer-receiver MarshalJSON is only reachable through an addressable
// value, as in encoding/json.
func TestStringifyPointerMarshaler(t *testing.T) {
	got, err := Stringify(&ptrMarshaler{n: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"1":1,"z":"<&>","n":1}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

type inner struct {
	Name string `json:"name"`
	X    int
}

type outerConflicts struct {
	inner
	*address                // promoted through a nil pointer: skipped
	Name     string         `json:"name"` // shallower: wins over inner.Name
	X        int            `json:"-"`    // skipped, so inner.X is promoted
	Opt      *int           `json:"opt,omitempty"`
	Z        map[string]int `json:"z,omitzero"`
}

func TestStructEmbeddingAndOptions(t *testing.T) {
	got, err := Stringify(outerConflicts{inner: inner{Name: "inner", X: 1}, Name: "outer"})
	if err != nil {
		t.Fatal(err)
	}
	// Same member set as encoding/json, which we compare against.
	std, _ := json.Marshal(outerConflicts{inner: inner{Name: "inner", X: 1}, Name: "outer"})
	if want := `{"X":1,"name":"outer"}`; string(got) != want {
		t.Errorf("got %s, want %s (encoding/json: %s)", got, want, std)
	}
	if !bytes.Equal(got, std) {
		t.Errorf("member set differs from encoding/json: %s vs %s", got, std)
	}
}

func TestStringifyErrors(t *testing.T) {
	type cyclic struct {
		Next *cyclic `json:"next"`
	}
	c := &cyclic{}
	c.Next = c
	o := NewObject()
	o.Set("\xff", 1)
	o.Set("\xfe", 2)
	for name, v := range map[string]any{
		"channel":          make(chan int),
		"func":             func() {},
		"complex":          complex(1, 2),
		"bool map key":     map[bool]int{true: 1},
		"cycle":            c,
		"colliding keys":   o,
		"colliding in map": map[string]int{"a\xff": 1, "a\xfe": 2},
	} {
		if _, err := Stringify(v); err == nil {
			t.Errorf("%s: Stringify succeeded, want error", name)
		}
	}
}

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("boom") }

func TestMarshalerErrorPropagates(t *testing.T) {
	if _, err := Stringify([]any{failingMarshaler{}}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v, want boom", err)
	}
}

func TestObjectZeroValueAndSet(t *testing.T) {
	var o Object
	o.Set("b", 1)
	o.Set("a", NewObject())
	o.Set("3", []Value{})
	o.Set("b", "replaced")
	got, err := Stringify(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"3":[],"b":"replaced","a":{}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestArrayIndex(t *testing.T) {
	for key, want := range map[string]bool{
		"0": true, "1": true, "10": true, "4294967294": true,
		"": false, "01": false, "-1": false, "-0": false, "+1": false, "1.0": false,
		"1e3": false, " 1": false, "4294967295": false, "4294967296": false, "99999999999": false,
	} {
		if _, got := arrayIndex(key); got != want {
			t.Errorf("arrayIndex(%q) = %v, want %v", key, got, want)
		}
	}
}

// assertFixedPoint checks that b survives Parse + Stringify unchanged, which
// is the property JavaScript receivers rely on.
func assertFixedPoint(t *testing.T, b []byte) {
	t.Helper()
	again, err := Canonicalize(b)
	if err != nil {
		t.Fatalf("Canonicalize(%q): %v", b, err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("not a fixed point:\n first %q\nsecond %q", b, again)
	}
}

func TestFixedPointProperty(t *testing.T) {
	var inputs []string
	for _, tc := range loadCanonicalVectors(t) {
		inputs = append(inputs, tc.in)
	}
	inputs = append(inputs,
		"{\"bad\":\"\xff\xfe\",\"\xc3\":1}",
		`"\ud800 lone surrogate"`,
		`[1e-400,-1e-400,1e400,0.1e1,10e-1]`,
	)
	g := newGenerator(1)
	for range 500 {
		inputs = append(inputs, g.document())
	}
	for _, in := range inputs {
		first, err := Canonicalize([]byte(in))
		if err != nil {
			t.Fatalf("Canonicalize(%q): %v", in, err)
		}
		assertFixedPoint(t, first)
		if !json.Valid(first) {
			t.Errorf("output is not valid JSON: %q", first)
		}
	}
}
