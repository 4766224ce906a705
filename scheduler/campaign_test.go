package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/storetest"
	"service/internal/testclock"
	"service/internal/testlog"
	"service/store"
)

// campaignT0 is the test clock's start: far from any real date, so only the
// test clock decides what is due.
var campaignT0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

// campaignEnv is a database on the test clock with one app and two blocks.
type campaignEnv struct {
	t      *testing.T
	dsn    string
	db     *store.DB
	clock  *testclock.Clock
	app    int64
	blocks []int64
	// passes counts the scheduler's runs, to wait for ticks without
	// guessing their timing.
	passes atomic.Int64
}

func newCampaignEnv(t *testing.T) *campaignEnv {
	t.Helper()
	ctx := context.Background()
	dsn := storetest.DB(t, filepath.Join(t.TempDir(), "sched.db"))
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := testclock.New(campaignT0)
	db.Now = c.Now
	app, err := db.CreateApp(ctx, "sched", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := &campaignEnv{t: t, dsn: dsn, db: db, clock: c, app: app.ID}
	pub := store.ContentPublished
	for _, n := range []string{"a", "b"} {
		cv, err := db.CreateContent(ctx, app.ID, store.ContentInput{Name: &n, Status: &pub})
		if err != nil {
			t.Fatal(err)
		}
		e.blocks = append(e.blocks, cv.ID)
	}
	return e
}

// create makes a campaign with the dates given (nil: unset) in status
// draft or active, then walks it to status.
func (e *campaignEnv) create(start, end *time.Time, status string) int64 {
	e.t.Helper()
	ctx := context.Background()
	date := func(t *time.Time) json.RawMessage {
		if t == nil {
			return nil
		}
		b, _ := json.Marshal(t.Format(time.RFC3339Nano))
		return b
	}
	name := "c"
	vs := []store.VariantInput{{ContentViewID: &e.blocks[0]}, {ContentViewID: &e.blocks[1]}}
	c, err := e.db.CreateCampaign(ctx, e.app, 0, store.CampaignInput{Name: &name, StartDate: date(start), EndDate: date(end), Variants: &vs})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range map[string][]string{"draft": nil, "active": {"active"}, "paused": {"active", "paused"}}[status] {
		if _, err := e.db.SetCampaignStatus(ctx, e.app, c.ID, s); err != nil {
			e.t.Fatal(err)
		}
	}
	return c.ID
}

func (e *campaignEnv) status(id int64) string {
	e.t.Helper()
	c, err := e.db.FindCampaignByID(context.Background(), e.app, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return c.Status
}

// waitStatus polls until the campaign has status want, for at most 30 s: a
// loaded machine can delay a 20 ms tick by seconds.
func (e *campaignEnv) waitStatus(id int64, want string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := e.status(id)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("campaign %d: status=%s after 30s, want %s", id, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// run starts the scheduler; the test's cleanup stops it and waits for Run
// to return before the database closes.
func (e *campaignEnv) run(interval time.Duration, log io.Writer) {
	e.t.Helper()
	if log == nil {
		log = io.Discard
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s := &Campaigns{DB: e.db, Interval: interval, Log: slog.New(slog.NewTextHandler(log, nil)),
		Observe: func(int, int, error) { e.passes.Add(1) }}
	go func() { done <- s.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				e.t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			e.t.Error("Run did not return after its context ended")
		}
	})
}

func at(d time.Duration) *time.Time {
	t := campaignT0.Add(d)
	return &t
}

func TestCampaignSchedulerStartsDraftOnTick(t *testing.T) {
	e := newCampaignEnv(t)
	e.run(20*time.Millisecond, nil)
	id := e.create(at(time.Minute), at(time.Hour), "draft")
	time.Sleep(60 * time.Millisecond) // three ticks before the startDate
	if got := e.status(id); got != "draft" {
		t.Fatalf("status=%s before the startDate, want draft", got)
	}
	e.clock.Set(campaignT0.Add(2 * time.Minute))
	e.waitStatus(id, "active")
	c, err := e.db.FindCampaignByID(context.Background(), e.app, id)
	if err != nil {
		t.Fatal(err)
	}
	// The scheduler starts it as planned; only an early manual activation
	// moves the startDate.
	if got, want := c.StartDate.Time, *at(time.Minute); !got.Equal(want) {
		t.Fatalf("startDate=%v, want the planned %v", got, want)
	}
}

func TestCampaignSchedulerCompletesOnTick(t *testing.T) {
	e := newCampaignEnv(t)
	active := e.create(nil, at(time.Hour), "active")
	paused := e.create(nil, at(time.Hour), "paused")
	e.run(20*time.Millisecond, nil)
	time.Sleep(60 * time.Millisecond)
	if a, p := e.status(active), e.status(paused); a != "active" || p != "paused" {
		t.Fatalf("before the endDate: %s, %s", a, p)
	}
	e.clock.Set(campaignT0.Add(time.Hour)) // the endDate is exclusive
	e.waitStatus(active, "completed")
	e.waitStatus(paused, "completed")
}

// A pass after downtime acts on every date that passed meanwhile: the
// interval here is an hour, so only the pass Run makes at start can act.
func TestCampaignSchedulerCatchUp(t *testing.T) {
	e := newCampaignEnv(t)
	missed := e.create(at(time.Hour), at(2*time.Hour), "draft") // both dates passed while down
	unscheduled := e.create(nil, at(10*time.Hour), "draft")
	starts := e.create(at(time.Hour), at(10*time.Hour), "draft")
	ends := e.create(nil, at(2*time.Hour), "active")
	endsPaused := e.create(nil, at(2*time.Hour), "paused")
	e.clock.Set(campaignT0.Add(5 * time.Hour))

	e.run(time.Hour, nil)
	e.waitStatus(starts, "active")
	e.waitStatus(ends, "completed")
	e.waitStatus(endsPaused, "completed")
	// A draft whose whole window passed is not started: it would only
	// complete at once with nothing to show.
	if got := e.status(missed); got != "draft" {
		t.Fatalf("draft whose window passed: status=%s, want draft", got)
	}
	if got := e.status(unscheduled); got != "draft" {
		t.Fatalf("draft without startDate: status=%s, want draft", got)
	}
}

// A failing pass is logged and the loop goes on, and still stops on time.
func TestCampaignSchedulerSurvivesErrors(t *testing.T) {
	e := newCampaignEnv(t)
	var log testlog.Buffer
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	e.run(5*time.Millisecond, &log)
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(log.String(), "campaign scheduler") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no repeated error log after 30s: %q", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "level=ERROR") {
		t.Fatalf("log=%q, want errors logged", log.String())
	}
}

func TestCampaignSchedulerLogsMoves(t *testing.T) {
	e := newCampaignEnv(t)
	id := e.create(nil, at(time.Hour), "active")
	e.clock.Set(campaignT0.Add(2 * time.Hour))
	var log testlog.Buffer
	e.run(time.Hour, &log)
	e.waitStatus(id, "completed")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "completed=") {
		if time.Now().After(deadline) {
			t.Fatalf("log=%q, want the completed campaigns named", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitPasses waits until the scheduler has run n more times than when
// called, for at most 30 s.
func (e *campaignEnv) waitPasses(n int64) {
	e.t.Helper()
	want := e.passes.Load() + n
	deadline := time.Now().Add(30 * time.Second)
	for e.passes.Load() < want {
		if time.Now().After(deadline) {
			e.t.Fatalf("%d scheduler passes after 30s, want %d", e.passes.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// A due draft whose block is a draft does not start: the scheduler says
// why once, not every tick, tries again each tick, and starts it at the
// first tick after the block is published.
func TestCampaignSchedulerWaitsForPublishedBlocks(t *testing.T) {
	e := newCampaignEnv(t)
	ctx := context.Background()
	n := "draft block"
	block, err := e.db.CreateContent(ctx, e.app, store.ContentInput{Name: &n})
	if err != nil {
		t.Fatal(err)
	}
	e.blocks[1] = block.ID
	id := e.create(at(time.Minute), at(time.Hour), "draft")
	e.clock.Set(campaignT0.Add(2 * time.Minute))
	var log testlog.Buffer
	e.run(5*time.Millisecond, &log)
	e.waitPasses(5)
	if got := e.status(id); got != "draft" {
		t.Fatalf("status=%s with a draft block, want draft", got)
	}
	lines := strings.Count(log.String(), "will not start")
	want := fmt.Sprintf("campaignId=%d reason=\"content block %d is a draft; publish it first\"", id, block.ID)
	if lines != 1 || !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "level=WARN") {
		t.Fatalf("after 5 passes the log has %d lines about it, want one warning with %s:\n%s", lines, want, log.String())
	}
	pub := store.ContentPublished
	if _, err := e.db.UpdateContent(ctx, e.app, block.ID, store.ContentInput{Status: &pub}); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(id, "active")
	if got := strings.Count(log.String(), "will not start"); got != 1 {
		t.Fatalf("%d lines about the blocked start, want 1:\n%s", got, log.String())
	}
}
