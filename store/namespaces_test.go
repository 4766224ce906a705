package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"service/assign"
)

// mustNamespaced creates a campaign in the namespace range (nil: none) in
// status (draft or active), with two variants and the goal "buy".
func mustNamespaced(tb testing.TB, db *DB, app int64, name string, ns *Namespace, status string) *Campaign {
	tb.Helper()
	c, err := createNamespaced(db, app, name, ns, status)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func createNamespaced(db *DB, app int64, name string, ns *Namespace, status string) (*Campaign, error) {
	ctx := context.Background()
	vs := make([]VariantInput, 2)
	for i := range vs {
		bname := fmt.Sprintf("%s block %d", name, i)
		cv, err := db.CreateContent(ctx, app, ContentInput{Name: &bname, Status: ptr(ContentPublished)})
		if err != nil {
			return nil, err
		}
		vs[i] = VariantInput{ContentViewID: &cv.ID}
	}
	raw := json.RawMessage("null")
	if ns != nil {
		raw, _ = json.Marshal(ns)
	}
	end, _ := json.Marshal(db.Now().Add(eventsRun).Format(time.RFC3339))
	return db.CreateCampaign(ctx, app, 0, CampaignInput{Name: &name, Status: &status, EndDate: end,
		GoalEventID: json.RawMessage(`"buy"`), Namespace: raw, Variants: &vs})
}

// clashIDs returns the ids an overlap refusal names in details.campaigns.
func clashIDs(tb testing.TB, err error) []int64 {
	tb.Helper()
	var se *Error
	if !errors.As(err, &se) || se.Code != EINVALID {
		tb.Fatalf("err %v, want an EINVALID overlap refusal", err)
	}
	list, ok := se.Details["campaigns"].([]NamespaceCampaign)
	if !ok {
		tb.Fatalf("details %v lack campaigns", se.Details)
	}
	var ids []int64
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestNamespaceVariant checks that a user outside the campaign's range is
// answered not_in_namespace before the audience is looked at, is stored
// nowhere, and is left out of /variants.
func TestNamespaceVariant(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	ns := &Namespace{ID: "checkout", Range: [2]float64{0, 0.5}}
	c := mustNamespaced(t, db, app, "Checkout", ns, CampaignActive)
	// A campaign whose audience nobody matches: namespace entry is
	// decided first.
	aud := mustCreateAudience(t, db, app, `{"logic":"AND","rules":[{"field":"country","operator":"equals","value":"nowhere"}]}`)
	targeted := mustNamespaced(t, db, app, "Targeted", ns, CampaignDraft)
	if _, err := db.UpdateCampaign(ctx, app, targeted.ID, CampaignInput{AudienceID: json.RawMessage(fmt.Sprint(aud.ID))}); err != nil {
		t.Fatal(err)
	}
	plain := mustNamespaced(t, db, app, "Everyone", nil, CampaignActive)
	var in, out []string
	for i := 0; len(in) < 3 || len(out) < 3; i++ {
		u := fmt.Sprintf("user-%d", i)
		if assign.InNamespace("checkout", u, 0, 0.5) {
			in = append(in, u)
		} else {
			out = append(out, u)
		}
	}
	for _, u := range out {
		b, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: u}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), fmt.Sprintf(`{"campaignId":%d,"variantId":null,"reason":"not_in_namespace"}`, c.ID); got != want {
			t.Errorf("%s: %s, want %s", u, got, want)
		}
		b, err = db.Variants(ctx, app, &VariantRequest{UserID: u}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), fmt.Sprintf(`"campaignId":%d,`, c.ID)) || !strings.Contains(string(b), fmt.Sprintf(`"campaignId":%d,`, plain.ID)) {
			t.Errorf("%s: /variants %s: want only campaign %d", u, b, plain.ID)
		}
	}
	if n := mustScalar(t, db, `SELECT COUNT(*) FROM assignments WHERE campaign_id = ?`, c.ID); n != 0 {
		t.Errorf("%d assignments of users outside the range", n)
	}
	for _, u := range in {
		b, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: u}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"impressionRecorded":true`) {
			t.Errorf("%s in range: %s, want assigned", u, b)
		}
	}
	// The targeted campaign runs after the first one is completed.
	if _, err := db.SetCampaignStatus(ctx, app, c.ID, CampaignCompleted); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetCampaignStatus(ctx, app, targeted.ID, CampaignActive); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		user, reason string
	}{{out[0], ReasonNotInNamespace}, {in[0], ReasonNotInAudience}} {
		b, err := db.Variant(ctx, app, targeted.ID, &VariantRequest{UserID: tt.user}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"reason":"`+tt.reason+`"`) {
			t.Errorf("%s: %s, want %s", tt.user, b, tt.reason)
		}
	}
}

