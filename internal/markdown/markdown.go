// Package markdown reads what tests need from the project's Markdown: the
// fenced code blocks (with the HTML comment that marks one to be run) and
// the tables (to check that each renders as one table).
package markdown

import (
	"fmt"
	"regexp"
	"strings"
)

// Block is one fenced code block.
type Block struct {
	// Info is the fence's info string: "sh", "json", or "".
	Info string
	// Text is the block's content, each line ending in "\n", with the
	// fence's own indentation (a block inside a list item) removed.
	Text string
	// Line is the 1-based line of the opening fence.
	Line int
	// Marker is the HTML comment on the line just before the fence,
	// without "<!--" and "-->" and trimmed ("" when there is none). The
	// comment does not render, so a document can mark the blocks a test
	// runs without showing the mark to its readers.
	Marker string
}

var comment = regexp.MustCompile(`^\s*<!--(.*?)-->\s*$`)

// Blocks returns every fenced code block of doc (``` or ~~~), in order.
// A block left open runs to the end of doc, as CommonMark reads it.
func Blocks(doc string) []Block {
	lines := strings.Split(doc, "\n")
	var out []Block
	for i := 0; i < len(lines); i++ {
		indent, fence, info, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		b := Block{Info: info, Line: i + 1}
		if i > 0 {
			if m := comment.FindStringSubmatch(lines[i-1]); m != nil {
				b.Marker = strings.TrimSpace(m[1])
			}
		}
		var text strings.Builder
		for i++; i < len(lines) && !closingFence(lines[i], fence); i++ {
			line := lines[i]
			// Drop up to the fence's indentation, as CommonMark does.
			for n := 0; n < indent && strings.HasPrefix(line, " "); n++ {
				line = line[1:]
			}
			text.WriteString(line + "\n")
		}
		b.Text = text.String()
		out = append(out, b)
	}
	return out
}

// openingFence reads a fence line: its indentation, its fence (``` or
// ~~~, possibly longer) and its info string's first word.
func openingFence(line string) (indent int, fence, info string, ok bool) {
	rest := strings.TrimLeft(line, " ")
	indent = len(line) - len(rest)
	for _, c := range []string{"`", "~"} {
		n := len(rest) - len(strings.TrimLeft(rest, c))
		if n >= 3 {
			if f := strings.Fields(rest[n:]); len(f) > 0 {
				info = f[0]
			}
			return indent, rest[:n], info, true
		}
	}
	return 0, "", "", false
}

func closingFence(line, fence string) bool {
	rest := strings.TrimSpace(line)
	return strings.HasPrefix(rest, fence) && strings.Trim(rest, fence[:1]) == ""
}

var delimiterRow = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)

// TableProblems checks every table of doc outside code blocks, as GitHub
// renders them: a header row of cells between pipes, a delimiter row
// (|---|---|), then rows up to the first blank line. It returns one
// message per line that breaks a table: a row whose cell count is not the
// header's (its cells are dropped or padded), a line without a leading
// pipe before the blank line (a paragraph the table swallows as a row),
// and a row outside any table (one cut off from its table by a blank
// line, say). Messages name doc's lines 1-based.
func TableProblems(doc string) []string {
	lines := strings.Split(doc, "\n")
	inCode := make([]bool, len(lines))
	for _, b := range Blocks(doc) {
		end := b.Line + strings.Count(b.Text, "\n")
		for i := b.Line - 1; i <= end && i < len(lines); i++ {
			inCode[i] = true
		}
	}
	isRow := func(i int) bool { return !inCode[i] && strings.HasPrefix(strings.TrimSpace(lines[i]), "|") }
	var out []string
	for i := 0; i < len(lines); i++ {
		if !isRow(i) {
			continue
		}
		if i+1 >= len(lines) || inCode[i+1] || !delimiterRow.MatchString(lines[i+1]) {
			out = append(out, fmt.Sprintf("line %d: a table row outside a table (no header and |---| row above it): %s", i+1, lines[i]))
			continue
		}
		want := Cells(lines[i])
		if got := Cells(lines[i+1]); got != want {
			out = append(out, fmt.Sprintf("line %d: the delimiter row has %d cells, the header %d", i+2, got, want))
		}
		for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			if !isRow(i) {
				out = append(out, fmt.Sprintf("line %d: a paragraph line inside a table (a blank line must end the table first): %s", i+1, lines[i]))
				continue
			}
			if got := Cells(lines[i]); got != want {
				out = append(out, fmt.Sprintf("line %d: %d cells, the header has %d: %s", i+1, got, want, lines[i]))
			}
		}
	}
	return out
}

// Cells counts the cells of a table row: the pieces between its pipes,
// not counting an escaped pipe (\|), which GitHub shows as a pipe inside a
// cell even in a code span.
func Cells(row string) int {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	n := 1
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}
