package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// Two handles on one database stand for two replicas: on PostgreSQL their
// writers run at once, so the same first request or the same logId may
// reach both at the same moment.

// twoProcesses opens a database twice, with one app, two published blocks
// and one clock.
func twoProcesses(t *testing.T) (a, b *DB, app int64, blocks []int64) {
	t.Helper()
	ctx := context.Background()
	path := tempDBPath(t)
	a, b = mustOpenDBAt(t, path), mustOpenDBAt(t, path)
	b.Now = a.Now
	created, err := a.CreateApp(ctx, "processes", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		published := ContentPublished
		cv, err := a.CreateContent(ctx, created.ID, ContentInput{Name: &n, Status: &published})
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, cv.ID)
	}
	return a, b, created.ID, blocks
}

// twoAtOnce runs fa and fb at the same moment, n times over, and waits.
func twoAtOnce(n int, fa, fb func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; fa(i) }()
		go func() { defer wg.Done(); <-start; fb(i) }()
		close(start)
	}
	wg.Wait()
}

// TestFirstAssignmentTwoProcesses: the same new users asked for at once on
// two processes get one variant each, the same in both answers, and one
// impression; round robin takes its shared counter once per new user, so
// the variants split exactly.
func TestFirstAssignmentTwoProcesses(t *testing.T) {
	for _, assignment := range []string{AssignWeighted, AssignRoundRobin} {
		t.Run(assignment, func(t *testing.T) {
			ctx := context.Background()
			a, b, app, blocks := twoProcesses(t)
			name, end := "c", json.RawMessage(`"2999-01-01T00:00:00Z"`)
			active := CampaignActive
			vs := []VariantInput{{ContentViewID: &blocks[0]}, {ContentViewID: &blocks[1]}}
			c, err := a.CreateCampaign(ctx, app, 0, CampaignInput{Name: &name, Status: &active, EndDate: end, AssignmentType: &assignment, Variants: &vs})
			if err != nil {
				t.Fatal(err)
			}
			const users = 60
			type answer struct {
				VariantID          int64 `json:"variantId"`
				ImpressionRecorded bool  `json:"impressionRecorded"`
			}
			var got [users][2]answer
			ask := func(db *DB, side int) func(i int) {
				return func(i int) {
					out, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("user-", i)}, nil)
					if err != nil {
						t.Errorf("user %d on process %d: %v", i, side, err)
						return
					}
					if err := json.Unmarshal(out, &got[i][side]); err != nil {
						t.Errorf("user %d: %s: %v", i, out, err)
					}
				}
			}
			twoAtOnce(users, ask(a, 0), ask(b, 1))
			if t.Failed() {
				return
			}
			perVariant := map[int64]int{}
			for i, g := range got {
				if g[0].VariantID == 0 || g[0].VariantID != g[1].VariantID {
					t.Fatalf("user %d: variants %d and %d", i, g[0].VariantID, g[1].VariantID)
				}
				if g[0].ImpressionRecorded == g[1].ImpressionRecorded {
					t.Fatalf("user %d: impressionRecorded %v and %v, want one true", i, g[0].ImpressionRecorded, g[1].ImpressionRecorded)
				}
				perVariant[g[0].VariantID]++
			}
			if n := countRows(t, a, `SELECT COUNT(*) FROM assignments WHERE campaign_id = ?`, c.ID); n != users {
				t.Fatalf("%d assignments, want %d", n, users)
			}
			if n := countRows(t, a, `SELECT SUM(impressions) FROM campaign_variants WHERE campaign_id = ?`, c.ID); n != users {
				t.Fatalf("%d impressions, want %d", n, users)
			}
			if assignment == AssignRoundRobin {
				for v, n := range perVariant {
					if n != users/2 {
						t.Fatalf("round robin: variant %d got %d of %d users, want %d: %v", v, n, users, users/2, perVariant)
					}
				}
			}
			// Returning on either process, in either order: the same.
			for i := range users {
				for side, db := range []*DB{b, a} {
					var again answer
					out, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("user-", i)}, nil)
					if err != nil {
						t.Fatal(err)
					}
					if err := json.Unmarshal(out, &again); err != nil || again.VariantID != got[i][0].VariantID || again.ImpressionRecorded {
						t.Fatalf("user %d returning on process %d: %s", i, side, out)
					}
				}
			}
		})
	}
}

// TestSameLogIDTwoProcesses: one logId sent to two processes at once is
// stored once, counts one conversion, and both answers describe that one
// event: its id, name and time, one of them marked duplicate. Each side
// sends every logId at once, so the group commits on both sides carry
// many of the same logIds, in any order.
func TestSameLogIDTwoProcesses(t *testing.T) {
	ctx := context.Background()
	a, b, app, blocks := twoProcesses(t)
	name, end, goal := "c", json.RawMessage(`"2999-01-01T00:00:00Z"`), json.RawMessage(`"buy"`)
	active := CampaignActive
	vs := []VariantInput{{ContentViewID: &blocks[0]}, {ContentViewID: &blocks[1]}}
	c, err := a.CreateCampaign(ctx, app, 0, CampaignInput{Name: &name, Status: &active, EndDate: end, GoalEventID: goal, Variants: &vs})
	if err != nil {
		t.Fatal(err)
	}
	const events = 80
	for i := range events {
		if _, err := a.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("user-", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var got [events][2]*EventResult
	send := func(db *DB, side int) func(i int) {
		return func(i int) {
			res, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", UserID: fmt.Sprint("user-", i), LogID: fmt.Sprint("log-", i)})
			if err != nil {
				t.Errorf("logId %d on process %d: %v", i, side, err)
				return
			}
			got[i][side] = res
		}
	}
	twoAtOnce(events, send(a, 0), send(b, 1))
	if t.Failed() {
		return
	}
	for i, g := range got {
		x, y := g[0], g[1]
		if x.ID == 0 || x.ID != y.ID || x.EventID != y.EventID || !x.Timestamp.Equal(y.Timestamp.Time) {
			t.Fatalf("logId %d: answers %+v and %+v describe different events", i, x, y)
		}
		if x.Duplicate == y.Duplicate {
			t.Fatalf("logId %d: duplicate %v and %v, want exactly one", i, x.Duplicate, y.Duplicate)
		}
	}
	if n := countRows(t, a, `SELECT COUNT(*) FROM events WHERE app_id = ?`, app); n != events {
		t.Fatalf("%d events stored, want %d", n, events)
	}
	if n := countRows(t, a, `SELECT SUM(conversions) FROM campaign_variants WHERE campaign_id = ?`, c.ID); n != events {
		t.Fatalf("%d conversions, want %d", n, events)
	}
}
