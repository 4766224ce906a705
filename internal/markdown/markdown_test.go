package markdown

import (
	"reflect"
	"strings"
	"testing"
)

func TestBlocks(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",
		"",
		"<!-- first-test -->",
		"```sh",
		"echo one",
		"",
		"echo two",
		"```",
		"",
		"```json",
		`{"a":1}`,
		"```",
		"<!--not a marker--> text",
		"~~~",
		"``` inside a tilde fence",
		"~~~",
		"1. A list item:",
		"",
		"   ```go",
		"   x := 1",
		"     y := 2",
		"   ```",
		"````md",
		"```sh",
		"nested",
		"```",
		"````",
		"```",
		"left open",
	}, "\n")
	want := []Block{
		{Info: "sh", Text: "echo one\n\necho two\n", Line: 4, Marker: "first-test"},
		{Info: "json", Text: "{\"a\":1}\n", Line: 10},
		{Info: "", Text: "``` inside a tilde fence\n", Line: 14},
		{Info: "go", Text: "x := 1\n  y := 2\n", Line: 19},
		{Info: "md", Text: "```sh\nnested\n```\n", Line: 23},
		{Info: "", Text: "left open\n", Line: 28},
	}
	if got := Blocks(doc); !reflect.DeepEqual(got, want) {
		t.Fatalf("Blocks:\n got %+v\nwant %+v", got, want)
	}
}

func TestCells(t *testing.T) {
	for _, tc := range []struct {
		row  string
		want int
	}{
		{"| a | b |", 2},
		{"|a|b|c|", 3},
		{"| a | b", 2},
		{"a | b |", 2},
		{"| a |  |", 2},
		{"| `x \\| y` | b |", 2},
		{"| `x | y` | b |", 3}, // a bare pipe splits even a code span
		{"| a \\|", 1},
		{"|---|:---:|", 2},
	} {
		if got := Cells(tc.row); got != tc.want {
			t.Errorf("Cells(%q) = %d, want %d", tc.row, got, tc.want)
		}
	}
}

func TestTableProblems(t *testing.T) {
	table := "| A | B |\n|---|---|\n| 1 | 2 |\n"
	for _, tc := range []struct {
		name, doc string
		want      []string // the line numbers the problems name
	}{
		{"Good", "Intro.\n\n" + table + "\nAfter.\n", nil},
		{"GoodAtEnd", table, nil},
		{"EscapedPipe", "| A | B |\n|---|---|\n| `a \\| b` | 2 |\n", nil},
		{"TooManyCells", "| A | B |\n|---|---|\n| `a | b` | 2 |\n", []string{"line 3"}},
		{"TooFewCells", "| A | B |\n|---|---|\n| 1 |\n| 1 | 2 |\n", []string{"line 3"}},
		{"Delimiter", "| A | B |\n|---|\n| 1 | 2 |\n", []string{"line 2"}},
		{"ParagraphInside", table + "A paragraph line.\n| 3 | 4 |\n", []string{"line 4"}},
		{"RowAfterParagraph", table + "\nA paragraph.\n| 3 | 4 |\n", []string{"line 6"}},
		{"RowAfterBlankLine", table + "\n| 3 | 4 |\n", []string{"line 5"}},
		{"PipesInCode", "```\n| not | a table\n```\n" + table, nil},
		{"TableInCodeIgnored", "```md\n| A | B |\n|---|\n```\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TableProblems(tc.doc)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want on %v", got, tc.want)
			}
			for i, p := range got {
				if !strings.HasPrefix(p, tc.want[i]+":") {
					t.Fatalf("problem %q, want on %s", p, tc.want[i])
				}
			}
		})
	}
}
