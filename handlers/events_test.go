package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"service/internal/testclock"
	"service/jsonjs"
	"service/store"
)

// evT0 is the moment event tests start at; campaigns end evRun later.
var evT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const evRun = 30 * 24 * time.Hour

// evSetup is an environment whose database clock stands at evT0.
func evSetup(t testing.TB) (*testEnv, *testclock.Clock) {
	t.Helper()
	e := newEnv(t)
	c := testclock.New(evT0)
	e.DB.Now = c.Now
	return e, c
}

// evCampaign is a campaign created by evCreateCampaign: its id and its
// variant ids in ascending order (round robin hands them out in that order).
type evCampaign struct {
	id       int64
	variants []int64
}

// evCreateCampaign creates an active round-robin campaign with two variants
// and the goal event, ending evRun after the clock's start. extra fields
// override the body.
func (e *testEnv) evCreateCampaign(goal string, extra map[string]any) evCampaign {
	e.t.Helper()
	a, b := e.mustContent("Control block", "published"), e.mustContent("Treatment block", "published")
	body := map[string]any{
		"name":           "Checkout test",
		"status":         "active",
		"endDate":        evT0.Add(evRun).Format(time.RFC3339),
		"goalEventId":    goal,
		"assignmentType": "round_robin",
		"variants": []any{
			map[string]any{"name": "Control", "contentViewId": a, "isControl": true},
			map[string]any{"name": "Treatment", "contentViewId": b},
		},
	}
	for k, v := range extra {
		body[k] = v
	}
	m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, body)
	c := evCampaign{id: num(m, "id")}
	got := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d", c.id), e.Admin, nil)
	if got["status"] != "active" {
		e.t.Fatalf("campaign status=%v, want active", got["status"])
	}
	for _, v := range got["variants"].([]any) {
		c.variants = append(c.variants, num(v.(map[string]any), "id"))
	}
	slices.Sort(c.variants)
	return c
}

// evAssign requests the variant with the client key and returns the
// assigned variant id (0 when not assigned).
func (e *testEnv) evAssign(cid int64, body map[string]any) int64 {
	e.t.Helper()
	m := e.must(http.StatusOK, "POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, cid), e.Cli, body)
	return num(m, "variantId")
}

// evLog logs an event with the client key and returns the answer.
func (e *testEnv) evLog(body any) map[string]any {
	e.t.Helper()
	return e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, body)
}

// evConversions returns the campaign's conversions per variant id.
func (e *testEnv) evConversions(cid int64) map[int64]int64 {
	e.t.Helper()
	m := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d", cid), e.Admin, nil)
	out := map[int64]int64{}
	for _, v := range m["variants"].([]any) {
		vm := v.(map[string]any)
		out[num(vm, "id")] = num(vm, "conversions")
	}
	return out
}

// evWantConversions fails unless the variants (ascending id) carry want.
func (e *testEnv) evWantConversions(c evCampaign, want ...int64) {
	e.t.Helper()
	got := e.evConversions(c.id)
	for i, v := range c.variants {
		if got[v] != want[i] {
			e.t.Fatalf("conversions=%v (variants %v), want %v", got, c.variants, want)
		}
	}
}

// evList queries the app's events with the admin key.
func (e *testEnv) evList(query string) []map[string]any {
	e.t.Helper()
	m := e.must(http.StatusOK, "GET", pathf("/v1/apps/%d/events?%s", e.App.ID, query), e.Admin, nil)
	data, ok := m["data"].([]any)
	if !ok {
		e.t.Fatalf("data is not a list: %v", m)
	}
	if got, want := num(m, "count"), int64(len(data)); got != want {
		e.t.Fatalf("count=%d, len(data)=%d", got, want)
	}
	out := make([]map[string]any, len(data))
	for i, d := range data {
		out[i] = d.(map[string]any)
	}
	return out
}

func evIDs(list []map[string]any) []int64 {
	ids := make([]int64, len(list))
	for i, m := range list {
		ids[i] = num(m, "id")
	}
	return ids
}

