package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"service/store"
)

// The hourly counters move with the variant counters, and the daily
// series cuts days in the campaign's timezone.
func TestCampaignDailySeries(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := time.Date(2031, 1, 10, 3, 30, 0, 0, time.UTC) // Jan 9, 22:30 in New York
	db.Now = func() time.Time { return clock }
	app, _ := db.CreateApp(ctx, "a", "free", 0)
	name, items := "c", json.RawMessage(`[{"type":"text","content":"x"}]`)
	pub := store.ContentPublished
	block, err := db.CreateContent(ctx, app.ID, store.ContentInput{Name: &name, Status: &pub, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	vs := []store.VariantInput{{ContentViewID: &block.ID}, {ContentViewID: &block.ID}}
	tz, goal, end := "America/New_York", json.RawMessage(`"buy"`), json.RawMessage(`"2031-02-01T00:00:00Z"`)
	c, err := db.CreateCampaign(ctx, app.ID, 0, store.CampaignInput{Name: &name, Variants: &vs, Timezone: &tz, GoalEventID: goal, EndDate: end})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetCampaignStatus(ctx, app.ID, c.ID, store.CampaignActive); err != nil {
		t.Fatal(err)
	}
	visit := func(from, to, converting int) {
		for u := from; u < to; u++ {
			user := fmt.Sprintf("u%d", u)
			if _, err := db.Variant(ctx, app.ID, c.ID, &store.VariantRequest{UserID: user}, nil); err != nil {
				t.Fatal(err)
			}
			if u < from+converting {
				if _, err := db.LogEvent(ctx, app.ID, &store.EventInput{EventID: "buy", UserID: user}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	visit(0, 10, 3)
	clock = time.Date(2031, 1, 10, 6, 0, 0, 0, time.UTC) // Jan 10, 01:00 in New York
	visit(10, 15, 1)
	clock = time.Date(2031, 1, 12, 15, 0, 0, 0, time.UTC)

	s, err := db.CampaignDailySeries(ctx, app.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	// From the start day to today while active, gaps filled.
	want := []string{"2031-01-09", "2031-01-10", "2031-01-11", "2031-01-12"}
	if fmt.Sprint(s.Days) != fmt.Sprint(want) || s.Timezone != tz || len(s.Variants) != 2 {
		t.Fatalf("series=%+v", s)
	}
	got, _ := db.FindCampaignByID(ctx, app.ID, c.ID)
	dayImp, dayConv := make([]int64, len(want)), make([]int64, len(want))
	for i, v := range s.Variants {
		var imp, conv int64
		for d := range s.Days {
			imp += v.Impressions[d]
			conv += v.Conversions[d]
			dayImp[d] += v.Impressions[d]
			dayConv[d] += v.Conversions[d]
		}
		if v.VariantID != got.Variants[i].ID || imp != got.Variants[i].Impressions || conv != got.Variants[i].Conversions {
			t.Fatalf("variant %d: series %d/%d, counters %d/%d", i, imp, conv, got.Variants[i].Impressions, got.Variants[i].Conversions)
		}
	}
	if fmt.Sprint(dayImp) != "[10 5 0 0]" || fmt.Sprint(dayConv) != "[3 1 0 0]" {
		t.Fatalf("per day: impressions %v conversions %v", dayImp, dayConv)
	}
	if _, err := db.CampaignDailySeries(ctx, app.ID+1, c.ID); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("another app's campaign: %v", err)
	}

	// Why a user is in or out of an audience, rule by rule.
	aname := "aud"
	aud, err := db.CreateAudience(ctx, app.ID, store.AudienceInput{Name: &aname, Definition: json.RawMessage(
		`{"rules":[{"ruleType":"event","eventId":"buy","operator":"has_performed"},{"field":"plan","operator":"equals","value":"pro"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	db.IdentifyUser(ctx, app.ID, "u0", map[string]any{"plan": "free"})
	chk, err := db.ExplainUserInAudience(ctx, app.ID, aud.ID, "u0")
	if err != nil || chk.Match || !chk.KnownUser || fmt.Sprint(chk.Rules) != "[true false]" || chk.FirstFailed() != 1 {
		t.Fatalf("%+v %v", chk, err)
	}
	if chk, _ := db.ExplainUserInAudience(ctx, app.ID, aud.ID, "stranger"); chk.KnownUser || chk.Match || chk.FirstFailed() != -1 {
		t.Fatalf("%+v", chk)
	}
	as, err := db.FindUserAssignments(ctx, app.ID, "u0")
	if err != nil || len(as) != 1 || as[0].CampaignID != c.ID || as[0].ConvertedAt == nil {
		t.Fatalf("%+v %v", as, err)
	}
	counts, err := db.EventCounts(ctx, app.ID, clock)
	if err != nil || len(counts) != 1 || counts[0].EventID != "buy" || counts[0].Last24h != 0 || counts[0].Last7d != 4 {
		t.Fatalf("%+v %v", counts, err)
	}
}