// TestNamespaceOverlap checks every way two overlapping campaigns of a
// namespace could come to run together, and that touching ranges,
// other namespaces and finished campaigns do not block.
func TestNamespaceOverlap(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	rng := func(id string, a, b float64) *Namespace { return &Namespace{ID: id, Range: [2]float64{a, b}} }
	left := mustNamespaced(t, db, app, "Left", rng("x", 0, 0.5), CampaignActive)
	// Half-open ranges that only touch do not overlap.
	right := mustNamespaced(t, db, app, "Right", rng("x", 0.5, 1), CampaignActive)
	// Another namespace is another space.
	mustNamespaced(t, db, app, "Elsewhere", rng("y", 0.2, 0.7), CampaignActive)

	t.Run("ErrCreateActiveOverlapping", func(t *testing.T) {
		// A draft may plan a held range; it cannot start in it.
		mustNamespaced(t, db, app, "Next", rng("x", 0.4, 0.6), CampaignDraft)
		_, err := createNamespaced(db, app, "Middle", rng("x", 0.4, 0.6), CampaignActive)
		if got, want := clashIDs(t, err), []int64{left.ID, right.ID}; !reflect.DeepEqual(got, want) {
			t.Fatalf("campaigns %v, want %v", got, want)
		}
	})
	t.Run("ErrEditOverlapping", func(t *testing.T) {
		d := mustNamespaced(t, db, app, "Draft", rng("z", 0, 1), CampaignDraft)
		_, err := db.UpdateCampaign(ctx, app, d.ID, CampaignInput{Namespace: json.RawMessage(`{"id":"x","range":[0.9,1]}`)})
		if got, want := clashIDs(t, err), []int64{right.ID}; !reflect.DeepEqual(got, want) {
			t.Fatalf("campaigns %v, want %v", got, want)
		}
		if f := err.(*Error).Details["fields"].(map[string]any); f["namespace.range"] == nil {
			t.Errorf("fields %v lack namespace.range", f)
		}
	})
	t.Run("ErrStartOverlapping", func(t *testing.T) {
		// Drafts may overlap each other; the first to start takes the
		// range.
		a := mustNamespaced(t, db, app, "Plan A", rng("w", 0, 0.6), CampaignDraft)
		b := mustNamespaced(t, db, app, "Plan B", rng("w", 0.3, 1), CampaignDraft)
		if _, err := db.SetCampaignStatus(ctx, app, a.ID, CampaignActive); err != nil {
			t.Fatal(err)
		}
		_, err := db.SetCampaignStatus(ctx, app, b.ID, CampaignActive)
		if got, want := clashIDs(t, err), []int64{a.ID}; !reflect.DeepEqual(got, want) {
			t.Fatalf("campaigns %v, want %v", got, want)
		}
		if d := err.(*Error).Details; d["from"] != CampaignDraft || d["to"] != CampaignActive {
			t.Errorf("details %v, want from draft to active", d)
		}
		// A paused campaign keeps its range.
		if _, err := db.SetCampaignStatus(ctx, app, a.ID, CampaignPaused); err != nil {
			t.Fatal(err)
		}
		_, err = db.UpdateCampaign(ctx, app, b.ID, CampaignInput{Status: ptr(CampaignActive)})
		if got, want := clashIDs(t, err), []int64{a.ID}; !reflect.DeepEqual(got, want) {
			t.Fatalf("campaigns %v, want %v", got, want)
		}
		// A completed one frees it.
		if _, err := db.SetCampaignStatus(ctx, app, a.ID, CampaignCompleted); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SetCampaignStatus(ctx, app, b.ID, CampaignActive); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrResumeOverlapping", func(t *testing.T) {
		a := mustNamespaced(t, db, app, "Paused", rng("v", 0, 0.5), CampaignActive)
		if _, err := db.SetCampaignStatus(ctx, app, a.ID, CampaignPaused); err != nil {
			t.Fatal(err)
		}
		// Another process's write, or one made before the rule: an
		// overlapping campaign running while a is paused.
		b := mustNamespaced(t, db, app, "Intruder", rng("v", 0.6, 1), CampaignActive)
		if _, err := db.write.Exec(`UPDATE campaigns SET namespace_start = 0.25 WHERE id = ?`, b.ID); err != nil {
			t.Fatal(err)
		}
		_, err := db.SetCampaignStatus(ctx, app, a.ID, CampaignActive)
		if got, want := clashIDs(t, err), []int64{b.ID}; !reflect.DeepEqual(got, want) {
			t.Fatalf("campaigns %v, want %v", got, want)
		}
		if d := err.(*Error).Details; d["from"] != CampaignPaused {
			t.Errorf("details %v, want from paused", d)
		}
	})
	t.Run("ErrEditWhileActive", func(t *testing.T) {
		_, err := db.UpdateCampaign(ctx, app, left.ID, CampaignInput{Namespace: json.RawMessage(`null`)})
		wantCode(t, err, EINVALID)
		if f := err.(*Error).Details["field"]; f != "namespace" {
			t.Errorf("refused field %v, want namespace", f)
		}
	})
}

