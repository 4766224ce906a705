package keyring

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustKey(t *testing.T) []byte {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(Generate())
	if err != nil || len(k) != KeySize {
		t.Fatalf("Generate: %v, %d bytes", err, len(k))
	}
	return k
}

func mustRing(t *testing.T, keys ...[]byte) *Ring {
	t.Helper()
	r, err := New(keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSealOpenRoundTrip(t *testing.T) {
	r := mustRing(t, mustKey(t))
	for _, plain := range []string{"s", "whsec_0123456789", strings.Repeat("é", 256), "enc:v1:looks sealed"} {
		s, err := r.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		if !Sealed(s) || (len(plain) > 4 && strings.Contains(s, plain)) {
			t.Fatalf("Seal(%q)=%q", plain, s)
		}
		again, _ := r.Seal(plain)
		if again == s {
			t.Fatalf("two seals of %q are equal: the nonce is not fresh", plain)
		}
		got, err := r.Open(s)
		if err != nil || got != plain {
			t.Fatalf("Open=%q, %v, want %q", got, err, plain)
		}
	}
	if got, err := r.Open("plain secret"); err != nil || got != "plain secret" {
		t.Fatalf("plaintext passes through: %q, %v", got, err)
	}
}

func TestOpenRefusals(t *testing.T) {
	k1, k2 := mustKey(t), mustKey(t)
	r1, r2 := mustRing(t, k1), mustRing(t, k2)
	s, _ := r1.Seal("secret")
	if _, err := r2.Open(s); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("other key: %v, want ErrUnknownKey", err)
	}
	id, body, _ := strings.Cut(strings.TrimPrefix(s, Prefix), ":")
	raw, _ := base64.RawStdEncoding.DecodeString(body)
	raw[len(raw)-1] ^= 1
	for name, v := range map[string]string{
		"Tampered":  Prefix + id + ":" + base64.RawStdEncoding.EncodeToString(raw),
		"No key id": Prefix + body,
		"Short":     Prefix + id + ":AAAA",
		"Not b64":   Prefix + id + ":!!!",
		// The key id is authenticated: relabelling a value fails.
		"Relabelled": Prefix + KeyID(k2) + ":" + body,
	} {
		r := mustRing(t, k1, k2)
		if got, err := r.Open(v); err == nil {
			t.Errorf("%s: Open=%q, want an error", name, got)
		}
	}
}

func TestRingSealsWithFirstOpensWithAll(t *testing.T) {
	old, cur := mustKey(t), mustKey(t)
	sOld, _ := mustRing(t, old).Seal("a")
	r := mustRing(t, cur, old)
	if got, err := r.Open(sOld); err != nil || got != "a" {
		t.Fatalf("Open under the second key=%q, %v", got, err)
	}
	if r.SealedUnderFirst(sOld) {
		t.Fatal("a value under the old key counts as sealed under the first")
	}
	s, _ := r.Seal("b")
	if !r.SealedUnderFirst(s) || !strings.HasPrefix(s, Prefix+KeyID(cur)+":") {
		t.Fatalf("Seal=%q, want under %s", s, KeyID(cur))
	}
	if got := r.IDs(); len(got) != 2 || got[0] != KeyID(cur) || got[1] != KeyID(old) {
		t.Fatalf("IDs=%v", got)
	}
}

func TestParse(t *testing.T) {
	k1, k2 := Generate(), Generate()
	for _, tc := range []struct {
		name, text string
		n          int
		err        string
	}{
		{"One", k1 + "\n", 1, ""},
		{"Unpadded", strings.TrimRight(k1, "="), 1, ""},
		{"Lines and comments", "# current\n" + k1 + "\n\n# previous\n" + k2 + "\n", 2, ""},
		{"Commas", k1 + "," + k2, 2, ""},
		{"Empty", "\n# nothing\n", 0, "no key found"},
		{"Short", base64.StdEncoding.EncodeToString(make([]byte, 16)), 0, "16 bytes, want 32"},
		{"Garbage", "not*base64", 0, "not base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := Parse(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err=%v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(keys) != tc.n {
				t.Fatalf("Parse: %d keys, %v; want %d", len(keys), err, tc.n)
			}
		})
	}
}

// TestLoadFileFollowsChanges: a value sealed under a key added to the file
// after the ring was loaded opens at once, without waiting for the
// once-a-second look.
func TestLoadFileFollowsChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	old, cur := Generate(), Generate()
	if err := os.WriteFile(path, []byte(old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := LoadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	curKey, _ := base64.StdEncoding.DecodeString(cur)
	s, _ := mustRing(t, curKey).Seal("rotated")
	if _, err := r.Open(s); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("before the file changed: %v", err)
	}
	if err := os.WriteFile(path, []byte(cur+"\n"+old+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Open(s); err != nil || got != "rotated" {
		t.Fatalf("after the file changed: %q, %v", got, err)
	}
	// The new first key seals, once the once-a-second look has run.
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _ := r.Seal("x")
		if strings.HasPrefix(v, Prefix+KeyID(curKey)+":") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new first key never sealed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A change that does not parse keeps the keys in use.
	if err := os.WriteFile(path, []byte("half-writ"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Open(s); err != nil || got != "rotated" {
		t.Fatalf("after a bad change: %q, %v", got, err)
	}
}

func TestRingConcurrentUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(path, []byte(Generate()), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := LoadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 200 {
				s, err := r.Seal("v")
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := r.Open(s); err != nil || got != "v" {
					t.Errorf("worker %d: %q, %v", i, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