func TestEventLogAnswer(t *testing.T) {
	e, clock := evSetup(t)
	var last int64
	for _, tc := range []struct {
		name string
		key  string
	}{{"Admin", e.Admin}, {"Client", e.Cli}} {
		t.Run(tc.name, func(t *testing.T) {
			clock.Add(1234 * time.Millisecond)
			m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", e.App.ID), tc.key,
				map[string]any{"eventId": "signup", "userId": "u-" + tc.name, "sessionId": "s1", "metadata": map[string]any{"plan": "pro", "amount": 12.5}})
			if got, want := len(m), 4; got != want {
				t.Fatalf("answer has %d fields, want 4: %v", got, m)
			}
			if m["success"] != true || m["eventId"] != "signup" || m["timestamp"] != clock.Stamp() {
				t.Fatalf("answer=%v, want success, eventId signup, timestamp %s", m, clock.Stamp())
			}
			if id := num(m, "id"); id <= last {
				t.Fatalf("id=%d, want a new id above %d", id, last)
			} else {
				last = id
			}
		})
	}
	// The stored event reads back as sent.
	list := e.evList("userId=u-Client")
	if len(list) != 1 {
		t.Fatalf("events=%v, want 1", list)
	}
	ev := list[0]
	meta, _ := json.Marshal(ev["metadata"])
	if num(ev, "id") != last || ev["eventId"] != "signup" || ev["sessionId"] != "s1" || string(meta) != `{"amount":12.5,"plan":"pro"}` || ev["timestamp"] != clock.Stamp() {
		t.Fatalf("stored event=%v", ev)
	}

	for _, tc := range []struct {
		name   string
		key    string
		app    int64
		status int
		code   string
	}{
		{"ReadKey", e.Read, e.App.ID, http.StatusForbidden, "FORBIDDEN"},
		{"NoKey", "", e.App.ID, http.StatusUnauthorized, "UNAUTHORIZED"},
		{"OtherApp", e.Cli, e.App.ID + 1, http.StatusForbidden, "FORBIDDEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "OtherApp" {
				e.newApp("other", "enterprise", 1000)
			}
			rec := e.do("POST", pathf("/v1/apps/%d/events", tc.app), tc.key, map[string]any{"eventId": "signup"})
			if got, want := rec.Code, tc.status; got != want {
				t.Fatalf("status=%d, want %d: %s", got, want, rec.Body)
			}
			if got, want := errCode(t, rec), tc.code; got != want {
				t.Fatalf("code=%s, want %s", got, want)
			}
		})
	}
	if got := len(e.evList("")); got != 2 {
		t.Fatalf("%d events stored, want 2 (refused requests store nothing)", got)
	}
}

