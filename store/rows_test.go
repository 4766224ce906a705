package store

import (
	"strings"
	"testing"
)

// TestMultiRowStatements checks the multi-row INSERTs the group commit
// writes with: no statement binds more than maxParams parameters (binding
// costs the square of them), and chunks cover any number of rows exactly
// once, in order, with statements of the length they claim.
func TestMultiRowStatements(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       multiRow
		perRow  int
		maxRows int
	}{
		{"events", eventsInsert, 7, 16},
		{"users", usersInsert, 4, 32},
		{"assignments", assignInsert, 4, 32},
		{"event_users", indexInsert, 1, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.m.max != tc.maxRows {
				t.Errorf("%d rows a statement, want %d", tc.m.max, tc.maxRows)
			}
			for n, q := range tc.m.texts {
				if got := strings.Count(q, "?"); got != n*tc.perRow || got > maxParams {
					t.Errorf("the %d-row statement has %d parameters, want %d and at most %d", n, got, n*tc.perRow, maxParams)
				}
			}
			for _, rows := range []int{0, 1, 15, 16, 17, 64, 100, 1000} {
				next := 0
				err := tc.m.chunks(rows, func(i, n int, q string) error {
					if i != next || n < 1 || n > tc.m.max || q != tc.m.texts[n] {
						t.Fatalf("%d rows: chunk [%d, %d) after %d, statement for %d rows: %t", rows, i, i+n, next, n, q == tc.m.texts[n])
					}
					next = i + n
					return nil
				})
				if err != nil || next != rows {
					t.Errorf("%d rows: chunks covered %d, err %v", rows, next, err)
				}
			}
		})
	}
}
