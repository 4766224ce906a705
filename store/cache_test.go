package store

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

func TestUserCache(t *testing.T) {
	c := newUserCache(4, new(atomic.Uint64))
	k := userKey{scope: 7, kind: 'u', user: "alice"}
	if _, ok := c.get(k); ok {
		t.Fatal("an empty cache has alice")
	}
	c.put(k, 11, 0)
	c.put(userKey{7, 's', "alice"}, 12, 0)
	c.put(userKey{8, 'u', "alice"}, 13, 0)
	c.put(userKey{7, 'u', "alicf"}, 14, 0)
	for _, tc := range []struct {
		k    userKey
		want int64
		ok   bool
	}{
		{k, 11, true},
		{userKey{7, 's', "alice"}, 12, true},
		{userKey{8, 'u', "alice"}, 13, true},
		{userKey{7, 'u', "alicf"}, 14, true},
		{userKey{9, 'u', "alice"}, 0, false},
		{userKey{7, 'u', "alic"}, 0, false},
		{userKey{7, 'u', ""}, 0, false},
	} {
		if v, ok := c.get(tc.k); v != tc.want || ok != tc.ok {
			t.Errorf("get(%v) = %d, %v; want %d, %v", tc.k, v, ok, tc.want, tc.ok)
		}
	}
	// A second put of a key replaces its value in place.
	_, s := c.shard(k)
	n := len(s.ents)
	c.put(k, 21, 0)
	if v, _ := c.get(k); v != 21 || len(s.ents) != n {
		t.Fatalf("after a second put: %d with %d entries; want 21 with %d", v, len(s.ents), n)
	}
}

// TestUserCacheSameHash: a key whose hash slot holds another key is a
// miss, never the other key's value, and taking the slot keeps both exact.
func TestUserCacheSameHash(t *testing.T) {
	c := newUserCache(8, new(atomic.Uint64))
	a, b := userKey{1, 'u', "a"}, userKey{1, 'u', "b"}
	c.put(a, 100, 0)
	// Make b's hash point at a's entry, as a collision would.
	hb, sb := c.shard(b)
	ha, sa := c.shard(a)
	if sa != sb {
		// Put a into b's shard under b's hash: the same situation.
		sb.slots[hb] = uint32(len(sb.ents))
		sb.ents = append(sb.ents, userEntry{scope: 1, val: 100, off: uint32(len(sb.ids)), n: 1, kind: 'u'})
		sb.ids = append(sb.ids, 'a')
	} else {
		sb.slots[hb] = sb.slots[ha]
	}
	if v, ok := c.get(b); ok {
		t.Fatalf("b found with a's value %d", v)
	}
	c.put(b, 200, 0)
	if v, ok := c.get(b); !ok || v != 200 {
		t.Fatalf("get(b) = %d, %v; want 200", v, ok)
	}
	if v, ok := c.get(a); !ok || v != 100 {
		t.Fatalf("get(a) = %d, %v; want 100", v, ok)
	}
}

// TestUserCacheBounded: a shard starts over when it holds limit entries,
// or when its ids outgrow 64 bytes an entry, so memory stays bounded
// however many users pass through.
func TestUserCacheBounded(t *testing.T) {
	const limit = 16
	for _, idLen := range []int{8, 256} {
		c := newUserCache(limit, new(atomic.Uint64))
		for i := range 100_000 {
			u := fmt.Sprintf("%0*d", idLen, i)
			c.put(userKey{1, 'u', u}, int64(i), 0)
			if v, ok := c.get(userKey{1, 'u', u}); !ok || v != int64(i) {
				t.Fatalf("ids of %d bytes: user %d not found right after its put", idLen, i)
			}
		}
		entries := 0
		for i := range c.shards {
			s := &c.shards[i]
			entries += len(s.ents)
			if len(s.ents) > limit || len(s.slots) > limit || len(s.ids) > limit*64 {
				t.Fatalf("ids of %d bytes: a shard holds %d entries, %d slots, %d id bytes; limit %d entries, %d bytes",
					idLen, len(s.ents), len(s.slots), len(s.ids), limit, limit*64)
			}
		}
		if entries == 0 {
			t.Fatalf("ids of %d bytes: the cache kept nothing", idLen)
		}
	}
}

// TestUserCacheGrowsAsItFills: an empty cache takes next to no memory,
// whatever its bound; its shards grow as users come.
func TestUserCacheGrowsAsItFills(t *testing.T) {
	allocated := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.TotalAlloc
	}
	empty := leastGrowth(allocated, func() any { return newUserCache(1<<10, new(atomic.Uint64)) })
	full := leastGrowth(allocated, func() any {
		c := newUserCache(1<<10, new(atomic.Uint64))
		for i := range 64 << 10 {
			c.put(userKey{1, 'u', fmt.Sprint("user-", i)}, int64(i), 0)
		}
		return c
	})
	if empty > 64<<10 || full < 16*empty {
		t.Fatalf("an empty cache of 65,536 users allocated %d bytes, a full one %d; want under 64 KiB empty", empty, full)
	}
}

// leastGrowth is the least that stat grows over three runs of build, whose
// result is kept alive until stat is read: another test's goroutine may
// allocate, or hold objects, during one of them.
func leastGrowth(stat func() uint64, build func() any) int64 {
	least := int64(1 << 62)
	for range 3 {
		before := stat()
		v := build()
		least = min(least, int64(stat())-int64(before))
		runtime.KeepAlive(v)
	}
	return least
}

// TestUserCacheHoldsNoPointers: a full cache is a handful of heap
// objects, not one per user, so garbage collections do not mark it.
func TestUserCacheHoldsNoPointers(t *testing.T) {
	objects := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapObjects
	}
	grown := leastGrowth(objects, func() any {
		c := newUserCache(1<<10, new(atomic.Uint64))
		for i := range 64 << 10 {
			c.put(userKey{1, 'u', "user-" + strings.Repeat("x", i%8) + fmt.Sprint(i)}, int64(i), 0)
		}
		return c
	})
	if grown > 5000 {
		t.Fatalf("a cache of 65,536 users is %d heap objects; want a few per shard", grown)
	}
}