func TestEventLogValidation(t *testing.T) {
	e, _ := evSetup(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name   string
		body   any
		fields []string // nil: accepted
	}{
		{"MissingEventID", map[string]any{"userId": "u1"}, []string{"eventId"}},
		{"EmptyEventID", map[string]any{"eventId": ""}, []string{"eventId"}},
		{"BlankEventID", map[string]any{"eventId": "   "}, []string{"eventId"}},
		{"EventIDNumber", `{"eventId":5}`, []string{"eventId"}},
		{"EventIDTooLong", map[string]any{"eventId": long(201)}, []string{"eventId"}},
		{"EventIDLongest", map[string]any{"eventId": long(200)}, nil},
		{"UserIDTooLong", map[string]any{"eventId": "e", "userId": long(257)}, []string{"userId"}},
		{"SessionIDTooLong", map[string]any{"eventId": "e", "sessionId": long(257)}, []string{"sessionId"}},
		{"LogIDTooLong", map[string]any{"eventId": "e", "logId": long(201)}, []string{"logId"}},
		{"MetadataString", map[string]any{"eventId": "e", "metadata": "x"}, []string{"metadata"}},
		{"MetadataArray", map[string]any{"eventId": "e", "metadata": []any{1}}, []string{"metadata"}},
		{"MetadataNumber", `{"eventId":"e","metadata":3}`, []string{"metadata"}},
		{"MetadataTooBig", map[string]any{"eventId": "e", "metadata": map[string]any{"k": long(store.MaxMetadata)}}, []string{"metadata"}},
		{"MetadataNull", `{"eventId":"e","metadata":null}`, nil},
		{"AllAtOnce", map[string]any{"userId": long(300), "sessionId": long(300), "logId": long(300), "metadata": []any{}},
			[]string{"eventId", "userId", "sessionId", "logId", "metadata"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.evList("limit=1000"))
			rec := e.do("POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, tc.body)
			if tc.fields == nil {
				if rec.Code != http.StatusCreated {
					t.Fatalf("status=%d, want 201: %s", rec.Code, rec.Body)
				}
				return
			}
			if got, want := rec.Code, http.StatusBadRequest; got != want {
				t.Fatalf("status=%d, want %d: %s", got, want, rec.Body)
			}
			if got, want := errCode(t, rec), "INVALID_REQUEST"; got != want {
				t.Fatalf("code=%s, want %s", got, want)
			}
			fields := fieldsOf(t, rec)
			for _, f := range tc.fields {
				if _, ok := fields[f]; !ok {
					t.Fatalf("details.fields=%v, want %s named", fields, f)
				}
			}
			if got, want := len(fields), len(tc.fields); got != want {
				t.Fatalf("details.fields=%v, want exactly %v", fields, tc.fields)
			}
			if after := len(e.evList("limit=1000")); after != before {
				t.Fatalf("a refused event was stored (%d -> %d)", before, after)
			}
		})
	}
	for _, body := range []string{`[]`, `"x"`, `{`, ``} {
		rec := e.do("POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, body)
		if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
			t.Fatalf("body %q: status=%d %s, want 400", body, rec.Code, rec.Body)
		}
	}
	// A null metadata reads back as an empty object.
	list := e.evList("limit=1")
	if m, ok := list[0]["metadata"].(map[string]any); !ok || len(m) != 0 {
		t.Fatalf("metadata of the null-metadata event=%v, want {}", list[0]["metadata"])
	}
	if list[0]["userId"] != nil || list[0]["sessionId"] != nil {
		t.Fatalf("absent ids=%v/%v, want null", list[0]["userId"], list[0]["sessionId"])
	}
}

