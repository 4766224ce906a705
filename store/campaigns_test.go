package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/testclock"
)

// campaignTestT0 is the test clock's start.
var campaignTestT0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

// campaignTestEnv is a database on a test clock with one app, two content
// blocks and a webhook subscribed to every event, so that emitted events
// can be counted in the outbox.
type campaignTestEnv struct {
	tb     testing.TB
	db     *DB
	clock  *testclock.Clock
	app    int64
	blocks []int64
}

func newCampaignTestEnv(tb testing.TB) *campaignTestEnv {
	tb.Helper()
	ctx := context.Background()
	db, app, c := mustOpenApp(tb, campaignTestT0)
	e := &campaignTestEnv{tb: tb, db: db, clock: c, app: app}
	for _, n := range []string{"a", "b"} {
		cv, err := db.CreateContent(ctx, app, ContentInput{Name: &n, Status: ptr(ContentPublished)})
		if err != nil {
			tb.Fatal(err)
		}
		e.blocks = append(e.blocks, cv.ID)
	}
	url, events := "http://127.0.0.1:9/hook", []string{"*"}
	if _, err := db.CreateWebhook(ctx, app, WebhookInput{URL: &url, Events: &events}); err != nil {
		tb.Fatal(err)
	}
	return e
}

func campaignTestAt(d time.Duration) *time.Time {
	t := campaignTestT0.Add(d)
	return &t
}

// create makes a campaign with the dates given (nil: unset) and walks it
// to status (draft, active or paused).
func (e *campaignTestEnv) create(start, end *time.Time, status string) int64 {
	e.tb.Helper()
	ctx := context.Background()
	date := func(t *time.Time) json.RawMessage {
		if t == nil {
			return nil
		}
		b, _ := json.Marshal(t.Format(time.RFC3339Nano))
		return b
	}
	name := "Campaign"
	vs := []VariantInput{{ContentViewID: &e.blocks[0]}, {ContentViewID: &e.blocks[1]}}
	c, err := e.db.CreateCampaign(ctx, e.app, 0, CampaignInput{Name: &name, StartDate: date(start), EndDate: date(end), Variants: &vs})
	if err != nil {
		e.tb.Fatal(err)
	}
	for _, s := range map[string][]string{"draft": nil, "active": {"active"}, "paused": {"active", "paused"}}[status] {
		if _, err := e.db.SetCampaignStatus(ctx, e.app, c.ID, s); err != nil {
			e.tb.Fatal(err)
		}
	}
	return c.ID
}

func (e *campaignTestEnv) status(id int64) string {
	e.tb.Helper()
	c, err := e.db.FindCampaignByID(context.Background(), e.app, id)
	if err != nil {
		e.tb.Fatal(err)
	}
	return c.Status
}

// campaignTestDelivery is one queued webhook delivery.
type campaignTestDelivery struct {
	event   string
	payload string
	id      int64 // the payload's campaignId
}

// deliveries reads the outbox in order.
func (e *campaignTestEnv) deliveries() []campaignTestDelivery {
	e.tb.Helper()
	rows, err := e.db.read.Query(`SELECT event, payload FROM webhook_deliveries ORDER BY id`)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer rows.Close()
	var out []campaignTestDelivery
	for rows.Next() {
		var d campaignTestDelivery
		var payload []byte
		if err := rows.Scan(&d.event, &payload); err != nil {
			e.tb.Fatal(err)
		}
		d.payload = string(payload)
		var p struct {
			CampaignID int64 `json:"campaignId"`
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			e.tb.Fatalf("payload %s: %v", payload, err)
		}
		d.id = p.CampaignID
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		e.tb.Fatal(err)
	}
	return out
}

// count returns how many deliveries of event name campaign id.
func (e *campaignTestEnv) count(event string, id int64) int {
	e.tb.Helper()
	n := 0
	for _, d := range e.deliveries() {
		if d.event == event && d.id == id {
			n++
		}
	}
	return n
}