func TestNamespaceValidation(t *testing.T) {
	db, app, _ := mustOpenApp(t, eventsT0)
	long := strings.Repeat("é", MaxNamespaceIDLen+1)
	for _, tt := range []struct {
		raw, field string
	}{
		{`{"id":"","range":[0,1]}`, "namespace.id"},
		{`{"range":[0,1]}`, "namespace.id"},
		{`{"id":"` + long + `","range":[0,1]}`, "namespace.id"},
		{`{"id":"x","range":[0.5,0.5]}`, "namespace.range"},
		{`{"id":"x","range":[-0.1,0.5]}`, "namespace.range"},
		{`{"id":"x","range":[0.5,1.01]}`, "namespace.range"},
		{`{"id":"x","range":[0.5]}`, "namespace.range"},
		{`{"id":"x","range":"all"}`, "namespace.range"},
		{`"x"`, "namespace"},
		{`[]`, "namespace"},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			name := "Bad"
			cv, err := db.CreateContent(context.Background(), app, ContentInput{Name: &name})
			if err != nil {
				t.Fatal(err)
			}
			vs := []VariantInput{{ContentViewID: &cv.ID}, {ContentViewID: &cv.ID}}
			_, err = db.CreateCampaign(context.Background(), app, 0, CampaignInput{Name: &name, Namespace: json.RawMessage(tt.raw), Variants: &vs})
			wantCode(t, err, EINVALID)
			if f := err.(*Error).Details["fields"].(map[string]any); f[tt.field] == nil {
				t.Errorf("fields %v, want %s", f, tt.field)
			}
		})
	}
	// 64 characters of any script are fine, and the whole of [0, 1).
	c := mustNamespaced(t, db, app, "Max", &Namespace{ID: strings.Repeat("é", MaxNamespaceIDLen), Range: [2]float64{0, 1}}, CampaignDraft)
	if c.Namespace == nil || c.Namespace.Range != [2]float64{0, 1} {
		t.Fatalf("namespace %+v", c.Namespace)
	}
}