func TestEventListFilters(t *testing.T) {
	e, clock := evSetup(t)
	type logged struct {
		eventID, userID string
		at              time.Time
		id              int64
	}
	evs := []*logged{
		{eventID: "view", userID: "alice"},
		{eventID: "purchase", userID: "alice"},
		{eventID: "view", userID: "bob"},
		{eventID: "purchase", userID: "bob"},
		{eventID: "view", userID: ""},
		{eventID: "view", userID: "alice"},
	}
	for i, ev := range evs {
		clock.Set(evT0.Add(time.Duration(i) * time.Hour))
		ev.at = clock.Now()
		body := map[string]any{"eventId": ev.eventID}
		if ev.userID != "" {
			body["userId"] = ev.userID
		}
		ev.id = num(e.evLog(body), "id")
	}
	// Another app's events never show.
	other, admin, _, _ := e.newApp("other", "enterprise", 1000)
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", other.ID), admin, map[string]any{"eventId": "view", "userId": "alice"})

	ids := func(idx ...int) []int64 {
		out := []int64{}
		for _, i := range idx {
			out = append(out, evs[i].id)
		}
		return out
	}
	at := func(i int) string { return url.QueryEscape(evs[i].at.Format(time.RFC3339Nano)) }
	for _, tc := range []struct {
		name, query string
		want        []int64
	}{
		{"All", "", ids(5, 4, 3, 2, 1, 0)},
		{"EventID", "eventId=purchase", ids(3, 1)},
		{"UserID", "userId=alice", ids(5, 1, 0)},
		{"EventAndUser", "eventId=view&userId=alice", ids(5, 0)},
		{"Unknown", "eventId=nope", ids()},
		{"StartDateInclusive", "startDate=" + at(3), ids(5, 4, 3)},
		{"EndDateInclusive", "endDate=" + at(2), ids(2, 1, 0)},
		{"Window", "startDate=" + at(1) + "&endDate=" + at(3), ids(3, 2, 1)},
		{"WindowWithOffset", "startDate=" + url.QueryEscape(evs[1].at.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)) + "&endDate=" + at(1), ids(1)},
		{"Limit", "limit=2", ids(5, 4)},
		{"Before", "before=" + fmt.Sprint(evs[3].id), ids(2, 1, 0)},
		{"BeforeWithFilter", "before=" + fmt.Sprint(evs[5].id) + "&userId=alice&limit=1", ids(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := evIDs(e.evList(tc.query)); !slices.Equal(got, tc.want) {
				t.Fatalf("ids=%v, want %v", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, query string
		fields      []string
	}{
		{"LimitZero", "limit=0", []string{"limit"}},
		{"LimitNegative", "limit=-3", []string{"limit"}},
		{"LimitText", "limit=ten", []string{"limit"}},
		{"StartDateBad", "startDate=yesterday", []string{"startDate"}},
		{"EndDateBad", "endDate=2030-13-01T00:00:00Z", []string{"endDate"}},
		{"BeforeZero", "before=0", []string{"before"}},
		{"BeforeText", "before=abc", []string{"before"}},
		{"AllAtOnce", "limit=0&startDate=x&endDate=y&before=z", []string{"limit", "startDate", "endDate", "before"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("GET", pathf("/v1/apps/%d/events?%s", e.App.ID, tc.query), e.Admin, nil)
			if got, want := rec.Code, http.StatusBadRequest; got != want {
				t.Fatalf("status=%d, want %d: %s", got, want, rec.Body)
			}
			fields := fieldsOf(t, rec)
			for _, f := range tc.fields {
				if _, ok := fields[f]; !ok {
					t.Fatalf("details.fields=%v, want %s named", fields, f)
				}
			}
			if len(fields) != len(tc.fields) {
				t.Fatalf("details.fields=%v, want exactly %v", fields, tc.fields)
			}
		})
	}
	t.Run("Roles", func(t *testing.T) {
		if got := len(e.evList("")); got != 6 {
			t.Fatalf("admin sees %d events, want 6", got)
		}
		if rec := e.do("GET", pathf("/v1/apps/%d/events", e.App.ID), e.Read, nil); rec.Code != http.StatusOK {
			t.Fatalf("read key: status=%d, want 200", rec.Code)
		}
		rec := e.do("GET", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, nil)
		if rec.Code != http.StatusForbidden || errCode(t, rec) != "FORBIDDEN" {
			t.Fatalf("client key: status=%d %s, want 403", rec.Code, rec.Body)
		}
	})
}

// evLogMany logs n view events straight through the store, from several
// goroutines so the group commit batches them.
func evLogMany(t testing.TB, db *store.DB, appID int64, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	var next atomic.Int64
	for range 16 {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if _, err := db.LogEvent(context.Background(), appID, &store.EventInput{EventID: "view", UserID: fmt.Sprint("user-", i)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestEventListLimitAndPaging(t *testing.T) {
	e, _ := evSetup(t)
	const total = 1050
	evLogMany(t, e.DB, e.App.ID, total)

	for _, tc := range []struct {
		query string
		want  int
	}{{"", 100}, {"limit=1", 1}, {"limit=1000", 1000}, {"limit=1001", 1000}, {"limit=100000", 1000}} {
		if got := len(e.evList(tc.query)); got != tc.want {
			t.Fatalf("%q: %d events, want %d", tc.query, got, tc.want)
		}
	}

	// Paging with before walks every event once, newest first.
	var seen []int64
	before := ""
	for pages := 0; ; pages++ {
		if pages > total/400+2 {
			t.Fatal("paging does not end")
		}
		page := evIDs(e.evList("limit=400" + before))
		if len(page) == 0 {
			break
		}
		seen = append(seen, page...)
		before = fmt.Sprintf("&before=%d", page[len(page)-1])
	}
	if got, want := len(seen), total; got != want {
		t.Fatalf("paged %d events, want %d", got, want)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] >= seen[i-1] {
			t.Fatalf("ids not strictly descending at %d: %d then %d", i, seen[i-1], seen[i])
		}
	}
}

// Conversion rules, one behaviour per test.

func TestEventConversionAfterImpression(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	clock.Add(time.Second)
	if got, want := e.evAssign(c.id, map[string]any{"userId": "u1"}), c.variants[0]; got != want {
		t.Fatalf("variant=%d, want %d", got, want)
	}
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 1, 0)
}

func TestEventConversionOtherEventID(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "add_to_cart", "userId": "u1"})
	e.evLog(map[string]any{"eventId": "Purchase", "userId": "u1"})
	e.evWantConversions(c, 0, 0)
	// Not a conversion, but stored all the same.
	if got := evIDs(e.evList("userId=u1")); len(got) != 2 {
		t.Fatalf("stored events=%v, want 2", got)
	}
}

func TestEventConversionWithoutImpression(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "stranger"})
	e.evLog(map[string]any{"eventId": "purchase"})
	e.evWantConversions(c, 0, 0)
	if got := len(e.evList("eventId=purchase")); got != 2 {
		t.Fatalf("stored purchase events=%d, want 2", got)
	}
}

func TestEventConversionBeforeImpression(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	clock.Add(time.Second)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	// The earlier purchase is not counted retroactively.
	e.evWantConversions(c, 0, 0)
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 1, 0)
}

