package store

import (
	"math"
	"strconv"
)

// msgNumberRange is the reason given for a JSON value holding a number
// beyond the range of a 64-bit float.
const msgNumberRange = "must not contain numbers out of range"

// numbersInRange reports whether every number in the JSON text doc fits a
// float64. A number such as 1e999 is valid JSON, but most clients read it
// as Infinity (JavaScript) or fail to read the document at all (Go), so
// the stored value would be unreadable where it is used. Only numbers
// with an exponent or over 300 characters can overflow, so the rest are
// not parsed; text that is not JSON is left to the JSON checks.
func numbersInRange(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			j, exp := i+1, false
			for ; j < len(doc); j++ {
				d := doc[j]
				if d == 'e' || d == 'E' {
					exp = true
				} else if !(d >= '0' && d <= '9' || d == '.' || d == '+' || d == '-') {
					break
				}
			}
			if exp || j-i > 300 {
				if f, err := strconv.ParseFloat(string(doc[i:j]), 64); err != nil && math.IsInf(f, 0) {
					return false
				}
			}
			i = j - 1
		}
	}
	return true
}