func TestCampaignScheduleCatchUp(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	missed := e.create(campaignTestAt(time.Hour), campaignTestAt(2*time.Hour), "draft")
	unscheduled := e.create(nil, campaignTestAt(10*time.Hour), "draft")
	future := e.create(campaignTestAt(6*time.Hour), campaignTestAt(10*time.Hour), "draft")
	starts := e.create(campaignTestAt(time.Hour), campaignTestAt(10*time.Hour), "draft")
	ends := e.create(nil, campaignTestAt(2*time.Hour), "active")
	endsPaused := e.create(nil, campaignTestAt(2*time.Hour), "paused")
	runs := e.create(nil, campaignTestAt(10*time.Hour), "active")
	before := len(e.deliveries())

	// Nothing is due before the dates.
	res, err := e.db.RunSchedule(ctx)
	if err != nil || len(res.Started)+len(res.Completed) != 0 {
		t.Fatalf("RunSchedule at T0 = %+v, %v; want nothing", res, err)
	}

	// Five hours of downtime, then one pass does everything that fell due.
	e.clock.Set(campaignTestT0.Add(5 * time.Hour))
	res, err = e.db.RunSchedule(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Started, []int64{starts}) || !slices.Equal(res.Completed, []int64{ends, endsPaused}) {
		t.Fatalf("RunSchedule = %+v, want started [%d] completed [%d %d]", res, starts, ends, endsPaused)
	}
	for id, want := range map[int64]string{missed: "draft", unscheduled: "draft", future: "draft", starts: "active",
		ends: "completed", endsPaused: "completed", runs: "active"} {
		if got := e.status(id); got != want {
			t.Fatalf("campaign %d: status=%s, want %s", id, got, want)
		}
	}
	got := e.deliveries()[before:]
	var kinds []string
	for _, d := range got {
		kinds = append(kinds, d.event)
	}
	if want := []string{EventCampaignStarted, EventCampaignCompleted, EventCampaignCompleted}; !slices.Equal(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}

	// A second pass finds nothing left and emits nothing.
	res, err = e.db.RunSchedule(ctx)
	if err != nil || len(res.Started)+len(res.Completed) != 0 {
		t.Fatalf("second pass = %+v, %v; want nothing", res, err)
	}
	if n := len(e.deliveries()); n != before+3 {
		t.Fatalf("deliveries=%d after the second pass, want %d", n, before+3)
	}

	// The rest of the timeline: the future draft starts and everything ends.
	e.clock.Set(campaignTestT0.Add(7 * time.Hour))
	if res, err = e.db.RunSchedule(ctx); err != nil || !slices.Equal(res.Started, []int64{future}) {
		t.Fatalf("at +7h: %+v, %v", res, err)
	}
	e.clock.Set(campaignTestT0.Add(10 * time.Hour))
	if res, err = e.db.RunSchedule(ctx); err != nil || !slices.Equal(res.Completed, []int64{future, starts, runs}) {
		t.Fatalf("at +10h: %+v, %v", res, err)
	}
}

func TestCampaignEventPayloads(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	id := e.create(campaignTestAt(-time.Hour), campaignTestAt(time.Hour), "draft")
	if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignActive); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignPaused); err != nil {
		t.Fatal(err)
	}
	// Resuming emits nothing: the spec lists no event for it.
	if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignActive); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignCompleted); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetCampaignStatus(ctx, e.app, id, CampaignArchived); err != nil {
		t.Fatal(err)
	}
	got := e.deliveries()
	want := []string{
		`{"campaignId":1,"campaignName":"Campaign","startDate":"2031-03-04T09:00:00.000Z","endDate":"2031-03-04T11:00:00.000Z"}`,
		`{"campaignId":1,"campaignName":"Campaign","pausedAt":"2031-03-04T10:00:00.000Z"}`,
		`{"campaignId":1,"campaignName":"Campaign","completedAt":"2031-03-04T10:00:00.000Z","analytics":{"totalImpressions":0,"totalConversions":0,"conversionRate":0,"bestVariant":null,"statisticalSignificance":false,"winningVariant":null}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d deliveries, want %d: %+v", len(got), len(want), got)
	}
	for i, d := range got {
		if d.payload != want[i] {
			t.Fatalf("delivery %d (%s):\n got %s\nwant %s", i, d.event, d.payload, want[i])
		}
	}
}

// A campaign completing with a significant winner declares it.
func TestCampaignWinnerDeclared(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	id := e.create(nil, campaignTestAt(time.Hour), "active")
	// Counters as thousands of assignments and conversions would leave them.
	if _, err := e.db.write.Exec(`UPDATE campaign_variants SET impressions = 2000, conversions = CASE WHEN is_control THEN 100 ELSE 200 END WHERE campaign_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(campaignTestT0.Add(time.Hour))
	if res, err := e.db.RunSchedule(ctx); err != nil || !slices.Equal(res.Completed, []int64{id}) {
		t.Fatalf("RunSchedule = %+v, %v", res, err)
	}
	ds := e.deliveries()[1:] // after campaign.started
	if len(ds) != 2 || ds[0].event != EventCampaignCompleted || ds[1].event != EventWinnerDeclared {
		t.Fatalf("deliveries %+v, want completed then winner_declared", ds)
	}
	if !strings.Contains(ds[0].payload, `"bestVariant":"Variant B","statisticalSignificance":true,"winningVariant":"Variant B"`) {
		t.Fatalf("completed payload %s", ds[0].payload)
	}
	var w struct {
		Winner          *string  `json:"winner"`
		PValue          *float64 `json:"pValue"`
		ConfidenceLevel *float64 `json:"confidenceLevel"`
		EffectSize      *float64 `json:"effectSize"`
		Interpretation  *string  `json:"interpretation"`
	}
	if err := json.Unmarshal([]byte(ds[1].payload), &w); err != nil {
		t.Fatal(err)
	}
	if w.Winner == nil || *w.Winner != "Variant B" || w.PValue == nil || *w.PValue >= 0.05 || w.ConfidenceLevel == nil ||
		*w.ConfidenceLevel <= 95 || w.EffectSize == nil || *w.EffectSize <= 0 || w.Interpretation == nil || *w.Interpretation == "" {
		t.Fatalf("winner payload %s", ds[1].payload)
	}
}

