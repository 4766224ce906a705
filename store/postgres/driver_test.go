package postgres

import (
	"strings"
	"testing"
)

func TestRebindText(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		params         int
	}{
		{"plain", `SELECT a FROM t WHERE x = ? AND y = ?`, `SELECT a FROM t WHERE x = $1 AND y = $2`, 2},
		{"quoted", `SELECT '?' , ? FROM t`, `SELECT '?' , $1 FROM t`, 1},
		{"doubled quote", `SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`, 1},
		{"empty literal", `SELECT '', ?`, `SELECT '', $1`, 1},
		{"identifier", `SELECT "a?b", "x""?" FROM t WHERE c = ?`, `SELECT "a?b", "x""?" FROM t WHERE c = $1`, 1},
		{"line comment", "SELECT ? -- is it ? or 'not\nFROM t WHERE x = ?", "SELECT $1 -- is it ? or 'not\nFROM t WHERE x = $2", 2},
		{"line comment at end", "SELECT ? -- ?", "SELECT $1 -- ?", 1},
		{"block comment", `SELECT /* ? 'x */ ?, ?`, `SELECT /* ? 'x */ $1, $2`, 2},
		{"nested block comment", `SELECT /* a /* ? */ ? */ ?`, `SELECT /* a /* ? */ ? */ $1`, 1},
		{"dollar quote", `SELECT $$ it's ? $$, ?`, `SELECT $$ it's ? $$, $1`, 1},
		{"tagged dollar quote", `SELECT $fn$ $$ ? $$ $fn$, ?`, `SELECT $fn$ $$ ? $$ $fn$, $1`, 1},
		{"dollar in identifier", `SELECT a$b, ? FROM t`, `SELECT a$b, $1 FROM t`, 1},
		{"E string", `SELECT E'it\'s ?', ?`, `SELECT E'it\'s ?', $1`, 1},
		{"E string backslash", `SELECT e'\\', ?`, `SELECT e'\\', $1`, 1},
		{"not an E string", `SELECT name'x', ?`, `SELECT name'x', $1`, 1},
		{"jsonb ?", `SELECT m ?? 'k', ? FROM t`, `SELECT m ? 'k', $1 FROM t`, 1},
		{"jsonb ?|", `SELECT m ??| ?::text[]`, `SELECT m ?| $1::text[]`, 1},
		{"jsonb ?&", `SELECT m ??& ?::text[]`, `SELECT m ?& $1::text[]`, 1},
		{"many", `VALUES (?,?,?,?,?,?,?,?,?,?,?)`, `VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`, 11},
		{"unicode", `SELECT 'é?', "ü?", ?`, `SELECT 'é?', "ü?", $1`, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, n, err := rebindText(c.in)
			if err != nil {
				t.Fatalf("rebindText(%q): %v", c.in, err)
			}
			if got != c.want || n != c.params {
				t.Errorf("rebindText(%q)\n got %q, %d params\nwant %q, %d params", c.in, got, n, c.want, c.params)
			}
		})
	}
}

func TestRebindRefuses(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"unterminated quote", `SELECT 'abc, ?`, "unterminated quote"},
		{"unterminated identifier", `SELECT "abc, ?`, "unterminated quote"},
		{"unterminated E string", `SELECT E'ab\', ?`, "unterminated E'' string"},
		{"unterminated comment", `SELECT /* ?`, "unterminated /* comment"},
		{"unterminated nested comment", `SELECT /* /* */ ?`, "unterminated /* comment"},
		{"unterminated dollar quote", `SELECT $q$ ?`, "unterminated $q$ string"},
		{"mixed placeholders", `SELECT $1, ?`, "$n placeholder mixed with ?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, _, err := rebindText(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("rebindText(%q) = %q, %v; want an error saying %q", c.in, got, err, c.want)
			}
			if _, err := rebind(c.in, 1); err == nil {
				t.Fatalf("rebind(%q) rewrote what it cannot rewrite safely", c.in)
			}
		})
	}
}

func TestRebindCountsArguments(t *testing.T) {
	q := `SELECT ? /* ? */, '?', ?`
	if got, err := rebind(q, 2); err != nil || got != `SELECT $1 /* ? */, '?', $2` {
		t.Fatalf("rebind with 2 arguments = %q, %v", got, err)
	}
	for _, args := range []int{0, 1, 3} {
		if _, err := rebind(q, args); err == nil || !strings.Contains(err.Error(), "2 placeholders but") {
			t.Errorf("rebind with %d arguments: %v, want a count mismatch", args, err)
		}
	}
	// A prepare does not know its arguments yet; pgx counts them at execution.
	if got, err := rebind(q, -1); err != nil || !strings.HasPrefix(got, "SELECT $1") {
		t.Fatalf("rebind for a prepare = %q, %v", got, err)
	}
	// Texts without ? pass through as they are, $n included.
	if got, err := rebind(`SELECT pg_try_advisory_lock($1)`, 1); err != nil || got != `SELECT pg_try_advisory_lock($1)` {
		t.Fatalf("rebind of a $n text = %q, %v", got, err)
	}
}
