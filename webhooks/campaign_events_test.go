package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"service/internal/testclock"
	"service/jsonjs"
	"service/store"
	"service/webhooks"
)

// ceEnv is the e2e environment with a controlled clock, two published
// blocks and a webhook subscribed to everything.
type ceEnv struct {
	*e2eEnv
	clock  *testclock.Clock
	blocks [2]int64
	all    *e2eReceiver
	allID  int64
}

const ceSecret = "whsec_campaign_ünï"

func ceNew(t *testing.T) *ceEnv {
	t.Helper()
	e := &ceEnv{e2eEnv: e2eNew(t), clock: testclock.New(time.Now().Add(-2 * time.Hour).Truncate(time.Second))}
	// Set before the dispatcher starts: nothing else reads DB.Now yet.
	e.DB.Now = e.clock.Now
	// Blocks first, so their content.published events reach no webhook.
	for i := range e.blocks {
		e.blocks[i] = e2eNum(e.publish(fmt.Sprintf("block %c", 'A'+i)), "id")
	}
	e.all = e2eListen(t, nil)
	e.start(20*time.Millisecond, nil)
	e.allID = e.hook(map[string]any{"url": e.all.URL, "secret": ceSecret})
	return e
}

// campaign creates a two-variant round-robin campaign (Control first, then
// Treatment) with goal event "purchase"; extra fields override.
func (e *ceEnv) campaign(name string, extra map[string]any) int64 {
	e.t.Helper()
	body := map[string]any{
		"name": name, "goalEventId": "purchase", "assignmentType": "round_robin", "endDate": e.clock.At(time.Hour),
		"variants": []any{
			map[string]any{"contentViewId": e.blocks[0], "name": "Control", "isControl": true},
			map[string]any{"contentViewId": e.blocks[1], "name": "Treatment"},
		},
	}
	for k, v := range extra {
		body[k] = v
	}
	return e2eNum(e.call(http.StatusCreated, "POST", fmt.Sprintf("/v1/apps/%d/campaigns", e.App), e.Admin, body), "id")
}

func (e *ceEnv) status(id int64, status string) map[string]any {
	e.t.Helper()
	return e.call(http.StatusOK, "PATCH", fmt.Sprintf("/v1/campaigns/%d/status", id), e.Admin, map[string]any{"status": status})
}

// assign requests a variant for user and returns the variant's name.
func (e *ceEnv) assign(id int64, user string) string {
	e.t.Helper()
	a := e.call(http.StatusOK, "POST", fmt.Sprintf("/v1/apps-external/%d/campaigns/%d/variant", e.App, id), e.Cli, map[string]any{"userId": user})
	name, _ := a["variantName"].(string)
	if a["impressionRecorded"] != true || name == "" {
		e.t.Fatalf("variant for %s: %v", user, a)
	}
	return name
}

func (e *ceEnv) convert(user string) {
	e.t.Helper()
	e.call(http.StatusCreated, "POST", fmt.Sprintf("/v1/apps/%d/events", e.App), e.Cli, map[string]any{"eventId": "purchase", "userId": user})
}

// ceEvent is one verified delivery: its kind, envelope timestamp and the
// exact signed data bytes, parsed in order.
type ceEvent struct {
	Kind, Timestamp string
	Raw             []byte
	Data            *jsonjs.Object
}

func (ev ceEvent) campaignID() int64 {
	v, _ := ev.Data.Get("campaignId")
	n, _ := v.(json.Number).Int64()
	return n
}

