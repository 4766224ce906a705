package jsonjs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// generator produces random but deterministic JSON texts in deliberately
// non-canonical form (odd whitespace, escapes, number spellings, duplicate
// and integer-like keys) to exercise every difference between encoding/json
// and JSON.stringify.
type generator struct{ r *rand.Rand }

func newGenerator(seed uint64) *generator {
	return &generator{r: rand.New(rand.NewPCG(seed, 0x5eed))}
}

func (g *generator) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *generator) ws() string {
	if g.r.IntN(4) != 0 {
		return ""
	}
	return g.pick(" ", "\n", "\t", "\r\n  ", "  ")
}

func (g *generator) document() string {
	// Mostly objects, like webhook data.
	if g.r.IntN(4) != 0 {
		return g.ws() + g.object(0) + g.ws()
	}
	return g.ws() + g.value(0) + g.ws()
}

func (g *generator) value(depth int) string {
	k := g.r.IntN(10)
	if depth >= 4 {
		k = 4 + g.r.IntN(6)
	}
	switch k {
	case 0, 1:
		return g.object(depth)
	case 2, 3:
		return g.array(depth)
	case 4, 5:
		return g.str()
	case 6, 7:
		return g.number()
	case 8:
		return g.pick("true", "false")
	default:
		return "null"
	}
}

func (g *generator) object(depth int) string {
	var b strings.Builder
	b.WriteString("{" + g.ws())
	n := g.r.IntN(7)
	for i := range n {
		if i > 0 {
			b.WriteString(g.ws() + "," + g.ws())
		}
		b.WriteString(g.key() + g.ws() + ":" + g.ws() + g.value(depth+1))
	}
	b.WriteString(g.ws() + "}")
	return b.String()
}

func (g *generator) array(depth int) string {
	var b strings.Builder
	b.WriteString("[" + g.ws())
	n := g.r.IntN(5)
	for i := range n {
		if i > 0 {
			b.WriteString(g.ws() + "," + g.ws())
		}
		b.WriteString(g.value(depth + 1))
	}
	b.WriteString(g.ws() + "]")
	return b.String()
}

func (g *generator) key() string {
	if g.r.IntN(2) == 0 {
		// A small pool makes duplicates likely.
		return strconv.Quote(g.pick("0", "1", "2", "10", "9", "01", "-1", "-0", "1.5",
			"4294967294", "4294967295", "4294967296", "name", "email", "a", "b", "", "é", "<x>"))
	}
	return g.str()
}

