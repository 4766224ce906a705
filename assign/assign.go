// Package assign implements deterministic A/B variant assignment that matches
// the JavaScript clients bit for bit.
//
// The contract (GrowthBook's "hash v2"):
//
//	n = (fnv1a32(String(fnv1a32(seed + userKey))) % 10000) / 10000
//
// where seed is the campaign id in decimal followed by ':', fnv1a32 is 32-bit
// FNV-1a over UTF-16 code units (what JavaScript's charCodeAt yields) and
// String(x) is the unsigned decimal form of the inner hash. Variants, in
// ascending id order, own consecutive ranges [a, a+w/100).
//
// Everything on the hot path works on a small incremental hasher so that no
// concatenated or formatted strings are ever built: Bucket and Pick do not
// allocate.
package assign

import (
	"math"
	"unicode/utf8"
)

const (
	offset32 = 2166136261
	prime32  = 16777619

	// Buckets is the number of distinct buckets; a bucket b stands for
	// n = b/Buckets.
	Buckets = 10000
)

// hasher is an incremental 32-bit FNV-1a over UTF-16 code units. Feeding it
// pieces one after another gives the same result as hashing the JavaScript
// concatenation of those pieces, which is what lets Bucket avoid building
// seed+userKey.
type hasher uint32

func newHasher() hasher { return offset32 }

// unit mixes one UTF-16 code unit in as a whole value, exactly like
// `h ^= str.charCodeAt(i)` followed by the multiply in the JS SDKs.
func (h *hasher) unit(u uint16) {
	*h = (*h ^ hasher(u)) * prime32
}

// byte mixes an ASCII byte, which is also a single UTF-16 code unit.
func (h *hasher) byte(b byte) {
	*h = (*h ^ hasher(b)) * prime32
}

// string mixes the UTF-16 code units of the UTF-8 string s. Invalid UTF-8 is
// replaced by U+FFFD using the WHATWG decoder's "maximal subpart" rule
// (TextDecoder, Buffer.toString), so that a byte string decoded on the JS side
// hashes the same. This is deliberately not Go's one-U+FFFD-per-byte rule,
// which differs for truncated sequences such as "\xe6\x97".
func (h *hasher) string(s string) {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// ASCII fast path: the common case for ids and keys.
			h.byte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			h.unit(0xFFFD)
			i += invalidLen(s[i:])
			continue
		}
		if r >= 0x10000 {
			// Non-BMP: JS strings hold it as a surrogate pair, and each half
			// is hashed separately.
			r -= 0x10000
			h.unit(uint16(0xD800 + r>>10))
			h.unit(uint16(0xDC00 + r&0x3FF))
		} else {
			h.unit(uint16(r))
		}
		i += size
	}
}

