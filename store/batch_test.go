package store

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// TestBatcherGathersUnderOneThread: with one scheduler thread, a channel
// send runs the woken batcher next, which used to commit each request
// alone. 64 concurrent writers must now share commits: on average at least
// four requests per commit (in practice about thirty), and every write is
// stored.
func TestBatcherGathersUnderOneThread(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	const writers, each = 64, 10
	c0, o0 := db.batch.stats()
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", UserID: fmt.Sprintf("u%d-%d", w, i)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c1, o1 := db.batch.stats()
	commits, ops := c1-c0, o1-o0
	if ops != writers*each {
		t.Fatalf("%d operations went through the batcher, want %d", ops, writers*each)
	}
	if commits*4 > ops {
		t.Fatalf("%d commits for %d writes: %.1f per commit, want at least 4", commits, ops, float64(ops)/float64(commits))
	}
	if got := countRows(t, db, `SELECT count(*) FROM events WHERE app_id = ?`, app); got != writers*each {
		t.Fatalf("%d events stored, want %d", got, writers*each)
	}
}