func (g *generator) str() string {
	var b strings.Builder
	b.WriteByte('"')
	n := g.r.IntN(8)
	for range n {
		switch g.r.IntN(8) {
		case 0:
			b.WriteString(g.pick("a", "Z", "0", " ", "<", ">", "&", "'", "/", "=", "+", "`"))
		case 1:
			b.WriteString(g.pick(`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`))
		case 2:
			fmt.Fprintf(&b, `\u%04x`, g.r.IntN(0x20))
		case 3:
			b.WriteString(g.pick("é", "ü", "中", "文", "😀", "👍🏽", "\u2028", "\u2029", "\x7f", "\ufeff", "\ufffd", "\u00a0"))
		case 4:
			// Any BMP character except surrogates, escaped with random case.
			c := g.r.IntN(0xffff + 1)
			if c >= 0xd800 && c <= 0xdfff {
				c = 0xe000
			}
			esc := fmt.Sprintf(`\u%04x`, c)
			if g.r.IntN(2) == 0 {
				esc = `\u` + strings.ToUpper(esc[2:])
			}
			b.WriteString(esc)
		case 5:
			// An astral character as an escaped surrogate pair.
			c := 0x10000 + g.r.IntN(0x100000)
			c -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(c>>10), 0xdc00+(c&0x3ff))
		default:
			b.WriteByte(byte('a' + g.r.IntN(26)))
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (g *generator) number() string {
	switch g.r.IntN(6) {
	case 0:
		return strconv.Itoa(g.r.IntN(2000) - 1000)
	case 1:
		// A random integer literal of up to 30 digits.
		n := 1 + g.r.IntN(30)
		var b strings.Builder
		if g.r.IntN(3) == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(byte('1' + g.r.IntN(9)))
		for range n - 1 {
			b.WriteByte(byte('0' + g.r.IntN(10)))
		}
		return b.String()
	case 2:
		return g.pick("0", "-0", "0.0", "-0.0", "1.0", "1.50", "1e21", "1E+21", "1e-7", "0.000001",
			"1e400", "-1e400", "1e-400", "5e-324", "1.7976931348623157e308", "0.1", "0.30000000000000004",
			"123e-20", "2.5E3", "1e0", "9007199254740993")
	default:
		// Arbitrary finite float64, spelled in one of several ways.
		var f float64
		for {
			f = math.Float64frombits(g.r.Uint64())
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				break
			}
		}
		if g.r.IntN(2) == 0 {
			// Keep some values in the range where JS uses plain notation.
			f = math.Ldexp(math.Mod(f, 1), g.r.IntN(140)-70)
		}
		switch g.r.IntN(3) {
		case 0:
			return strconv.FormatFloat(f, 'g', -1, 64)
		case 1:
			return strconv.FormatFloat(f, 'e', 20, 64)
		default:
			return strconv.FormatFloat(f, 'E', -1, 64)
		}
	}
}

// nodeStringify runs JSON.stringify(JSON.parse(s)) in Node.js for every
// input. Inputs travel as a JSON array; outputs come back one per line, which
// is unambiguous because compact JSON.stringify output never contains a raw
// newline.
func nodeStringify(t *testing.T, inputs []string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is required for this test (it is installed in dev and CI): %v", err)
	}
	payload, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	const script = `
const chunks = [];
process.stdin.on('data', c => chunks.push(c));
process.stdin.on('end', () => {
  const inputs = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  process.stdout.write(inputs.map(s => JSON.stringify(JSON.parse(s))).join('\n'));
});`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("node returned %d outputs for %d inputs", len(lines), len(inputs))
	}
	return lines
}

// TestMatchesNode compares our output with Node.js byte for byte, both for
// arbitrary JSON texts and for Go values serialised by Stringify.
func TestMatchesNode(t *testing.T) {
	var inputs []string
	for _, tc := range loadCanonicalVectors(t) {
		inputs = append(inputs, tc.in)
	}
	g := newGenerator(42)
	for range 300 {
		inputs = append(inputs, g.document())
	}
	// Stringify output for Go values must already be what node produces.
	goValues := []any{
		map[string]any{"message": "<b>Hi</b> & \"bye\"", "2": "b", "10": "c", "name": "Zoë 中文 😀", "n": 1e21, "f": 0.1},
		submission{
			Base:  Base{ID: "x"},
			Form:  map[string]any{"4294967294": 1, "4294967295": 2, "01": 3, "0": 4},
			Score: 1e-7, Count: 1 << 60, When: time.Unix(1700000000, 123456789),
			Raw:  json.RawMessage(`{"b":[1.0,2e0],"0":"\u2028"}`),
			Text: textID{'<', '>', '&', '\''},
			Any:  []any{uint64(math.MaxUint64), float32(0.1), -0.0, "\x00\x1f\u2029"},
		},
		[]any{int64(1<<53 + 1), 5e-324, 1.7976931348623157e308, 123456789012345678901234.0},
	}
	for _, v := range goValues {
		b, err := Stringify(v)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(b))
	}

	want := nodeStringify(t, inputs)
	for i, in := range inputs {
		got, err := Canonicalize([]byte(in))
		if err != nil {
			t.Fatalf("Canonicalize(%q): %v", in, err)
		}
		if string(got) != want[i] {
			t.Errorf("input %q\n  go %q\nnode %q", in, got, want[i])
		}
	}
	for i := range goValues {
		in := inputs[len(inputs)-len(goValues)+i]
		if in != want[len(inputs)-len(goValues)+i] {
			t.Errorf("Stringify output is not what node produces:\n  go %q\nnode %q", in, want[len(inputs)-len(goValues)+i])
		}
	}
}