func TestFindNamespaces(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	rng := func(id string, a, b float64) *Namespace { return &Namespace{ID: id, Range: [2]float64{a, b}} }
	a := mustNamespaced(t, db, app, "A", rng("pricing", 0.1, 0.3), CampaignActive)
	b := mustNamespaced(t, db, app, "B", rng("pricing", 0.5, 0.7), CampaignActive)
	if _, err := db.SetCampaignStatus(ctx, app, b.ID, CampaignPaused); err != nil {
		t.Fatal(err)
	}
	d := mustNamespaced(t, db, app, "Plan", rng("pricing", 0.2, 0.6), CampaignDraft)
	done := mustNamespaced(t, db, app, "Done", rng("checkout", 0, 1), CampaignActive)
	if _, err := db.SetCampaignStatus(ctx, app, done.ID, CampaignCompleted); err != nil {
		t.Fatal(err)
	}
	gone := mustNamespaced(t, db, app, "Gone", rng("old", 0, 1), CampaignDraft)
	if _, err := db.SetCampaignStatus(ctx, app, gone.ID, CampaignArchived); err != nil {
		t.Fatal(err)
	}
	mustNamespaced(t, db, app, "None", nil, CampaignActive)
	got, err := db.FindNamespaces(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	want := []NamespaceUsage{
		{ID: "checkout", Campaigns: []NamespaceCampaign{{done.ID, "Done", CampaignCompleted, [2]float64{0, 1}}},
			Free: 1, FreeRanges: [][2]float64{{0, 1}}},
		{ID: "pricing", Campaigns: []NamespaceCampaign{
			{a.ID, "A", CampaignActive, [2]float64{0.1, 0.3}},
			{d.ID, "Plan", CampaignDraft, [2]float64{0.2, 0.6}},
			{b.ID, "B", CampaignPaused, [2]float64{0.5, 0.7}},
		}, FreeRanges: [][2]float64{{0, 0.1}, {0.3, 0.5}, {0.7, 1}}},
	}
	want[1].Free = 0.6
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("namespaces\n got %+v\nwant %+v", got, want)
	}
}

func TestFreeRanges(t *testing.T) {
	for _, tt := range []struct {
		held, free [][2]float64
	}{
		{nil, [][2]float64{{0, 1}}},
		{[][2]float64{{0, 1}}, [][2]float64{}},
		{[][2]float64{{0.5, 1}, {0, 0.5}}, [][2]float64{}},
		{[][2]float64{{0.2, 0.4}, {0.3, 0.5}}, [][2]float64{{0, 0.2}, {0.5, 1}}},
		{[][2]float64{{0.6, 0.7}, {0.1, 0.2}, {0.15, 0.18}}, [][2]float64{{0, 0.1}, {0.2, 0.6}, {0.7, 1}}},
	} {
		if got := freeRanges(tt.held); !reflect.DeepEqual(got, tt.free) {
			t.Errorf("freeRanges(%v) = %v, want %v", tt.held, got, tt.free)
		}
	}
}

