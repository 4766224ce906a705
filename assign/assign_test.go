package assign

import (
	"math"
	"strconv"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"service/internal/fixture"
)

// bucketVectors are the shared hash vectors of testdata/assign_buckets.json.
type bucketVectors struct {
	About  string `json:"about"`
	Seeded []struct {
		Seed, User string
		Bucket     int
	} `json:"seeded"`
	Campaigns []struct {
		Campaign int64
		User     string
		Bucket   int
	} `json:"campaigns"`
}

func loadBucketVectors(t *testing.T) bucketVectors {
	var v bucketVectors
	fixture.JSON(t, "assign_buckets.json", &v)
	if len(v.Seeded) == 0 || len(v.Campaigns) == 0 {
		t.Fatal("assign_buckets.json has no vectors")
	}
	return v
}

func TestBucketSeedVectors(t *testing.T) {
	for _, tt := range loadBucketVectors(t).Seeded {
		if got, want := BucketSeed(tt.Seed, tt.User), tt.Bucket; got != want {
			t.Errorf("BucketSeed(%q, %q) = %d, want %d", tt.Seed, tt.User, got, want)
		}
	}
}

func TestBucketVectors(t *testing.T) {
	for _, tt := range loadBucketVectors(t).Campaigns {
		if got, want := Bucket(tt.Campaign, tt.User), tt.Bucket; got != want {
			t.Errorf("Bucket(%d, %q) = %d, want %d", tt.Campaign, tt.User, got, want)
		}
	}
}

// Bucket must be exactly BucketSeed with the formatted campaign seed.
func TestBucketMatchesBucketSeed(t *testing.T) {
	ids := []int64{0, 1, 9, 10, 99, 100, 4294967295, 4294967296, -1, -10, math.MaxInt64, math.MinInt64}
	keys := []string{"", "user-1", "ünï", "😀", "a\xffb"}
	for _, id := range ids {
		for _, k := range keys {
			seed := strconv.FormatInt(id, 10) + ":"
			if got, want := Bucket(id, k), BucketSeed(seed, k); got != want {
				t.Errorf("Bucket(%d, %q) = %d, want BucketSeed(%q, %q) = %d", id, k, got, seed, k, want)
			}
		}
	}
}

func TestFNV1a32(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
	}{
		{"", 2166136261},
		{"a", 3826002220},
		{"\ufffd", 2007932456},
		{"😀", 3409036472},
		{"1:user-1", 3844452955},
		{"seeda", 717764279},
	}
	for _, tt := range tests {
		if got, want := FNV1a32(tt.in), tt.want; got != want {
			t.Errorf("FNV1a32(%q) = %d, want %d", tt.in, got, want)
		}
	}
}

// A non-BMP character is two UTF-16 code units, each XORed in whole.
func TestFNV1a32SurrogatePair(t *testing.T) {
	h := uint32(2166136261)
	for _, u := range []uint32{0xD83D, 0xDE00} {
		h ^= u
		h *= 16777619
	}
	if got, want := FNV1a32("😀"), h; got != want {
		t.Errorf("FNV1a32(\"😀\") = %d, want %d", got, want)
	}
}

// Invalid UTF-8 must hash like the string JavaScript's TextDecoder produces
// (one U+FFFD per maximal subpart). Expected values and decoded lengths come
// from node: new TextDecoder().decode(Buffer.from(hex, "hex")).
func TestFNV1a32InvalidUTF8(t *testing.T) {
	tests := []struct {
		in    string
		units int // decoded JS string length, for the reader
		want  uint32
	}{
		{"\xff", 1, 2007932456},
		{"a\xffb", 3, 3108391347},
		{"\xe6\x97", 1, 2007932456},     // truncated 3-byte sequence: one U+FFFD (Go would give two)
		{"\xf0\x9f\x98", 1, 2007932456}, // truncated emoji
		{"\xf0\x9f\x98x", 2, 3085121520},
		{"\xe6\x97\xe6\x97", 2, 1015284303},
		{"\xed\xa0\x80", 3, 4149960502}, // encoded surrogate
		{"\xc0\xaf", 2, 1015284303},     // overlong
		{"\xe0\x80\xaf", 3, 4149960502}, // overlong
		{"\xf4\x90\x80\x80", 4, 809377681},
		{"\x80\xbf", 2, 1015284303},
		{"\xc3", 1, 2007932456},
	}
	for _, tt := range tests {
		if got, want := FNV1a32(tt.in), tt.want; got != want {
			t.Errorf("FNV1a32(%q) = %d, want %d (JS sees %d code units)", tt.in, got, want, tt.units)
		}
	}
}

// reference hashes the UTF-16 encoding of a valid UTF-8 string the slow way.
func reference(s string) uint32 {
	h := uint32(2166136261)
	for _, u := range utf16.Encode([]rune(s)) {
		h ^= uint32(u)
		h *= 16777619
	}
	return h
}

func FuzzFNV1a32(f *testing.F) {
	for _, s := range []string{"", "a", "ünï", "😀", "日本語", "\u07ff\u0800\uffff\U00010000\U0010ffff", "\xff\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // the reference uses Go's decoding, which differs from JS for invalid input
		}
		if got, want := FNV1a32(s), reference(s); got != want {
			t.Errorf("FNV1a32(%q) = %d, want %d", s, got, want)
		}
	})
}

func TestDistribution(t *testing.T) {
	const users = 100000
	buckets := make([]int, users)
	for i := range buckets {
		buckets[i] = Bucket(1, "user-"+strconv.Itoa(i))
	}
	for _, weights := range [][]float64{
		{50, 30, 20},
		{33.33, 33.33, 33.34},
		{10, 90},
	} {
		counts := make([]int, len(weights))
		for _, b := range buckets {
			counts[Pick(b, weights)]++
		}
		for i, w := range weights {
			share := float64(counts[i]) / users * 100
			if got, want := math.Abs(share-w) < 1, true; got != want {
				t.Errorf("weights %v: variant %d got %.3f%%, want within 1 point of %v", weights, i, share, w)
			}
		}
	}
}