// invalidLen returns how many bytes the WHATWG UTF-8 decoder consumes for the
// single U+FFFD it emits at the start of s, given that s does not start with
// a valid encoding: the lead byte plus the continuation bytes that still form
// a valid prefix of some encoding (the Unicode "maximal subpart").
func invalidLen(s string) int {
	lo, hi := byte(0x80), byte(0xBF)
	var need int
	switch b := s[0]; {
	case b >= 0xC2 && b <= 0xDF:
		need = 1
	case b == 0xE0:
		need, lo = 2, 0xA0 // excludes overlong forms
	case b >= 0xE1 && b <= 0xEC, b == 0xEE, b == 0xEF:
		need = 2
	case b == 0xED:
		need, hi = 2, 0x9F // excludes encoded surrogates
	case b == 0xF0:
		need, lo = 3, 0x90 // excludes overlong forms
	case b >= 0xF1 && b <= 0xF3:
		need = 3
	case b == 0xF4:
		need, hi = 3, 0x8F // excludes code points above U+10FFFF
	default:
		// Stray continuation bytes, C0, C1 and F5..FF are never a prefix.
		return 1
	}
	n := 1
	for ; n <= need && n < len(s); n++ {
		if c := s[n]; c < lo || c > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// uint32 mixes the unsigned decimal digits of v, i.e. JS String(v >>> 0).
func (h *hasher) uint32(v uint32) {
	// A fixed array on the stack instead of strconv keeps this allocation
	// free regardless of escape analysis.
	var buf [10]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	for _, c := range buf[i:] {
		h.byte(c)
	}
}

// int64 mixes the signed decimal digits of v, as JS String(v) would print an
// integer (a leading '-' for negatives, no '+').
func (h *hasher) int64(v int64) {
	u := uint64(v)
	if v < 0 {
		h.byte('-')
		u = -u // two's complement negation also handles math.MinInt64
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	for _, c := range buf[i:] {
		h.byte(c)
	}
}

// FNV1a32 returns the 32-bit FNV-1a hash of s taken over its UTF-16 code
// units, identical to GrowthBook's JS hashFnv32a(str) for the string the JS
// side would see. Non-BMP characters contribute two surrogate units; invalid
// UTF-8 is decoded to U+FFFD the way JavaScript's TextDecoder does.
func FNV1a32(s string) uint32 {
	h := newHasher()
	h.string(s)
	return uint32(h)
}

// finish applies the outer round: fnv1a32(String(inner)) % 10000.
func finish(inner hasher) int {
	h := newHasher()
	h.uint32(uint32(inner))
	return int(uint32(h) % Buckets)
}

// Bucket returns the assignment bucket 0..9999 (n*10000) of userKey in the
// campaign, using the seed "<campaignID>:". It is equivalent to
// BucketSeed(strconv.FormatInt(campaignID, 10)+":", userKey) but does not
// allocate. JS clients only agree for ids up to 2^53, where their numbers
// stay exact.
func Bucket(campaignID int64, userKey string) int {
	h := newHasher()
	h.int64(campaignID)
	h.byte(':')
	h.string(userKey)
	return finish(h)
}

// BucketSeed returns the bucket 0..9999 for an arbitrary seed, i.e.
// (fnv1a32(String(fnv1a32(seed + userKey))) % 10000). It is the same function
// as the GrowthBook SDKs' v2 hash times 10000. seed and userKey are each
// decoded on their own, as two separate JS strings would have been.
func BucketSeed(seed, userKey string) int {
	h := newHasher()
	h.string(seed)
	h.string(userKey)
	return finish(h)
}

// Pick returns the index of the variant whose range [a, a+w/100) contains
// n = bucket/10000, with ranges laid out consecutively in the order given
// (callers sort by ascending variant id). Weights are percentages (0..100,
// normally with at most two decimals, summing to 100 ± 0.01).
//
// Boundaries are compared in integer units of 1/10000: the upper boundary of
// variant i is round(100 * sum of weights[0..i]). Rounding the running sum,
// rather than adding floats or rounding each weight, keeps 2-decimal weights
// exact and does not let per-weight rounding errors accumulate.
//
// Variants with a zero, negative or NaN weight own no range and are never
// picked. If bucket lies past the last boundary (weights summing to slightly
// under 100), the last variant with a positive weight is returned. Pick
// returns -1 when no weight is positive.
func Pick(bucket int, weights []float64) int {
	last := -1
	var sum float64
	for i, w := range weights {
		if !(w > 0) { // also rejects NaN
			continue
		}
		last = i
		sum += w
		// Compared as floats holding integers: exact, and well defined even
		// for an infinite weight, which int conversion would not be.
		if float64(bucket) < math.Round(sum*100) {
			return i
		}
	}
	return last
}

// HashV1 returns GrowthBook's hash version 1 of value under seed in
// thousandths: fnv1a32(value + seed) % 1000, so that n = HashV1/1000. Note
// the order, value before seed, unlike Bucket's. It does not allocate.
func HashV1(seed, value string) int {
	h := newHasher()
	h.string(value)
	h.string(seed)
	return int(uint32(h) % 1000)
}

// InNamespace reports whether userKey falls in the range [start, end) of
// the namespace id, as GrowthBook's inNamespace decides it:
// n = hashV1("__" + id, userKey), in when start <= n < end. n is compared
// as the same float64 quotient JavaScript computes, so the boundaries agree
// exactly. It does not allocate.
func InNamespace(id, userKey string, start, end float64) bool {
	h := newHasher()
	h.string(userKey)
	h.byte('_')
	h.byte('_')
	h.string(id)
	n := float64(uint32(h)%1000) / 1000
	return n >= start && n < end
}