// TestCupedLookbackSetting checks the setting's range, its default, that
// it is fixed once the campaign leaves the draft, and that 0 turns the
// analysis off.
func TestCupedLookbackSetting(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, eventsT0)
	c := mustNamespaced(t, db, app, "C", nil, CampaignDraft)
	for _, bad := range []string{`91`, `-1`, `14.5`, `"14"`, `null`} {
		_, err := db.UpdateCampaign(ctx, app, c.ID, CampaignInput{CupedLookbackDays: json.RawMessage(bad)})
		wantCode(t, err, EINVALID)
		if f := err.(*Error).Details["fields"].(map[string]any); f["cupedLookbackDays"] == nil {
			t.Errorf("%s: fields %v", bad, f)
		}
	}
	for _, days := range []int{0, 90, 7} {
		got, err := db.UpdateCampaign(ctx, app, c.ID, CampaignInput{CupedLookbackDays: json.RawMessage(fmt.Sprint(days))})
		if err != nil || got.CupedLookbackDays != days {
			t.Fatalf("set %d: %v %v", days, got, err)
		}
	}
	if _, err := db.UpdateCampaign(ctx, app, c.ID, CampaignInput{CupedLookbackDays: json.RawMessage(`0`), Status: ptr(CampaignActive)}); err != nil {
		t.Fatal(err)
	}
	_, err := db.UpdateCampaign(ctx, app, c.ID, CampaignInput{CupedLookbackDays: json.RawMessage(`14`)})
	wantCode(t, err, EINVALID)
	for i := range 6 {
		if _, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: fmt.Sprint("u", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	a, err := db.CampaignAnalytics(ctx, app, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cuped != nil || a.Variants[0].Cuped != nil {
		t.Errorf("cuped %+v with a lookback of 0, want null", a.Cuped)
	}
	// A variant of fewer than 2 users: null as well.
	d := mustNamespaced(t, db, app, "D", nil, CampaignActive)
	if a, err = db.CampaignAnalytics(ctx, app, d.ID); err != nil || a.Cuped != nil {
		t.Errorf("cuped %+v, %v with no users, want null", a.Cuped, err)
	}
}

// TestCupedRoundRobin checks the covariate on the round-robin path, which
// writes its assignment at once rather than at the commit.
func TestCupedRoundRobin(t *testing.T) {
	ctx := context.Background()
	db, app, clock := mustOpenApp(t, eventsT0.Add(-48*time.Hour))
	for range 3 {
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", UserID: "loyal"}); err != nil {
			t.Fatal(err)
		}
	}
	// A visitor known by session alone counts the session's goal events,
	// whatever the assignment type.
	for range 2 {
		if _, err := db.LogEvent(ctx, app, &EventInput{EventID: "buy", SessionID: "visit"}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(eventsT0)
	c := mustNamespaced(t, db, app, "RR", nil, CampaignDraft)
	if _, err := db.UpdateCampaign(ctx, app, c.ID, CampaignInput{AssignmentType: ptr(AssignRoundRobin), Status: ptr(CampaignActive)}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []VariantRequest{{UserID: "loyal"}, {UserID: "new"}, {SessionID: "visit"}} {
		if _, err := db.Variant(ctx, app, c.ID, &r, nil); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]int64{"u:loyal": 3, "u:new": 0, "s:visit": 2} {
		if got := mustScalar(t, db, `SELECT covariate FROM assignments WHERE campaign_id = ? AND user_key = ?`, c.ID, key); got != want {
			t.Errorf("%s: covariate %d, want %d", key, got, want)
		}
	}
	if got := mustScalar(t, db, `SELECT SUM(cuped_sum_x) * 100 + SUM(cuped_sum_xx) FROM campaign_variants WHERE campaign_id = ?`, c.ID); got != 5*100+13 {
		t.Errorf("sums %d, want ΣX 5 and ΣX² 13", got)
	}

	// A returning user the memory forgot is answered from the stored row,
	// without a covariate query.
	db.assigned = newUserCache(1<<10, &db.userEpoch)
	reads := db.covariateReads.Load()
	b, err := db.Variant(ctx, app, c.ID, &VariantRequest{UserID: "loyal"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"impressionRecorded":false`) {
		t.Errorf("returning answer %s, want no impression", b)
	}
	if got := db.covariateReads.Load() - reads; got != 0 {
		t.Errorf("%d covariate queries for a returning user, want 0", got)
	}
	if got := mustScalar(t, db, `SELECT SUM(cuped_sum_x) * 100 + SUM(cuped_sum_xx) FROM campaign_variants WHERE campaign_id = ?`, c.ID); got != 5*100+13 {
		t.Errorf("sums %d after the return, want unchanged", got)
	}
}