// TestRaceSchedulerVsAPI pauses and completes campaigns through the store
// methods the API calls while two schedulers complete the same, overdue,
// campaigns. Every move is a conditional update in its own transaction, so
// each campaign must end completed with exactly one campaign.completed.
func TestRaceSchedulerVsAPI(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	const n = 12
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = e.create(nil, campaignTestAt(time.Hour), "active")
	}
	e.clock.Set(campaignTestT0.Add(2 * time.Hour)) // every one is overdue

	// A PATCH whose status equals the current one is a no-op that
	// succeeds, so only the status endpoint's successes are moves for sure.
	type tally struct{ paused, apiCompleted, schedCompleted atomic.Int32 }
	tallies := map[int64]*tally{}
	for _, id := range ids {
		tallies[id] = &tally{}
	}
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// An API call may lose the race, but only with a refused move.
	api := func(id int64, to string, patch bool) {
		var err error
		if patch {
			_, err = e.db.UpdateCampaign(ctx, e.app, id, CampaignInput{Status: &to})
		} else {
			_, err = e.db.SetCampaignStatus(ctx, e.app, id, to)
		}
		switch {
		case err == nil && patch:
		case err == nil && to == CampaignPaused:
			tallies[id].paused.Add(1)
		case err == nil && to == CampaignCompleted:
			tallies[id].apiCompleted.Add(1)
		case err == nil:
			fail(Errorf(EINTERNAL, "campaign %d: move to %s accepted after its endDate", id, to))
		case ErrorCode(err) != EINVALID:
			fail(err)
		}
	}

	stop := make(chan struct{})
	var sched sync.WaitGroup
	for range 2 {
		sched.Add(1)
		go func() {
			defer sched.Done()
			for {
				res, err := e.db.RunSchedule(ctx)
				if err != nil {
					fail(err)
				}
				for _, id := range res.Completed {
					tallies[id].schedCompleted.Add(1)
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, id := range ids {
		for _, op := range []struct {
			to    string
			patch bool
		}{
			{CampaignPaused, false}, {CampaignPaused, true}, {CampaignCompleted, false},
			{CampaignCompleted, true}, {CampaignActive, false},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				api(id, op.to, op.patch)
			}()
		}
	}
	close(start)
	wg.Wait()
	close(stop)
	sched.Wait()
	// A pause that landed after the schedulers' last pass is completed now.
	res, err := e.db.RunSchedule(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range res.Completed {
		tallies[id].schedCompleted.Add(1)
	}
	if len(errs) > 0 {
		t.Fatalf("%d unexpected outcomes, first: %v", len(errs), errs[0])
	}

	for _, id := range ids {
		tl := tallies[id]
		if got := e.status(id); got != CampaignCompleted {
			t.Fatalf("campaign %d: status=%s, want completed", id, got)
		}
		if got := tl.apiCompleted.Load() + tl.schedCompleted.Load(); got > 1 {
			t.Fatalf("campaign %d completed %d times (status endpoint %d, scheduler %d), want once", id, got, tl.apiCompleted.Load(), tl.schedCompleted.Load())
		}
		if got := e.count(EventCampaignCompleted, id); got != 1 {
			t.Fatalf("campaign %d: %d campaign.completed deliveries, want 1", id, got)
		}
		if got, sure := e.count(EventCampaignPaused, id), int(tl.paused.Load()); got > 1 || got < sure {
			t.Fatalf("campaign %d: %d campaign.paused deliveries for %d sure pauses, want at most 1", id, got, sure)
		}
	}
}

// An edit that commits between the scheduler's read of what is due and its
// move must win: the scheduler may act only on dates that still hold.
func TestCampaignScheduleStaleDueList(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	ends := e.create(nil, campaignTestAt(time.Hour), "active")
	starts := e.create(campaignTestAt(time.Hour), campaignTestAt(10*time.Hour), "draft")
	e.clock.Set(campaignTestT0.Add(2 * time.Hour))

	// Hold the one writer connection, so the scheduler reads its due list
	// and then queues for the writer behind this transaction.
	tx, err := e.db.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.raw.Rollback()
	waits := e.db.write.Stats().WaitCount
	type result struct {
		res ScheduleResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := e.db.RunSchedule(ctx)
		done <- result{res, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for e.db.write.Stats().WaitCount == waits {
		if time.Now().After(deadline) {
			t.Fatal("RunSchedule never queued for the writer")
		}
		time.Sleep(time.Millisecond)
	}
	// What PATCH /campaigns/{id} would commit meanwhile: a later endDate
	// for the running campaign, a later startDate for the draft.
	if _, err := tx.exec(`UPDATE campaigns SET end_at = ? WHERE id = ?`, ms(campaignTestT0.Add(5*time.Hour)), ends); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.exec(`UPDATE campaigns SET start_at = ? WHERE id = ?`, ms(campaignTestT0.Add(3*time.Hour)), starts); err != nil {
		t.Fatal(err)
	}
	tx.changed = true
	if err := tx.commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := e.status(ends); got != CampaignActive {
		t.Fatalf("campaign whose endDate moved to the future: status=%s, want active (scheduler result %+v)", got, r.res)
	}
	c, err := e.db.FindCampaignByID(ctx, e.app, starts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != CampaignDraft || !c.StartDate.Equal(campaignTestT0.Add(3*time.Hour)) {
		t.Fatalf("draft whose startDate moved to the future: status=%s startDate=%v, want draft at +3h (scheduler result %+v)", c.Status, c.StartDate, r.res)
	}
}

// A list page reads every campaign's variants in one query; each campaign
// must still get exactly its own, in id order, as a single read gives them.
func TestFindCampaignsVariantsPerCampaign(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	var ids []int64
	for i, n := range []int{2, 3, 4} {
		vs := make([]VariantInput, n)
		alloc := 100.0 / float64(n)
		for j := range vs {
			name := string(rune('A'+i)) + string(rune('a'+j))
			vs[j] = VariantInput{Name: &name, ContentViewID: &e.blocks[j%2], TrafficAllocation: &alloc}
		}
		name := "Campaign " + string(rune('A'+i))
		c, err := e.db.CreateCampaign(ctx, e.app, 0, CampaignInput{Name: &name, Variants: &vs})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	list, _, err := e.db.FindCampaigns(ctx, e.app, "", ListOptions{Page: 1, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(ids) {
		t.Fatalf("listed %d campaigns, want %d", len(list), len(ids))
	}
	for _, c := range list {
		one, err := e.db.FindCampaignByID(ctx, e.app, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(c.Variants)
		want, _ := json.Marshal(one.Variants)
		if string(got) != string(want) || len(c.Variants) < 2 {
			t.Errorf("campaign %d (%s): listed variants %s\nwant %s", c.ID, c.Name, got, want)
		}
	}
}

// A campaign started by another process is served by this one's variant
// route (read by id) before this process hears of the change; its events
// must count for the campaign from then on, so the app's list of active
// campaigns, which the event path reads, is read again too.
func TestActiveListFollowsCampaignReadByID(t *testing.T) {
	ctx := context.Background()
	path := tempDBPath(t)
	a, b := mustOpenDBAt(t, path), mustOpenDBAt(t, path)
	// a hears of b's changes only through what it reads itself.
	if a.pgEngine() != nil {
		a.pgEngine().listen.close()
	} else {
		a.watch.close()
	}
	app, err := b.CreateApp(ctx, "lists", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := a.activeCampaigns(ctx, app.ID); err != nil || len(l) != 0 {
		t.Fatalf("active campaigns before: %d, %v", len(l), err)
	}
	var blocks []int64
	published := "published"
	for _, n := range []string{"a", "b"} {
		cv, err := b.CreateContent(ctx, app.ID, ContentInput{Name: &n, Status: &published})
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, cv.ID)
	}
	name, status, goal := "Started elsewhere", CampaignActive, json.RawMessage(`"buy"`)
	end, _ := json.Marshal(time.Now().Add(time.Hour))
	vs := []VariantInput{{ContentViewID: &blocks[0]}, {ContentViewID: &blocks[1]}}
	c, err := b.CreateCampaign(ctx, app.ID, 0, CampaignInput{Name: &name, Status: &status, EndDate: end, GoalEventID: goal, Variants: &vs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.liveCampaign(ctx, app.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	l, err := a.activeCampaigns(ctx, app.ID)
	if err != nil || len(l) != 1 || l[0].id != c.ID {
		t.Fatalf("active campaigns after the campaign was read by id: %d, %v; want campaign %d", len(l), err, c.ID)
	}
}

// A campaign goes live only when every variant's block is published: by
// hand (status move, edit with status, create as active) or by the
// scheduler, which reports the draft as blocked each pass until the
// block is published, then starts it.
func TestCampaignStartNeedsPublishedBlocks(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	draft, err := e.db.CreateContent(ctx, e.app, ContentInput{Name: ptr("Hero B")})
	if err != nil {
		t.Fatal(err)
	}
	reason := "content block " + joinFmt(draft.ID) + " is a draft; publish it first"
	end, _ := json.Marshal(campaignTestT0.Add(time.Hour).Format(time.RFC3339))
	newCampaign := func(status *string, start json.RawMessage) (*Campaign, error) {
		vs := []VariantInput{{ContentViewID: &e.blocks[0]}, {ContentViewID: &draft.ID}}
		return e.db.CreateCampaign(ctx, e.app, 0, CampaignInput{Name: ptr("Hero test"), Status: status, StartDate: start, EndDate: end, Variants: &vs})
	}
	wantRefused := func(t *testing.T, err error, want map[string]any) {
		t.Helper()
		wantCode(t, err, EINVALID)
		d := err.(*Error).Details
		if d["from"] != CampaignDraft || d["to"] != CampaignActive || !reflectEqual(d["fields"], want) {
			t.Fatalf("details=%v, want from draft to active with fields %v", d, want)
		}
	}
	one := map[string]any{"variants[1].contentViewId": reason}

	t.Run("ByHand", func(t *testing.T) {
		c, err := newCampaign(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := len(e.deliveries())
		for name, start := range map[string]func() error{
			"Status": func() error { _, err := e.db.SetCampaignStatus(ctx, e.app, c.ID, CampaignActive); return err },
			"Edit": func() error {
				_, err := e.db.UpdateCampaign(ctx, e.app, c.ID, CampaignInput{Status: ptr(CampaignActive)})
				return err
			},
		} {
			wantRefused(t, start(), one)
			if got := e.status(c.ID); got != CampaignDraft {
				t.Fatalf("%s: status=%s after a refused start, want draft", name, got)
			}
		}
		if n := len(e.deliveries()); n != before {
			t.Fatalf("deliveries %d -> %d after refused starts, want none", before, n)
		}
		problems, err := e.db.CampaignBlockProblems(ctx, e.app, c.ID)
		if err != nil || len(problems) != 1 || problems[0] != (BlockProblem{Variant: 1, ContentViewID: draft.ID, Status: ContentDraft}) {
			t.Fatalf("CampaignBlockProblems = %+v, %v", problems, err)
		}
		if got, want := problems[0].Short(), "block "+joinFmt(draft.ID)+" is a draft"; got != want {
			t.Fatalf("Short=%q, want %q", got, want)
		}
		// Another app's campaign is not this app's to look into.
		other, err := e.db.CreateApp(ctx, "other", "free", 0)
		if err != nil {
			t.Fatal(err)
		}
		if p, err := e.db.CampaignBlockProblems(ctx, other.ID, c.ID); err != nil || p != nil {
			t.Fatalf("another app's view: %+v, %v", p, err)
		}
	})

	t.Run("CreateActive", func(t *testing.T) {
		n := countRows(t, e.db, `SELECT COUNT(*) FROM campaigns`)
		_, err := newCampaign(ptr(CampaignActive), nil)
		wantRefused(t, err, one)
		if got := countRows(t, e.db, `SELECT COUNT(*) FROM campaigns`); got != n {
			t.Fatalf("campaigns %d -> %d after a refused create, want nothing written", n, got)
		}
	})

	t.Run("Scheduler", func(t *testing.T) {
		start, _ := json.Marshal(campaignTestT0.Add(time.Minute).Format(time.RFC3339))
		c, err := newCampaign(nil, start)
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Set(campaignTestT0.Add(2 * time.Minute))
		defer e.clock.Set(campaignTestT0)
		// Every pass tries again and says why it cannot.
		for range 2 {
			res, err := e.db.RunSchedule(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []BlockedStart{{AppID: e.app, CampaignID: c.ID, Reason: reason}}
			if len(res.Started) != 0 || !slices.Equal(res.Blocked, want) {
				t.Fatalf("RunSchedule = %+v, want %d blocked: %q", res, c.ID, reason)
			}
		}
		if _, err := e.db.UpdateContent(ctx, e.app, draft.ID, ContentInput{Status: ptr(ContentPublished)}); err != nil {
			t.Fatal(err)
		}
		defer e.db.UpdateContent(ctx, e.app, draft.ID, ContentInput{Status: ptr(ContentDraft)})
		res, err := e.db.RunSchedule(ctx)
		if err != nil || !slices.Equal(res.Started, []int64{c.ID}) || len(res.Blocked) != 0 {
			t.Fatalf("RunSchedule after publishing = %+v, %v; want %d started", res, err, c.ID)
		}
		// Stopped for the next subtests, which need the block free.
		if _, err := e.db.SetCampaignStatus(ctx, e.app, c.ID, CampaignCompleted); err != nil {
			t.Fatal(err)
		}
	})

	// A block archived or deleted while its campaign sat archived is named
	// the same way, each on its own variant.
	t.Run("ArchivedAndDeleted", func(t *testing.T) {
		a, err := e.db.CreateContent(ctx, e.app, ContentInput{Name: ptr("A"), Status: ptr(ContentPublished)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.db.CreateContent(ctx, e.app, ContentInput{Name: ptr("B"), Status: ptr(ContentPublished)})
		if err != nil {
			t.Fatal(err)
		}
		vs := []VariantInput{{ContentViewID: &e.blocks[0]}, {ContentViewID: &a.ID}, {ContentViewID: &b.ID}}
		c, err := e.db.CreateCampaign(ctx, e.app, 0, CampaignInput{Name: ptr("Three"), EndDate: end, Variants: &vs})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.SetCampaignStatus(ctx, e.app, c.ID, CampaignArchived); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.UpdateContent(ctx, e.app, a.ID, ContentInput{Status: ptr(ContentArchived)}); err != nil {
			t.Fatal(err)
		}
		if err := e.db.DeleteContent(ctx, e.app, b.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.UnarchiveCampaign(ctx, e.app, c.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.db.SetCampaignStatus(ctx, e.app, c.ID, CampaignActive)
		wantRefused(t, err, map[string]any{
			"variants[1].contentViewId": "content block " + joinFmt(a.ID) + " is archived; publish it first",
			"variants[2].contentViewId": "content block " + joinFmt(b.ID) + " no longer exists; choose another block",
		})
	})
}

// reflectEqual compares two decoded details values by their JSON.
func reflectEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// A campaign started before blocks had to be published may still run with
// a draft block: the variant answer shows no block for it rather than an
// unpublished one.
func TestVariantHidesTheDraftBlockOfAnOlderCampaign(t *testing.T) {
	e := newCampaignTestEnv(t)
	ctx := context.Background()
	id := e.create(nil, campaignTestAt(time.Hour), "active")
	// The state such a campaign left behind, written as no API can now.
	if _, err := e.db.write.Exec(fmt.Sprintf(`UPDATE content_views SET status = 'draft' WHERE id = %d`, e.blocks[0])); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i := range 40 {
		b, err := e.db.Variant(ctx, e.app, id, &VariantRequest{UserID: fmt.Sprint("user-", i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			ContentViewID int64           `json:"contentViewId"`
			ContentView   json.RawMessage `json:"contentView"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		if shown := string(a.ContentView) != "null"; shown == (a.ContentViewID == e.blocks[0]) {
			t.Fatalf("answer %s: a draft block shown, or a published one hidden", b)
		}
		seen[a.ContentViewID] = true
	}
	if !seen[e.blocks[0]] || !seen[e.blocks[1]] {
		t.Fatalf("40 users all in one variant: %v", seen)
	}
}
