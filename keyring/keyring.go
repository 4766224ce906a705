// Package keyring encrypts webhook secrets at rest with AES-256-GCM. A Ring
// holds one or more 32-byte keys: the first seals, every one opens, so a key
// can be replaced while values sealed under the previous one are still
// being re-encrypted. It knows nothing of SQL or HTTP.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Prefix marks a sealed value, so sealed and plaintext values can live side
// by side and be told apart. A sealed value is
//
//	enc:v1:<key id>:<base64 of nonce | ciphertext | tag>
//
// where the key id (8 hex digits) names the key that sealed it.
const Prefix = "enc:v1:"

// KeySize is the length of a key in bytes (AES-256).
const KeySize = 32

// ErrUnknownKey is returned when a value was sealed under a key the ring
// does not hold.
var ErrUnknownKey = errors.New("sealed under a key that is not configured")

// Sealed reports whether s is a sealed value rather than plaintext.
func Sealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// Generate returns a fresh random key, base64-encoded, as Parse reads it.
func Generate() string {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k) // never fails (crypto/rand panics instead)
	return base64.StdEncoding.EncodeToString(k)
}

// Parse reads keys written as base64 (standard alphabet, padding optional),
// separated by newlines or commas; blank lines and lines starting with #
// are skipped. Each must decode to exactly KeySize bytes.
func Parse(text string) ([][]byte, error) {
	var keys [][]byte
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, f := range strings.Split(line, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			k, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(f, "="))
			if err != nil {
				return nil, fmt.Errorf("key %d: not base64", len(keys)+1)
			}
			if len(k) != KeySize {
				return nil, fmt.Errorf("key %d: %d bytes, want %d (generate one with `service secrets gen-key`)", len(keys)+1, len(k), KeySize)
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no key found")
	}
	return keys, nil
}

type key struct {
	id   string
	aead cipher.AEAD
}

func newKey(k []byte) (key, error) {
	if len(k) != KeySize {
		return key{}, fmt.Errorf("key is %d bytes, want %d", len(k), KeySize)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return key{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, err
	}
	return key{id: KeyID(k), aead: aead}, nil
}

// KeyID names a key in sealed values: the first four bytes of a hash of
// it, which tells keys apart without revealing anything usable.
func KeyID(k []byte) string {
	h := sha256.Sum256(append([]byte("service webhook secret key id\x00"), k...))
	return hex.EncodeToString(h[:4])
}

// Ring seals with its first key and opens with any of them. A Ring loaded
// from a file follows that file: a change is picked up within a second,
// and at once when a value names a key the ring does not hold, so a key
// rotated while the service runs is learnt without a restart. It is safe
// for concurrent use.
type Ring struct {
	mu   sync.RWMutex
	keys []key

	// Set by LoadFile. reload serialises looks at the file; checked (unix
	// nanoseconds) lets the common case skip it without taking a lock.
	path    string
	log     *slog.Logger
	reload  sync.Mutex
	checked atomic.Int64
	modTime time.Time
	size    int64
}

// New returns a ring of keys; the first seals.
func New(keys [][]byte) (*Ring, error) {
	ks, err := build(keys)
	if err != nil {
		return nil, err
	}
	return &Ring{keys: ks}, nil
}

func build(keys [][]byte) ([]key, error) {
	if len(keys) == 0 {
		return nil, errors.New("no key")
	}
	ks := make([]key, 0, len(keys))
	for _, k := range keys {
		kk, err := newKey(k)
		if err != nil {
			return nil, err
		}
		ks = append(ks, kk)
	}
	return ks, nil
}

// LoadFile returns a ring of the keys in the file at path (see Parse) that
// reloads them when the file changes. A change that does not parse is
// logged to log (when not nil) and the keys in use are kept.
func LoadFile(path string, log *slog.Logger) (*Ring, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ks, err := build(keys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &Ring{keys: ks, path: path, log: log, modTime: st.ModTime(), size: st.Size()}
	r.checked.Store(time.Now().UnixNano())
	return r, nil
}

// IDs lists the ids of the ring's keys, the sealing one first.
func (r *Ring) IDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.id
	}
	return ids
}

// refresh rereads the key file when it changed, looking at most once a
// second unless forced.
func (r *Ring) refresh(force bool) {
	if r.path == "" {
		return
	}
	now := time.Now()
	if !force && now.UnixNano()-r.checked.Load() < int64(time.Second) {
		return
	}
	r.reload.Lock()
	defer r.reload.Unlock()
	r.checked.Store(now.UnixNano())
	st, err := os.Stat(r.path)
	if err != nil || (st.ModTime().Equal(r.modTime) && st.Size() == r.size) {
		return
	}
	b, err := os.ReadFile(r.path)
	var ks []key
	if err == nil {
		var keys [][]byte
		if keys, err = Parse(string(b)); err == nil {
			ks, err = build(keys)
		}
	}
	if err != nil {
		// Possibly caught mid-write: the next look tries again.
		if r.log != nil {
			r.log.Warn("secret key file changed but does not parse; keeping the keys in use", "path", r.path, "err", err)
		}
		return
	}
	r.mu.Lock()
	r.keys = ks
	r.mu.Unlock()
	r.modTime, r.size = st.ModTime(), st.Size()
	if r.log != nil {
		r.log.Info("secret key file reloaded", "path", r.path, "keys", len(ks), "sealingKey", ks[0].id)
	}
}

// Seal encrypts plain under the ring's first key.
func (r *Ring) Seal(plain string) (string, error) {
	r.refresh(false)
	r.mu.RLock()
	k := r.keys[0]
	r.mu.RUnlock()
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	_, _ = rand.Read(nonce)
	// The prefix and key id are authenticated too, so a value cannot be
	// passed off under another version or key.
	sealed := k.aead.Seal(nonce, nonce, []byte(plain), []byte(Prefix+k.id))
	return Prefix + k.id + ":" + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// Open decrypts a sealed value. A value without Prefix is plaintext,
// stored before a key was configured, and is returned as it is.
func (r *Ring) Open(s string) (string, error) {
	if !Sealed(s) {
		return s, nil
	}
	id, body, ok := strings.Cut(s[len(Prefix):], ":")
	if !ok {
		return "", errors.New("malformed sealed value")
	}
	r.refresh(false)
	k, ok := r.find(id)
	if !ok {
		r.refresh(true)
		if k, ok = r.find(id); !ok {
			return "", fmt.Errorf("key %s: %w", id, ErrUnknownKey)
		}
	}
	raw, err := base64.RawStdEncoding.DecodeString(body)
	n := k.aead.NonceSize()
	if err != nil || len(raw) < n+k.aead.Overhead() {
		return "", errors.New("malformed sealed value")
	}
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(Prefix+id))
	if err != nil {
		return "", fmt.Errorf("key %s: value does not decrypt (altered?)", id)
	}
	return string(plain), nil
}

// SealedUnderFirst reports whether s is sealed under the ring's sealing
// key, so needs no re-encryption.
func (r *Ring) SealedUnderFirst(s string) bool {
	if !Sealed(s) {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return strings.HasPrefix(s[len(Prefix):], r.keys[0].id+":")
}

func (r *Ring) find(id string) (key, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, k := range r.keys {
		if k.id == id {
			return k, true
		}
	}
	return key{}, false
}