// TestEventConversionClockBehindImpression logs a goal event stamped
// before the impression (the server clock stepped back): it is not after
// the impression, so it does not count.
func TestEventConversionClockBehindImpression(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	clock.Add(10 * time.Second)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(-5 * time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 0, 0)
	clock.Add(5 * time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 1, 0)
}

func TestEventConversionAfterEnd(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	e.evAssign(c.id, map[string]any{"userId": "u2"})
	// No scheduler runs: the campaign is still "active", yet its period is
	// over; endDate itself is outside [startDate, endDate).
	clock.Set(evT0.Add(evRun))
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	clock.Add(time.Hour)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u2"})
	e.evWantConversions(c, 0, 0)
	if got := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d", c.id), e.Admin, nil)["status"]; got != "active" {
		t.Fatalf("status=%v, want active (no scheduler ran)", got)
	}
	// One millisecond earlier still counts.
	clock.Set(evT0.Add(evRun - time.Millisecond))
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 1, 0)
}

func TestEventConversionWhilePaused(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", c.id), e.Admin, map[string]any{"status": "paused"})
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 0, 0)
	// Resumed, the same user converts on a new goal event.
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", c.id), e.Admin, map[string]any{"status": "active"})
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 1, 0)
}

func TestEventConversionAfterComplete(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	e.must(http.StatusOK, "PATCH", pathf("/v1/campaigns/%d/status", c.id), e.Admin, map[string]any{"status": "completed"})
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 0, 0)
}

func TestEventConversionOncePerUser(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	for range 3 {
		clock.Add(time.Second)
		e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	}
	e.evWantConversions(c, 1, 0)
	if got := len(e.evList("eventId=purchase")); got != 3 {
		t.Fatalf("stored purchase events=%d, want 3", got)
	}
}

func TestEventConversionAssignedVariant(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	// Round robin: u1 control, u2 treatment, u3 control, u4 treatment.
	for i, want := range []int64{c.variants[0], c.variants[1], c.variants[0], c.variants[1]} {
		if got := e.evAssign(c.id, map[string]any{"userId": fmt.Sprint("u", i+1)}); got != want {
			t.Fatalf("u%d: variant=%d, want %d", i+1, got, want)
		}
	}
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u2"})
	e.evWantConversions(c, 0, 1)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u4"})
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u3"})
	e.evWantConversions(c, 1, 2)
}

func TestEventConversionSessionID(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"sessionId": "sess-1"})
	clock.Add(time.Second)
	// A userId equal to the session's text is another user.
	e.evLog(map[string]any{"eventId": "purchase", "userId": "sess-1"})
	e.evWantConversions(c, 0, 0)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "someone", "sessionId": "sess-1"})
	e.evWantConversions(c, 1, 0)
}

func TestEventConversionUserID(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	// userId wins over sessionId as the key of the assignment; a session
	// named like the user is someone else.
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "sessionId": "u1"})
	e.evWantConversions(c, 0, 0)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1", "sessionId": "another"})
	e.evWantConversions(c, 1, 0)
	// The request naming both ids linked the session to the user: the
	// session's purchase is the user's, who converted already.
	e.evAssign(c.id, map[string]any{"userId": "u2", "sessionId": "sess-2"})
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "sessionId": "sess-2"})
	e.evWantConversions(c, 1, 1)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u2"})
	e.evWantConversions(c, 1, 1)
}

func TestEventConversionOtherApp(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	other, admin, _, _ := e.newApp("other", "enterprise", 1000)
	e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", other.ID), admin, map[string]any{"eventId": "purchase", "userId": "u1"})
	e.evWantConversions(c, 0, 0)
}