func TestPick(t *testing.T) {
	tests := []struct {
		name    string
		bucket  int
		weights []float64
		want    int
	}{
		{"zero weight first, bucket 0", 0, []float64{0, 100}, 1},
		{"zero weight first, bucket 9999", 9999, []float64{0, 100}, 1},
		{"boundary belongs to next", 5000, []float64{50, 50}, 1},
		{"just below boundary", 4999, []float64{50, 50}, 0},
		{"bucket 0", 0, []float64{50, 50}, 0},
		{"last bucket", 9999, []float64{50, 30, 20}, 2},
		{"last bucket, trailing zero", 9999, []float64{50, 50, 0}, 1},
		{"sum short of 100", 9999, []float64{33.33, 33.33, 33.33}, 2},
		{"sum short of 100, trailing zero", 9999, []float64{50, 49.99, 0}, 1},
		{"two-decimal boundary", 3333, []float64{33.33, 33.33, 33.34}, 1},
		{"two-decimal boundary below", 3332, []float64{33.33, 33.33, 33.34}, 0},
		{"second boundary", 6666, []float64{33.33, 33.33, 33.34}, 2},
		{"float drift 0.1+0.2", 3000, []float64{10, 20, 70}, 2},
		{"float drift 0.1+0.2 below", 2999, []float64{10, 20, 70}, 1},
		{"middle zero skipped", 5000, []float64{50, 0, 50}, 2},
		{"negative and NaN skipped", 0, []float64{-10, math.NaN(), 100}, 2},
		{"all zero", 0, []float64{0, 0}, -1},
		{"empty", 0, nil, -1},
	}
	for _, tt := range tests {
		if got, want := Pick(tt.bucket, tt.weights), tt.want; got != want {
			t.Errorf("%s: Pick(%d, %v) = %d, want %d", tt.name, tt.bucket, tt.weights, got, want)
		}
	}
}

// Zero-weight variants must never be picked for any bucket.
func TestPickNeverZeroWeight(t *testing.T) {
	for _, weights := range [][]float64{{0, 100}, {100, 0}, {50, 0, 50}, {0, 33.33, 0, 66.66, 0}} {
		for b := range Buckets {
			i := Pick(b, weights)
			if got, want := weights[i] > 0, true; got != want {
				t.Fatalf("Pick(%d, %v) = %d, a zero-weight variant", b, weights, i)
			}
		}
	}
}

func TestNoAllocs(t *testing.T) {
	weights := []float64{33.33, 33.33, 33.34}
	allocs := testing.AllocsPerRun(100, func() {
		Pick(Bucket(math.MinInt64, "user-12345-ünï-😀-\xe6\x97"), weights)
		BucketSeed("seed", "a")
	})
	if got, want := allocs, 0.0; got != want {
		t.Errorf("allocs per run = %v, want %v", got, want)
	}
}

var sink int

func BenchmarkBucket(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sink = Bucket(123456, "user-1234567")
	}
}

func BenchmarkBucketAndPick(b *testing.B) {
	weights := []float64{33.33, 33.33, 33.34}
	b.ReportAllocs()
	for b.Loop() {
		sink = Pick(Bucket(123456, "user-1234567"), weights)
	}
}

// namespaceVectors are the vectors of testdata/namespace_vectors.json,
// taken from GrowthBook's code.
type namespaceVectors struct {
	About      string `json:"about"`
	GrowthBook []struct {
		User      string `json:"user"`
		Namespace [3]any `json:"namespace"`
		In        bool   `json:"in"`
	} `json:"growthbook"`
	Computed []struct {
		Namespace string  `json:"namespace"`
		User      string  `json:"user"`
		N         float64 `json:"n"`
	} `json:"computed"`
}

func TestInNamespaceGrowthBookCases(t *testing.T) {
	var v namespaceVectors
	fixture.JSON(t, "namespace_vectors.json", &v)
	if len(v.GrowthBook) == 0 || len(v.Computed) == 0 {
		t.Fatal("namespace_vectors.json has no vectors")
	}
	for _, tt := range v.GrowthBook {
		id, start, end := tt.Namespace[0].(string), tt.Namespace[1].(float64), tt.Namespace[2].(float64)
		if got := InNamespace(id, tt.User, start, end); got != tt.In {
			t.Errorf("InNamespace(%q, %q, %g, %g) = %v, want %v", id, tt.User, start, end, got, tt.In)
		}
	}
}

func TestHashV1Vectors(t *testing.T) {
	var v namespaceVectors
	fixture.JSON(t, "namespace_vectors.json", &v)
	for _, tt := range v.Computed {
		got := float64(HashV1("__"+tt.Namespace, tt.User)) / 1000
		if got != tt.N {
			t.Errorf("hashV1(%q, %q) = %g, want %g", "__"+tt.Namespace, tt.User, got, tt.N)
		}
		// The range boundaries are half-open: n itself is in [n, 1), not
		// in [0, n).
		if !InNamespace(tt.Namespace, tt.User, tt.N, 1) || InNamespace(tt.Namespace, tt.User, 0, tt.N) {
			t.Errorf("InNamespace(%q, %q) at its own boundary %g: want in [n, 1) and not in [0, n)", tt.Namespace, tt.User, tt.N)
		}
	}
}

func TestInNamespaceDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { InNamespace("checkout", "user-ünï-😀", 0, 0.5) }); n != 0 {
		t.Fatalf("InNamespace allocates %v times", n)
	}
}
