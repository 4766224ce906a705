package store

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestBatcherGathersUnderOneThread: with one scheduler thread, a channel
// send runs the woken batcher next, which used to commit each request
// alone. 64 writers released together must share commits: on average at
// least sixteen requests per commit (in practice all 64 in one, now and
// then two), and every write is stored.
//
// The writers start each round together rather than looping freely: in a
// free loop on PostgreSQL, how many come back while a commit waits on the
// server depends on how the machine schedules both processes, and one
// run of make test beside other packages' tests saw 3.0 a commit. Released
// together, they are all runnable when the first one wakes the batcher,
// whatever the engine and the machine's load.
func TestBatcherGathersUnderOneThread(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx := context.Background()
	// The app's campaigns in memory before the rounds, as on a running
	// server: a writer that read them from the database would come late.
	if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", UserID: "warm"}); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 64, 10
	c0, o0 := db.batch.stats()
	errs := make(chan error, writers*rounds)
	for r := range rounds {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "view", UserID: fmt.Sprintf("u%d-%d", w, r)}); err != nil {
					errs <- err
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c1, o1 := db.batch.stats()
	commits, ops := c1-c0, o1-o0
	if ops != writers*rounds {
		t.Fatalf("%d operations went through the batcher, want %d", ops, writers*rounds)
	}
	t.Logf("%d commits for %d writes: %.1f per commit", commits, ops, float64(ops)/float64(commits))
	if commits*16 > ops {
		t.Fatalf("%d commits for %d writes: %.1f per commit, want at least 16", commits, ops, float64(ops)/float64(commits))
	}
	if got := countRows(t, db, `SELECT count(*) FROM events WHERE app_id = ?`, app); got != writers*rounds+1 {
		t.Fatalf("%d events stored, want %d", got, writers*rounds+1)
	}
}

// TestFirstAssignmentsShareACommit drives several operations through one
// transaction, as a group commit does, now that first assignments are
// written together at the commit: each request is still answered as if
// its row had been written on the spot.
func TestFirstAssignmentsShareACommit(t *testing.T) {
	ctx := context.Background()
	e := newCampaignTestEnv(t)
	id := e.create(nil, campaignTestAt(24*time.Hour), "draft")
	goal := json.RawMessage(`"buy"`)
	if _, err := e.db.UpdateCampaign(ctx, e.app, id, CampaignInput{GoalEventID: goal}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetCampaignStatus(ctx, e.app, id, "active"); err != nil {
		t.Fatal(err)
	}
	lc, err := e.db.liveCampaign(ctx, e.app, id)
	if err != nil {
		t.Fatal(err)
	}
	impressions := func() int64 {
		return countRows(t, e.db, `SELECT coalesce(sum(impressions), 0) FROM campaign_variants WHERE campaign_id = ?`, id)
	}
	// assignAll runs one assign per user in a single transaction.
	assignAll := func(users ...string) []assignOutcome {
		t.Helper()
		outs := make([]assignOutcome, len(users))
		err := e.db.withTx(ctx, func(tx *Tx) error {
			for i, u := range users {
				if err := tx.assign(lc, &VariantRequest{UserID: u}, 'u', u, &outs[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return outs
	}
	stored := func(u string) int64 {
		return countRows(t, e.db, `SELECT variant_id FROM assignments WHERE campaign_id = ? AND user_key = ?`, id, storedKey('u', u))
	}

	t.Run("SameUserTwice", func(t *testing.T) {
		before := impressions()
		outs := assignAll("twice", "twice")
		if outs[0].variantID == 0 || outs[1].variantID != outs[0].variantID || outs[0].variantID != stored("twice") {
			t.Fatalf("outcomes %+v, stored %d: want one variant for both", outs, stored("twice"))
		}
		if !outs[0].recorded || outs[1].recorded || impressions() != before+1 {
			t.Fatalf("outcomes %+v, impressions +%d: want one impression, recorded by the first", outs, impressions()-before)
		}
	})
	t.Run("StoredUserBesideNewOnes", func(t *testing.T) {
		// A returning user the cache forgot shares a statement with new
		// users: answered what is stored, without an impression.
		assignAll("back")
		if _, err := e.db.write.Exec(`UPDATE assignments SET variant_id = ? WHERE campaign_id = ? AND user_key = ?`,
			lc.variants[1].id, id, storedKey('u', "back")); err != nil {
			t.Fatal(err) // a variant other than the hash's, as after a weight change
		}
		before := impressions()
		outs := assignAll("new-1", "back", "new-2")
		if outs[1].variantID != lc.variants[1].id || outs[1].recorded {
			t.Fatalf("returning user: %+v, want stored variant %d, not recorded", outs[1], lc.variants[1].id)
		}
		for _, i := range []int{0, 2} {
			if !outs[i].recorded || outs[i].variantID == 0 {
				t.Fatalf("new user %d: %+v, want recorded", i, outs[i])
			}
		}
		if got := impressions() - before; got != 2 {
			t.Fatalf("impressions +%d, want 2", got)
		}
	})
	t.Run("StoredUserInALaterStatement", func(t *testing.T) {
		// Seventy users take three statements; the stored one sits in the
		// last, after two statements' rows already went in.
		assignAll("back-late")
		users := make([]string, 70)
		for i := range users {
			users[i] = fmt.Sprint("many-", i)
		}
		users[66] = "back-late"
		before := impressions()
		outs := assignAll(users...)
		for i, out := range outs {
			if want := i != 66; out.recorded != want || out.variantID == 0 {
				t.Fatalf("user %d (%s): %+v, want recorded %v", i, users[i], out, want)
			}
		}
		if got := impressions() - before; got != 69 {
			t.Fatalf("impressions +%d, want 69", got)
		}
		if n := countRows(t, e.db, `SELECT count(*) FROM assignments WHERE campaign_id = ? AND user_key LIKE 'u:many-%'`, id); n != 69 {
			t.Fatalf("%d assignments stored for the new users, want 69", n)
		}
	})
	t.Run("GoalAfterFirstImpressionInTheSameCommit", func(t *testing.T) {
		var out assignOutcome
		var res EventResult
		err := e.db.withTx(ctx, func(tx *Tx) error {
			if err := tx.assign(lc, &VariantRequest{UserID: "quick"}, 'u', "quick", &out); err != nil {
				return err
			}
			return tx.logEvent(e.app, &EventInput{EventID: "buy", UserID: "quick"}, []*liveCampaign{lc}, nil, &res)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !out.recorded {
			t.Fatalf("outcome %+v, want recorded", out)
		}
		if n := countRows(t, e.db, `SELECT count(*) FROM assignments WHERE campaign_id = ? AND user_key = ? AND converted_at IS NOT NULL`, id, storedKey('u', "quick")); n != 1 {
			t.Fatalf("conversion not counted for a goal in the first impression's commit")
		}
	})
}
