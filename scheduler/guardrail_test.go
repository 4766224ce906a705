package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/store"
)

// guardrailCampaign creates an active round-robin campaign of the env's
// two blocks with the metric as its one guardrail and the action given,
// assigns 40 users (the even ones see the control) and logs each one's
// spend. With regress, the treatment spends 9 less per user: a regression
// the always-valid sequence sees at 40 users. Without it, both arms spend
// alike.
func (e *campaignEnv) guardrailCampaign(name string, metric int64, action string, regress bool) *store.Campaign {
	e.t.Helper()
	ctx := context.Background()
	vs := []store.VariantInput{{ContentViewID: &e.blocks[0]}, {ContentViewID: &e.blocks[1]}}
	status, rr := store.CampaignActive, store.AssignRoundRobin
	end, _ := json.Marshal(e.clock.Now().Add(time.Hour).Format(time.RFC3339))
	in := store.CampaignInput{Name: &name, Status: &status, EndDate: end, AssignmentType: &rr, GoalEventID: json.RawMessage(`"signup"`),
		Metrics: json.RawMessage(fmt.Sprintf(`{"guardrails":[%d]}`, metric)), Variants: &vs}
	if action != "" {
		in.GuardrailAction = &action
	}
	c, err := e.db.CreateCampaign(ctx, e.app, 0, in)
	if err != nil {
		e.t.Fatal(err)
	}
	events := make([]*store.EventInput, 40)
	for i := range events {
		user := fmt.Sprintf("%s-u%d", name, i)
		if _, err := e.db.Variant(ctx, e.app, c.ID, &store.VariantRequest{UserID: user}, nil); err != nil {
			e.t.Fatal(err)
		}
		amount := 10 + i%4/2
		if regress && i%2 == 1 {
			amount -= 9
		}
		events[i] = &store.EventInput{EventID: "buy", UserID: user, Metadata: json.RawMessage(fmt.Sprintf(`{"amount":%d}`, amount))}
	}
	e.clock.Add(time.Second)
	if _, err := e.db.LogEvents(ctx, e.app, events); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// testScheduler is a campaign scheduler running on a store handle, counting
// its passes.
type testScheduler struct {
	passes atomic.Int64
	stop   func()
}

// startScheduler runs a campaign scheduler on db until stop, which waits
// for Run to return; the test's cleanup stops it too.
func (e *campaignEnv) startScheduler(db *store.DB) *testScheduler {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &testScheduler{}
	done := make(chan error, 1)
	c := &Campaigns{DB: db, Interval: 20 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Observe: func(_, _ int, err error) {
			if err != nil {
				e.t.Errorf("scheduler pass: %v", err)
			}
			s.passes.Add(1)
		}}
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
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
	e.t.Cleanup(s.stop)
	return s
}

// waitEach waits until each scheduler has made n more passes than when
// called, for at most 30 s.
func (e *campaignEnv) waitEach(n int64, ss ...*testScheduler) {
	e.t.Helper()
	from := make([]int64, len(ss))
	for i, s := range ss {
		from[i] = s.passes.Load()
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, s := range ss {
		for s.passes.Load() < from[i]+n {
			if time.Now().After(deadline) {
				e.t.Fatalf("scheduler %d made %d passes in 30s, want %d", i, s.passes.Load()-from[i], n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// sent returns the payloads of the event queued to the webhook, by
// campaign id.
func (e *campaignEnv) sent(db *store.DB, hook int64, event string) map[int64][]map[string]any {
	e.t.Helper()
	list, _, err := db.FindDeliveries(context.Background(), e.app, hook, "", store.ListOptions{Limit: 100, Page: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int64][]map[string]any{}
	for _, d := range list {
		if d.Event != event {
			continue
		}
		var data map[string]any // the event's data; the envelope is made when sent
		if err := json.Unmarshal(d.Payload, &data); err != nil {
			e.t.Fatal(err)
		}
		id := int64(data["campaignId"].(float64))
		out[id] = append(out[id], data)
	}
	return out
}

// TestGuardrailRegressedOnce: a regressed guardrail of an active campaign
// is reported once per campaign, metric and variant, whichever of two
// processes sharing the database looks, however many passes they make,
// and after a restart; with guardrailAction pause the campaign is also
// paused (campaign.paused, and an audit entry by the scheduler), with
// alert it keeps running, and a guardrail that did not regress sends
// nothing.
func TestGuardrailRegressedOnce(t *testing.T) {
	ctx := context.Background()
	e := newCampaignEnv(t)
	url, events := "http://127.0.0.1:9/hook", []string{"*"}
	hook, err := e.db.CreateWebhook(ctx, e.app, store.WebhookInput{URL: &url, Events: &events})
	if err != nil {
		t.Fatal(err)
	}
	var metric store.MetricInput
	if err := json.Unmarshal([]byte(`{"key":"spend","name":"Spend","type":"sum","eventId":"buy","property":"amount"}`), &metric); err != nil {
		t.Fatal(err)
	}
	m, err := e.db.CreateMetric(ctx, e.app, metric)
	if err != nil {
		t.Fatal(err)
	}
	alert := e.guardrailCampaign("alert", m.ID, "", true)
	pause := e.guardrailCampaign("pause", m.ID, store.GuardrailPause, true)
	fine := e.guardrailCampaign("fine", m.ID, store.GuardrailPause, false)
	if alert.GuardrailAction != store.GuardrailAlert || pause.GuardrailAction != store.GuardrailPause {
		t.Fatalf("guardrailAction %q, %q, want the default alert, and pause", alert.GuardrailAction, pause.GuardrailAction)
	}

	// A second handle on the same database stands for another replica.
	db2, err := store.Open(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	db2.Now = e.clock.Now
	s1, s2 := e.startScheduler(e.db), e.startScheduler(db2)
	e.waitStatus(pause.ID, store.CampaignPaused)
	e.waitEach(3, s1, s2)

	check := func(when string) {
		t.Helper()
		got := e.sent(e.db, hook.ID, store.EventGuardrailRegressed)
		for _, c := range []*store.Campaign{alert, pause} {
			if len(got[c.ID]) != 1 {
				t.Fatalf("%s: campaign %q: %d guardrail webhooks, want 1: %v", when, c.Name, len(got[c.ID]), got[c.ID])
			}
			p := got[c.ID][0]
			iv, _ := p["differenceInterval"].([]any)
			want := map[string]any{"campaignId": float64(c.ID), "campaignName": c.Name, "metricId": float64(m.ID), "metricKey": "spend",
				"variantId": float64(c.Variants[1].ID), "variantName": c.Variants[1].Name, "action": c.GuardrailAction}
			for k, v := range want {
				if p[k] != v {
					t.Fatalf("%s: payload %s=%v, want %v (%v)", when, k, p[k], v, p)
				}
			}
			if len(p) != 9 || p["difference"] != -9.0 || len(iv) != 2 || iv[0].(float64) > -9 || iv[1].(float64) >= 0 {
				t.Fatalf("%s: payload %v, want 9 fields, difference -9 and an interval below 0 around it", when, p)
			}
		}
		if len(got[fine.ID]) != 0 {
			t.Fatalf("%s: a guardrail that did not regress was reported: %v", when, got[fine.ID])
		}
		paused := e.sent(e.db, hook.ID, store.EventCampaignPaused)
		if len(paused[pause.ID]) != 1 || len(paused) != 1 {
			t.Fatalf("%s: campaign.paused %v, want once, for %q", when, paused, pause.Name)
		}
		if got := e.status(alert.ID); got != store.CampaignActive {
			t.Fatalf("%s: alert-only campaign status=%s, want active", when, got)
		}
		if got := e.status(fine.ID); got != store.CampaignActive {
			t.Fatalf("%s: campaign without regression status=%s, want active", when, got)
		}
	}
	check("after two replicas' passes")

	entries, err := e.db.FindAuditLog(ctx, store.AuditFilter{AppID: e.app, ObjectType: store.ObjectCampaign, Action: "campaign.status_changed", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var byScheduler []string
	for _, a := range entries {
		if a.Actor.Type == store.ActorScheduler {
			byScheduler = append(byScheduler, fmt.Sprintf("%s %s->%s", a.Object.Name, a.Changes["status"].Before, a.Changes["status"].After))
		}
	}
	if fmt.Sprint(byScheduler) != `[pause "active"->"paused"]` {
		t.Fatalf("status changes by the scheduler: %v, want the pause only", byScheduler)
	}

	// Restart: both processes stop, the paused campaign is resumed by
	// hand, and a new process looks again. The regressions were reported:
	// nothing is sent again and the resumed campaign keeps running.
	s1.stop()
	s2.stop()
	if _, err := e.db.SetCampaignStatus(ctx, e.app, pause.ID, store.CampaignActive); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	if e.db, err = store.Open(ctx, e.dsn); err != nil {
		t.Fatal(err)
	}
	db3 := e.db
	t.Cleanup(func() { db3.Close() })
	e.db.Now = e.clock.Now
	s3 := e.startScheduler(e.db)
	e.waitEach(3, s3)
	s3.stop()
	if got := e.status(pause.ID); got != store.CampaignActive {
		t.Fatalf("resumed campaign status=%s after a restart, want active", got)
	}
	check("after a restart")
	if found, err := db2.CheckGuardrails(ctx); err != nil || len(found) != 0 {
		t.Fatalf("another check: %v, %v, want nothing new", found, err)
	}
}