func TestEventConversionAnalytics(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	for i := range 4 {
		e.evAssign(c.id, map[string]any{"userId": fmt.Sprint("u", i)})
	}
	clock.Add(time.Second)
	e.evLog(map[string]any{"eventId": "purchase", "userId": "u1"})
	m := e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", c.id), e.Admin, nil)
	if num(m, "totalImpressions") != 4 || num(m, "totalConversions") != 1 {
		t.Fatalf("analytics=%v, want 4 impressions and 1 conversion", m)
	}
}

func TestEventLogIDIdempotent(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	first := e.evLog(map[string]any{"eventId": "purchase", "userId": "u1", "logId": "log-1"})
	clock.Add(time.Minute)
	// A retry, even with another body, answers the first event.
	second := e.evLog(map[string]any{"eventId": "other", "userId": "u2", "logId": "log-1"})
	for _, k := range []string{"id", "eventId", "timestamp", "success"} {
		if first[k] != second[k] {
			t.Fatalf("%s: first=%v, retry=%v", k, first[k], second[k])
		}
	}
	if second["eventId"] != "purchase" || second["timestamp"] != clock.Now().Add(-time.Minute).Format(jsonjs.TimeLayout) {
		t.Fatalf("retry answered %v, want the first event", second)
	}
	if got := evIDs(e.evList("")); !slices.Equal(got, []int64{num(first, "id")}) {
		t.Fatalf("stored events=%v, want only %d", got, num(first, "id"))
	}
	e.evWantConversions(c, 1, 0)

	// Another logId is another event; the logId is per app.
	third := e.evLog(map[string]any{"eventId": "purchase", "userId": "u1", "logId": "log-2"})
	if num(third, "id") == num(first, "id") {
		t.Fatal("another logId answered the first event")
	}
	other, admin, _, _ := e.newApp("other", "enterprise", 1000)
	m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/events", other.ID), admin, map[string]any{"eventId": "purchase", "logId": "log-1"})
	if num(m, "id") == num(first, "id") {
		t.Fatal("the same logId in another app answered this app's event")
	}
	if got := len(e.evList("")); got != 2 {
		t.Fatalf("stored events=%d, want 2", got)
	}
	e.evWantConversions(c, 1, 0)
}

// TestConcurrentLogID retries one logged goal event from many clients at
// once: one row, one answer, at most one conversion.
func TestConcurrentLogID(t *testing.T) {
	e, clock := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"})
	clock.Add(time.Second)
	const clients = 50
	body := `{"eventId":"purchase","userId":"u1","logId":"retry-me"}`
	answers := make([]string, clients)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range clients {
		wg.Go(func() {
			<-start
			// A client retries what did not succeed, as an SDK would.
			for range 3 {
				rec := e.do("POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, body)
				answers[i] = fmt.Sprint(rec.Code, " ", rec.Body.String())
				if rec.Code == http.StatusCreated {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	var first map[string]any
	for i, a := range answers {
		code, raw, _ := strings.Cut(a, " ")
		if code != "201" {
			t.Fatalf("client %d: %s", i, a)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = m
		}
		for _, k := range []string{"id", "eventId", "timestamp"} {
			if m[k] != first[k] {
				t.Fatalf("client %d: %s=%v, another got %v", i, k, m[k], first[k])
			}
		}
	}
	if got := evIDs(e.evList("")); !slices.Equal(got, []int64{num(first, "id")}) {
		t.Fatalf("stored events=%v, want exactly one", got)
	}
	e.evWantConversions(c, 1, 0)
}

// BenchmarkEventLogHandler logs events through the router from parallel
// clients, each a distinct user.
func BenchmarkEventLogHandler(b *testing.B) {
	e := newEnv(b)
	path := pathf("/v1/apps/%d/events", e.App.ID)
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8) // many SDK clients at once, whatever GOMAXPROCS is
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := fmt.Sprintf(`{"eventId":"view","userId":"user-%d","metadata":{"page":"/home"}}`, n.Add(1))
			if rec := e.do("POST", path, e.Cli, body); rec.Code != http.StatusCreated {
				b.Errorf("status=%d: %s", rec.Code, rec.Body)
				return
			}
		}
	})
}
