package dashboard

import (
	"html/template"
	"io"
	"runtime"
	"testing"
)

// heapObjects is the number of live heap objects after a full collection.
func heapObjects() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapObjects
}

// TestPagesAreNotKeptLive: the parsed pages must not stay on the heap once
// rendered, or every garbage collection marks them again (40,000 objects,
// about 6% of the SDK routes' throughput under load).
func TestPagesAreNotKeptLive(t *testing.T) {
	// The fewest objects kept over three tries: an unrelated goroutine
	// left by another test may hold a few objects during one of them.
	kept, parsed := int64(1<<62), 0
	for range 3 {
		before := heapObjects()
		ps := parsePages()
		for name, pool := range ps {
			tmpl := pool.Get().(*template.Template)
			// Pages need their own data, so this stops at a page's first
			// missing field; it escapes the set all the same, as a
			// render does.
			_ = tmpl.ExecuteTemplate(io.Discard, "layout", &view{Title: name, Errors: map[string]string{}})
			pool.Put(tmpl)
		}
		// A pooled value survives one collection (in the victim cache)
		// and is dropped by the next.
		runtime.GC()
		after := heapObjects()
		runtime.KeepAlive(ps)
		kept, parsed = min(kept, int64(after)-int64(before)), len(ps)
	}
	if kept > 2000 {
		t.Fatalf("the parsed pages keep %d heap objects alive; want them dropped after renders", kept)
	}
	if parsed < 20 {
		t.Fatalf("%d pages parsed; the dashboard has more than 20", parsed)
	}
}

// TestPagesParse: every page parses with the layout and the partials, and
// a page taken from its pool twice is usable both times.
func TestPagesParse(t *testing.T) {
	for name, pool := range parsePages() {
		for range 2 {
			tmpl, ok := pool.Get().(*template.Template)
			if !ok || tmpl.Lookup("layout") == nil || tmpl.Lookup("content") == nil {
				t.Fatalf("page %s: no layout or content template", name)
			}
			pool.Put(tmpl)
		}
	}
}