// ceCollect waits for n deliveries on rcv, checks that the webhook has
// exactly n queued, and verifies each one's headers, envelope and
// signature.
func (e *ceEnv) ceCollect(t *testing.T, rcv *e2eReceiver, hook int64, secret string, n int) []ceEvent {
	t.Helper()
	hits := rcv.wait(t, n, e2ePatience)
	ds := e.deliveries(hook)
	if got, want := len(ds), n; got != want {
		var kinds []string
		for _, d := range ds {
			kinds = append(kinds, d["event"].(string))
		}
		t.Fatalf("webhook %d has %d deliveries %v, want %d", hook, got, kinds, want)
	}
	byID := map[int64]map[string]any{}
	for _, d := range ds {
		byID[e2eNum(d, "id")] = d
	}
	var out []ceEvent
	for _, h := range hits {
		data := h.Data(t)
		var env struct {
			Event     string          `json:"event"`
			Timestamp string          `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(h.Body, &env); err != nil {
			t.Fatalf("body is not JSON: %v: %s", err, h.Body)
		}
		if got, want := h.Event(), env.Event; got != want {
			t.Fatalf("X-Service-Event=%q, envelope event %q", got, want)
		}
		id, err := strconv.ParseInt(h.Header.Get("X-Service-Delivery-ID"), 10, 64)
		if err != nil || id <= 0 {
			t.Fatalf("X-Service-Delivery-ID=%q is not a positive number", h.Header.Get("X-Service-Delivery-ID"))
		}
		if d := byID[id]; d == nil || d["event"] != env.Event || d["createdAt"] != env.Timestamp {
			t.Fatalf("delivery %d (%s at %s) is not one of webhook %d's: %v", id, env.Event, env.Timestamp, hook, d)
		}
		if want := fmt.Sprintf(`{"event":%q,"timestamp":%q,"data":%s}`, env.Event, env.Timestamp, data); string(h.Body) != want {
			t.Fatalf("body=%s\nwant %s", h.Body, want)
		}
		if !webhooks.Verify(secret, data, h.Header.Get("X-Service-Signature")) {
			t.Fatalf("%s: signature %q does not verify over %s", env.Event, h.Header.Get("X-Service-Signature"), data)
		}
		parsed, err := jsonjs.Parse(data)
		if err != nil {
			t.Fatalf("%s: data: %v", env.Event, err)
		}
		again, err := jsonjs.Stringify(parsed)
		if err != nil || string(again) != string(data) {
			t.Fatalf("%s: JSON.stringify(JSON.parse(data)) = %s (%v), signed %s", env.Event, again, err, data)
		}
		obj, ok := parsed.(*jsonjs.Object)
		if !ok {
			t.Fatalf("%s: data is not an object: %s", env.Event, data)
		}
		ceWantShape(t, env.Event, obj, ceSchema[env.Event])
		out = append(out, ceEvent{env.Event, env.Timestamp, data, obj})
	}
	return out
}

// ceField is a documented data field: its name and JSON type ("number",
// "string", "boolean", "object", "string|null"); object fields nest.
type ceField struct {
	Name, Type string
	Fields     []ceField
}

var ceSchema = map[string][]ceField{
	store.EventCampaignStarted: {{"campaignId", "number", nil}, {"campaignName", "string", nil},
		{"startDate", "string", nil}, {"endDate", "string", nil}},
	store.EventCampaignPaused: {{"campaignId", "number", nil}, {"campaignName", "string", nil}, {"pausedAt", "string", nil}},
	store.EventCampaignCompleted: {{"campaignId", "number", nil}, {"campaignName", "string", nil}, {"completedAt", "string", nil},
		{"analytics", "object", []ceField{{"totalImpressions", "number", nil}, {"totalConversions", "number", nil},
			{"conversionRate", "number", nil}, {"bestVariant", "string", nil}, {"statisticalSignificance", "boolean", nil},
			{"winningVariant", "string|null", nil}}}},
	store.EventWinnerDeclared: {{"campaignId", "number", nil}, {"campaignName", "string", nil}, {"winner", "string", nil},
		{"pValue", "number", nil}, {"confidenceLevel", "number", nil}, {"effectSize", "number", nil}, {"interpretation", "string", nil}},
}

// ceWantShape fails unless obj has exactly the fields, in that order, with
// those types.
func ceWantShape(t *testing.T, where string, obj *jsonjs.Object, fields []ceField) {
	t.Helper()
	if fields == nil {
		t.Fatalf("%s: unexpected event", where)
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	if got := obj.Keys(); !slices.Equal(got, names) {
		t.Fatalf("%s: keys %v, want %v", where, got, names)
	}
	for _, f := range fields {
		v, _ := obj.Get(f.Name)
		var typ string
		switch v.(type) {
		case json.Number:
			typ = "number"
		case string:
			typ = "string"
		case bool:
			typ = "boolean"
		case *jsonjs.Object:
			typ = "object"
		case nil:
			typ = "null"
		default:
			typ = fmt.Sprintf("%T", v)
		}
		if typ != f.Type && !slices.Contains(strings.Split(f.Type, "|"), typ) {
			t.Fatalf("%s.%s is %s, want %s", where, f.Name, typ, f.Type)
		}
		if typ == "object" {
			ceWantShape(t, where+"."+f.Name, v.(*jsonjs.Object), f.Fields)
		}
	}
}

// ceByKind indexes events by kind and campaign id, failing on duplicates.
func ceByKind(t *testing.T, evs []ceEvent) map[string]ceEvent {
	t.Helper()
	m := map[string]ceEvent{}
	for _, ev := range evs {
		k := fmt.Sprint(ev.Kind, " ", ev.campaignID())
		if _, dup := m[k]; dup {
			t.Fatalf("%s delivered twice", k)
		}
		m[k] = ev
	}
	return m
}

func ceWantData(t *testing.T, got map[string]ceEvent, kind string, id int64, want string) ceEvent {
	t.Helper()
	ev, ok := got[fmt.Sprint(kind, " ", id)]
	if !ok {
		t.Fatalf("no %s for campaign %d", kind, id)
	}
	if string(ev.Raw) != want {
		t.Fatalf("%s data=%s\nwant %s", kind, ev.Raw, want)
	}
	return ev
}

func TestCampaignEventsLifecycleThroughAPI(t *testing.T) {
	e := ceNew(t)
	paused := e2eListen(t, nil)
	pausedID := e.hook(map[string]any{"url": paused.URL, "secret": "only-paused", "events": []string{"webhook.campaign_paused"}})
	failed := e2eListen(t, nil)
	failedID := e.hook(map[string]any{"url": failed.URL, "secret": "never"})
	if w := e.call(http.StatusOK, "PATCH", fmt.Sprintf("/v1/webhooks/%d", failedID), e.Admin, map[string]any{"status": "FAILED"}); w["status"] != "FAILED" {
		t.Fatalf("webhook=%v, want FAILED", w)
	}

	const name = `Spring <sale> & "more" — ünï`
	const quoted = `"Spring <sale> & \"more\" — ünï"`
	end := e.clock.At(time.Hour)
	id := e.campaign(name, nil)

	e.clock.Add(time.Second)
	startedAt := e.clock.Stamp()
	e.status(id, "active")
	e.clock.Add(time.Second)
	pausedAt := e.clock.Stamp()
	e.status(id, "paused")
	e.clock.Add(time.Second)
	e.status(id, "active") // resuming emits nothing

	// Round robin: Control, Treatment, Control, Treatment; one conversion.
	for i, want := range []string{"Control", "Treatment", "Control", "Treatment"} {
		if got := e.assign(id, fmt.Sprint("user-", i)); got != want {
			t.Fatalf("user-%d got %s, want %s", i, got, want)
		}
	}
	e.clock.Add(time.Second)
	e.convert("user-1")
	e.clock.Add(time.Second)
	completedAt := e.clock.Stamp()
	e.status(id, "completed")

	events := ceByKind(t, e.ceCollect(t, e.all, e.allID, ceSecret, 3))
	ev := ceWantData(t, events, store.EventCampaignStarted, id,
		fmt.Sprintf(`{"campaignId":%d,"campaignName":%s,"startDate":%q,"endDate":%q}`, id, quoted, startedAt, end))
	if ev.Timestamp != startedAt {
		t.Fatalf("started envelope timestamp=%s, want %s", ev.Timestamp, startedAt)
	}
	ceWantData(t, events, store.EventCampaignPaused, id,
		fmt.Sprintf(`{"campaignId":%d,"campaignName":%s,"pausedAt":%q}`, id, quoted, pausedAt))
	ceWantData(t, events, store.EventCampaignCompleted, id,
		fmt.Sprintf(`{"campaignId":%d,"campaignName":%s,"completedAt":%q,"analytics":{"totalImpressions":4,"totalConversions":1,"conversionRate":25,"bestVariant":"Treatment","statisticalSignificance":false,"winningVariant":null}}`,
			id, quoted, completedAt))

	t.Run("SubscribedToPausedOnly", func(t *testing.T) {
		evs := e.ceCollect(t, paused, pausedID, "only-paused", 1)
		if got, want := evs[0].Kind, store.EventCampaignPaused; got != want {
			t.Fatalf("event=%s, want %s", got, want)
		}
		if got, want := string(evs[0].Raw), string(events[store.EventCampaignPaused+" "+strconv.FormatInt(id, 10)].Raw); got != want {
			t.Fatalf("data=%s, want the same bytes as the other webhook got: %s", got, want)
		}
	})
	t.Run("FailedWebhookGetsNothing", func(t *testing.T) {
		if n := len(e.deliveries(failedID)); n != 0 {
			t.Fatalf("a FAILED webhook has %d deliveries queued", n)
		}
		if n := len(failed.Hits()); n != 0 {
			t.Fatalf("a FAILED webhook received %d requests", n)
		}
	})
}

func TestCampaignEventsFromScheduler(t *testing.T) {
	e := ceNew(t)
	start, end := e.clock.At(time.Minute), e.clock.At(time.Hour)
	id := e.campaign("Scheduled", map[string]any{"startDate": start, "endDate": end})
	// An untouched draft is not started before its startDate.
	if r, err := e.DB.RunSchedule(context.Background()); err != nil || len(r.Started)+len(r.Completed) != 0 {
		t.Fatalf("early pass=%+v, %v; want nothing done", r, err)
	}

	e.clock.Add(time.Minute + time.Second)
	passAt := e.clock.Stamp()
	r, err := e.DB.RunSchedule(context.Background())
	if err != nil || !slices.Equal(r.Started, []int64{id}) || len(r.Completed) != 0 {
		t.Fatalf("pass=%+v, %v; want campaign %d started", r, err, id)
	}
	if got := e.call(http.StatusOK, "GET", fmt.Sprintf("/v1/campaigns/%d", id), e.Admin, nil)["status"]; got != "active" {
		t.Fatalf("status=%v, want active", got)
	}
	if got, want := e.assign(id, "u-1"), "Control"; got != want {
		t.Fatalf("u-1 got %s, want %s", got, want)
	}
	if got, want := e.assign(id, "u-2"), "Treatment"; got != want {
		t.Fatalf("u-2 got %s, want %s", got, want)
	}
	e.clock.Add(time.Second)
	e.convert("u-1")

	e.clock.Add(time.Hour)
	completedAt := e.clock.Stamp()
	r, err = e.DB.RunSchedule(context.Background())
	if err != nil || !slices.Equal(r.Completed, []int64{id}) || len(r.Started) != 0 {
		t.Fatalf("pass=%+v, %v; want campaign %d completed", r, err, id)
	}

	got := ceByKind(t, e.ceCollect(t, e.all, e.allID, ceSecret, 2))
	ev := ceWantData(t, got, store.EventCampaignStarted, id,
		fmt.Sprintf(`{"campaignId":%d,"campaignName":"Scheduled","startDate":%q,"endDate":%q}`, id, start, end))
	if got, want := ev.Timestamp, passAt; got != want {
		t.Fatalf("started envelope timestamp=%s, want the time of the scheduler's pass %s", got, want)
	}
	ceWantData(t, got, store.EventCampaignCompleted, id,
		fmt.Sprintf(`{"campaignId":%d,"campaignName":"Scheduled","completedAt":%q,"analytics":{"totalImpressions":2,"totalConversions":1,"conversionRate":50,"bestVariant":"Control","statisticalSignificance":false,"winningVariant":null}}`,
			id, completedAt))
}

// ceConvertTreatment assigns users u-0..u-(n-1) round robin, so they
// alternate Control, Treatment, and then logs the goal event for the
// Treatment users i that pick selects. It returns how many converted.
func (e *ceEnv) ceConvertTreatment(id int64, n int, pick func(i int) bool) int {
	e.t.Helper()
	var convert []string
	for i := range n {
		user := fmt.Sprint("u-", i)
		if e.assign(id, user) == "Treatment" && pick(i) {
			convert = append(convert, user)
		}
	}
	e.clock.Add(time.Second)
	for _, u := range convert {
		e.convert(u)
	}
	return len(convert)
}

func TestCampaignEventsWinnerDeclared(t *testing.T) {
	e := ceNew(t)
	id := e.campaign("Checkout button", nil)
	e.status(id, "active")
	// 400 users, 200 per arm; 67 Treatment users convert, no Control user.
	conv := e.ceConvertTreatment(id, 400, func(i int) bool { return i%6 == 1 })
	if got, want := conv, 67; got != want {
		t.Fatalf("conversions=%d, want %d", got, want)
	}
	ana := e.call(http.StatusOK, "GET", fmt.Sprintf("/v1/campaigns/%d/analytics", id), e.Admin, nil)
	if ana["statisticalSignificance"] != true {
		t.Fatalf("analytics=%v, want significant", ana)
	}
	e.clock.Add(time.Second)
	completedAt := e.clock.Stamp()
	e.status(id, "completed")

	got := ceByKind(t, e.ceCollect(t, e.all, e.allID, ceSecret, 3))
	treatRate := float64(conv) / 200 * 100
	ceWantData(t, got, store.EventCampaignCompleted, id,
		fmt.Sprintf(`{"campaignId":%d,"campaignName":"Checkout button","completedAt":%q,"analytics":{"totalImpressions":400,"totalConversions":%d,"conversionRate":%s,"bestVariant":"Treatment","statisticalSignificance":true,"winningVariant":"Treatment"}}`,
			id, completedAt, conv, strconv.FormatFloat(float64(conv)/400*100, 'f', -1, 64)))

	ev, ok := got[fmt.Sprint(store.EventWinnerDeclared, " ", id)]
	if !ok {
		t.Fatalf("no %s; got %v", store.EventWinnerDeclared, got)
	}
	// Queued in the completion's transaction, campaign.completed first,
	// with consecutive delivery ids: a receiver that needs the order can
	// sort by X-Service-Delivery-ID (arrival order is not promised).
	ids := map[string]int64{}
	for _, d := range e.deliveries(e.allID) {
		ids[d["event"].(string)] = e2eNum(d, "id")
	}
	if c, w := ids[store.EventCampaignCompleted], ids[store.EventWinnerDeclared]; c == 0 || w != c+1 {
		t.Fatalf("delivery ids: completed %d, winner_declared %d, want consecutive", c, w)
	}
	if ev.Timestamp != completedAt {
		t.Fatalf("winner_declared envelope timestamp=%s, want %s", ev.Timestamp, completedAt)
	}
	field := func(k string) any { v, _ := ev.Data.Get(k); return v }
	number := func(k string) float64 {
		f, err := field(k).(json.Number).Float64()
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return f
	}
	if got, want := number("campaignId"), float64(id); got != want {
		t.Fatalf("campaignId=%v, want %v", got, want)
	}
	if got, want := field("campaignName"), "Checkout button"; got != want {
		t.Fatalf("campaignName=%v, want %v", got, want)
	}
	if got, want := field("winner"), "Treatment"; got != want {
		t.Fatalf("winner=%v, want %v", got, want)
	}
	p := number("pValue")
	if want := ana["pValue"].(float64); p != want || p >= 1e-6 {
		t.Fatalf("pValue=%v, want the analytics' %v, and tiny", p, want)
	}
	if got, want := number("confidenceLevel"), ana["confidenceLevel"].(float64); got != want || math.Abs(got-(1-p)*100) > 1e-9 {
		t.Fatalf("confidenceLevel=%v, want %v = (1 - pValue) * 100", got, want)
	}
	// Cohen's h between the winner (Treatment) and the best other arm
	// (Control, 0 %).
	h := 2*math.Asin(math.Sqrt(treatRate/100)) - 2*math.Asin(0)
	if got := number("effectSize"); math.Abs(got-h) > 1e-9 {
		t.Fatalf("effectSize=%v, want Cohen's h %v", got, h)
	}
	s, _ := field("interpretation").(string)
	if s == "" || !strings.Contains(s, "Treatment") || !strings.HasSuffix(s, ".") || strings.Count(s, ". ") != 0 || strings.ContainsAny(s, "\n") {
		t.Fatalf("interpretation=%q, want one plain sentence naming the winner", s)
	}
	t.Logf("winner_declared data: %s", ev.Raw)
}

func TestCampaignEventsNoWinnerWhenNotSignificant(t *testing.T) {
	e := ceNew(t)
	id := e.campaign("Close call", nil)
	e.status(id, "active")
	// 40 users, 20 per arm: 2 conversions against none is far from
	// significant, though Treatment is ahead.
	conv := e.ceConvertTreatment(id, 40, func(i int) bool { return i == 1 || i == 3 })
	if got, want := conv, 2; got != want {
		t.Fatalf("conversions=%d, want %d", got, want)
	}
	e.clock.Add(time.Second)
	completedAt := e.clock.Stamp()
	e.status(id, "completed")
	got := ceByKind(t, e.ceCollect(t, e.all, e.allID, ceSecret, 2))
	ceWantData(t, got, store.EventCampaignCompleted, id,
		fmt.Sprintf(`{"campaignId":%d,"campaignName":"Close call","completedAt":%q,"analytics":{"totalImpressions":40,"totalConversions":2,"conversionRate":5,"bestVariant":"Treatment","statisticalSignificance":false,"winningVariant":null}}`,
			id, completedAt))
	if _, ok := got[fmt.Sprint(store.EventWinnerDeclared, " ", id)]; ok {
		t.Fatalf("winner_declared sent without a significant winner")
	}
}
