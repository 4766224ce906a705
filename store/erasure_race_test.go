package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"
)

// TestEraseRacesEvents erases a user again and again while the user keeps
// asking for a variant and logging events (one request after the other,
// as a page does), in one process and across two processes on the same
// database. However the erasures fall between the requests, nothing of
// an erased life is left beside a later one:
//   - the events left are exactly those logged after the last erasure (a
//     suffix of the user's requests), and every event is either left or
//     counted by exactly one erasure;
//   - an assignment left that converted has a purchase left from its own
//     life, at or after it (no conversion of an erased purchase);
//   - in one process, a user with events left has a profile again.
func TestEraseRacesEvents(t *testing.T) {
	for _, tc := range []struct {
		name string
		two  bool
	}{{"OneProcess", false}, {"TwoProcesses", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, path := mustOpenDBPath(t)
			eraser := db
			if tc.two {
				eraser = mustOpenDBAt(t, path)
			}
			app, err := db.CreateApp(ctx, "race", "enterprise", 0)
			if err != nil {
				t.Fatal(err)
			}
			var vs []VariantInput
			for i := range 2 {
				name, pub := fmt.Sprint("Block ", i), ContentPublished
				cv, err := db.CreateContent(ctx, app.ID, ContentInput{Name: &name, Status: &pub})
				if err != nil {
					t.Fatal(err)
				}
				vs = append(vs, VariantInput{ContentViewID: &cv.ID})
			}
			name, active := "Race", CampaignActive
			end, _ := json.Marshal(time.Now().Add(time.Hour).Format(time.RFC3339))
			c, err := db.CreateCampaign(ctx, app.ID, 0, CampaignInput{Name: &name, Status: &active, EndDate: end,
				GoalEventID: json.RawMessage(`"buy"`), Variants: &vs})
			if err != nil {
				t.Fatal(err)
			}

			const n, erasures = 240, 6
			user := "racer"
			progress := make(chan int, 8)
			var erased int64
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				next := n / (erasures + 1)
				for step := range progress {
					if step < next {
						continue
					}
					next += n / (erasures + 1)
					e, err := eraser.EraseUser(ctx, app.ID, user)
					if err != nil {
						t.Error(err)
						return
					}
					erased += e.Events
				}
			}()
			for i := range n {
				if _, err := db.Variant(ctx, app.ID, c.ID, &VariantRequest{UserID: user}, nil); err != nil {
					t.Fatal(err)
				}
				id := "view"
				if i%4 == 3 {
					id = "buy"
				}
				if _, err := db.LogEvent(ctx, app.ID, &EventInput{EventID: id, UserID: user, Metadata: json.RawMessage(fmt.Sprintf(`{"seq":%d}`, i))}); err != nil {
					t.Fatal(err)
				}
				progress <- i
			}
			close(progress)
			wg.Wait()

			rows, err := db.read.Query(`SELECT metadata, event_id, ts FROM events WHERE app_id = ? AND user_id = ?`, app.ID, user)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int
			var buys []int64
			for rows.Next() {
				var meta, event string
				var ts int64
				if err := rows.Scan(&meta, &event, &ts); err != nil {
					t.Fatal(err)
				}
				var m struct{ Seq int }
				if err := json.Unmarshal([]byte(meta), &m); err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, m.Seq)
				if event == "buy" {
					buys = append(buys, ts)
				}
			}
			rows.Close()
			sort.Ints(seqs)
			for i, s := range seqs {
				if s != n-len(seqs)+i {
					t.Fatalf("events left %v: not the requests after the last erasure", seqs)
				}
			}
			if erased+int64(len(seqs)) != n {
				t.Fatalf("%d events erased and %d left, of %d logged", erased, len(seqs), n)
			}

			var assignedAt int64
			var convertedAt *int64
			err = db.read.QueryRow(`SELECT assigned_at, converted_at FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, storedKey('u', user)).Scan(&assignedAt, &convertedAt)
			if err == nil && convertedAt != nil {
				ok := false
				for _, ts := range buys {
					ok = ok || ts >= assignedAt && ts <= *convertedAt
				}
				if !ok {
					t.Fatalf("the assignment left converted at %d without a purchase left in its life (%v)", *convertedAt, buys)
				}
			}
			if !tc.two && len(seqs) > 0 {
				if _, err := db.FindUserByID(ctx, app.ID, user); err != nil {
					t.Fatalf("%d events left without a profile: %v", len(seqs), err)
				}
			}
			t.Logf("%d events left of %d, %d erased", len(seqs), n, erased)
		})
	}
}

// TestEraseWaitsForWritesInFlight: a write of the user's that another
// connection (another process) has begun when the erasure starts is
// either erased with the rest or committed after it, never left behind
// by an erasure that committed after it: the erasure waits for it, on
// SQLite for the file's write lock, on PostgreSQL for its table lock.
func TestEraseWaitsForWritesInFlight(t *testing.T) {
	ctx := context.Background()
	db, path := mustOpenDBPath(t)
	app, err := db.CreateApp(ctx, "inflight", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	user := "in-flight"
	if _, err := db.LogEvent(ctx, app.ID, &EventInput{EventID: "view", UserID: user}); err != nil {
		t.Fatal(err)
	}
	raw, err := OpenSQL(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO events (app_id, event_id, user_id, ts) VALUES (?, 'view', ?, ?)`, app.ID, user, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Erasure, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		e, err := db.EraseUser(ctx, app.ID, user)
		if err != nil {
			t.Error(err)
		}
		done <- e
	}()
	<-started
	// Time for the erasure to reach the lock; were it not to wait, it
	// would commit meanwhile and leave the insert below behind.
	time.Sleep(50 * time.Millisecond)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	e := <-done
	if n := countRows(t, db, `SELECT COUNT(*) FROM events WHERE app_id = ? AND user_id = ?`, app.ID, user); n != 0 || e == nil || e.Events != 2 {
		t.Fatalf("%d events left after the erasure, which erased %+v; want 0 left and 2 erased", n, e)
	}
}
