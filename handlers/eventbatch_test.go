package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func (e *testEnv) evBatch(want int, key string, body any) map[string]any {
	e.t.Helper()
	return e.must(want, "POST", pathf("/v1/apps/%d/events/batch", e.App.ID), key, body)
}

func batchItems(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	data, ok := m["data"].([]any)
	if !ok {
		t.Fatalf("no data array: %v", m)
	}
	out := make([]map[string]any, len(data))
	for i, d := range data {
		out[i] = d.(map[string]any)
	}
	return out
}

func TestEventBatchAnswersEachEventInOrder(t *testing.T) {
	e, clk := evSetup(t)
	m := e.evBatch(http.StatusOK, e.Cli, map[string]any{"events": []any{
		map[string]any{"eventId": "a", "userId": "u1"},
		map[string]any{"eventId": "b", "sessionId": "s1", "metadata": map[string]any{"k": 1}},
		map[string]any{"eventId": "c", "userId": "u2", "logId": "log-c"},
	}})
	items := batchItems(t, m)
	if got, want := len(items), 3; got != want {
		t.Fatalf("items=%d, want %d", got, want)
	}
	if num(m, "accepted") != 3 || num(m, "rejected") != 0 {
		t.Fatalf("accepted/rejected=%v/%v, want 3/0", m["accepted"], m["rejected"])
	}
	var prev int64
	for i, want := range []string{"a", "b", "c"} {
		it := items[i]
		if it["success"] != true || it["eventId"] != want || it["timestamp"] != clk.Stamp() {
			t.Fatalf("item %d=%v, want success for %s at %s", i, it, want, clk.Stamp())
		}
		if id := num(it, "id"); id <= prev {
			t.Fatalf("item %d id=%d, want above %d", i, id, prev)
		} else {
			prev = id
		}
	}
	list := e.evList("limit=10")
	if got, want := len(list), 3; got != want {
		t.Fatalf("stored=%d, want %d", got, want)
	}
}

func TestEventBatchLogIDIdempotent(t *testing.T) {
	e, clk := evSetup(t)
	first := e.evLog(map[string]any{"eventId": "purchase", "userId": "u1", "logId": "L1"})
	clk.Add(time.Minute)
	m := e.evBatch(http.StatusOK, e.Cli, map[string]any{"events": []any{
		map[string]any{"eventId": "purchase", "userId": "u1", "logId": "L1"}, // seen on the single route
		map[string]any{"eventId": "view", "userId": "u1", "logId": "L2"},
		map[string]any{"eventId": "view", "userId": "u1", "logId": "L2"}, // repeated inside the batch
	}})
	items := batchItems(t, m)
	if items[0]["duplicate"] != true || num(items[0], "id") != num(first, "id") || items[0]["timestamp"] != first["timestamp"] {
		t.Fatalf("item 0=%v, want the first event %v as a duplicate", items[0], first)
	}
	if items[1]["duplicate"] == true || items[2]["duplicate"] != true || num(items[1], "id") != num(items[2], "id") {
		t.Fatalf("items 1, 2=%v %v: want one stored event answered twice", items[1], items[2])
	}
	// The whole batch again, as a retry after a lost answer: nothing new.
	again := batchItems(t, e.evBatch(http.StatusOK, e.Cli, map[string]any{"events": []any{
		map[string]any{"eventId": "view", "userId": "u1", "logId": "L2"},
	}}))
	if again[0]["duplicate"] != true || num(again[0], "id") != num(items[1], "id") {
		t.Fatalf("retry=%v, want duplicate of %v", again[0], items[1])
	}
	if got, want := len(e.evList("limit=10")), 2; got != want {
		t.Fatalf("stored=%d, want %d", got, want)
	}
}

func TestEventBatchConversions(t *testing.T) {
	e, _ := evSetup(t)
	c := e.evCreateCampaign("purchase", nil)
	e.evAssign(c.id, map[string]any{"userId": "u1"}) // first variant (round robin)
	e.evAssign(c.id, map[string]any{"userId": "u2"}) // second
	e.evBatch(http.StatusOK, e.Cli, map[string]any{"events": []any{
		map[string]any{"eventId": "purchase", "userId": "u1", "logId": "p1"},
		map[string]any{"eventId": "purchase", "userId": "u1", "logId": "p2"}, // converts once only
		map[string]any{"eventId": "purchase", "userId": "u2"},
		map[string]any{"eventId": "purchase", "userId": "stranger"}, // never assigned
	}})
	e.evWantConversions(c, 1, 1)
	// A retry of the same batch counts nothing again.
	e.evBatch(http.StatusOK, e.Cli, map[string]any{"events": []any{
		map[string]any{"eventId": "purchase", "userId": "u1", "logId": "p1"},
	}})
	e.evWantConversions(c, 1, 1)
}

func TestEventBatchInvalidEventsAnsweredInPlace(t *testing.T) {
	e, _ := evSetup(t)
	m := e.evBatch(http.StatusOK, e.Cli, `{"events":[
		{"eventId":"ok-1"},
		{"eventId":""},
		{"eventId":5,"userId":true},
		"not an object",
		{"eventId":"ok-2","metadata":[1]},
		{"eventId":"ok-3","logId":"`+strings.Repeat("x", 201)+`"},
		{"eventId":"ok-4"}]}`)
	items := batchItems(t, m)
	if num(m, "accepted") != 2 || num(m, "rejected") != 5 {
		t.Fatalf("accepted/rejected=%v/%v, want 2/5", m["accepted"], m["rejected"])
	}
	wantFields := map[int][]string{
		1: {"events[1].eventId"},
		2: {"events[2].eventId", "events[2].userId"},
		3: {"events[3]"},
		4: {"events[4].metadata"},
		5: {"events[5].logId"},
	}
	for i, it := range items {
		fields, bad := wantFields[i]
		if !bad {
			if it["success"] != true {
				t.Fatalf("item %d=%v, want stored", i, it)
			}
			continue
		}
		errObj, _ := it["error"].(map[string]any)
		if it["success"] != false || errObj == nil || errObj["code"] != "INVALID_REQUEST" {
			t.Fatalf("item %d=%v, want an INVALID_REQUEST error", i, it)
		}
		got := errObj["details"].(map[string]any)["fields"].(map[string]any)
		if len(got) != len(fields) {
			t.Fatalf("item %d fields=%v, want %v", i, got, fields)
		}
		for _, f := range fields {
			if _, ok := got[f]; !ok {
				t.Fatalf("item %d fields=%v, want %s", i, got, f)
			}
		}
	}
	list := e.evList("limit=10")
	if got, want := evNames(list), "ok-4,ok-1"; got != want {
		t.Fatalf("stored=%s, want %s", got, want)
	}
}

func evNames(list []map[string]any) string {
	var names []string
	for _, m := range list {
		names = append(names, fmt.Sprint(m["eventId"]))
	}
	return strings.Join(names, ",")
}

func TestEventBatchBadEnvelope(t *testing.T) {
	e, _ := evSetup(t)
	many := make([]any, 101)
	for i := range many {
		many[i] = map[string]any{"eventId": "x"}
	}
	for _, tc := range []struct {
		name string
		body any
		want int
	}{
		{"Missing", `{}`, http.StatusBadRequest},
		{"NotArray", `{"events":{"eventId":"x"}}`, http.StatusBadRequest},
		{"Null", `{"events":null}`, http.StatusBadRequest},
		{"Empty", `{"events":[]}`, http.StatusBadRequest},
		{"TooMany", map[string]any{"events": many}, http.StatusBadRequest},
		{"NotJSON", `{"events":[`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/events/batch", e.App.ID), e.Cli, tc.body)
			if rec.Code != tc.want || errCode(t, rec) != "INVALID_REQUEST" {
				t.Fatalf("status=%d body=%s, want %d INVALID_REQUEST", rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
	if got := len(e.evList("limit=10")); got != 0 {
		t.Fatalf("stored=%d, want 0", got)
	}
	// Exactly 100 is allowed.
	m := e.evBatch(http.StatusOK, e.Cli, map[string]any{"events": many[:100]})
	if num(m, "accepted") != 100 {
		t.Fatalf("accepted=%v, want 100", m["accepted"])
	}
}

func TestEventBatchRoles(t *testing.T) {
	e, _ := evSetup(t)
	other, otherAdmin, _, _ := e.newApp("other", "enterprise", 1_000_000)
	body := map[string]any{"events": []any{map[string]any{"eventId": "x"}}}
	for _, tc := range []struct {
		name, key string
		app       int64
		want      int
	}{
		{"Admin", e.Admin, e.App.ID, http.StatusOK},
		{"Client", e.Cli, e.App.ID, http.StatusOK},
		{"Read", e.Read, e.App.ID, http.StatusForbidden},
		{"NoKey", "", e.App.ID, http.StatusUnauthorized},
		{"OtherApp", otherAdmin, e.App.ID, http.StatusForbidden},
		{"OwnAppOfOther", otherAdmin, other.ID, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/events/batch", tc.app), tc.key, body)
			if rec.Code != tc.want {
				t.Fatalf("status=%d, want %d; body=%s", rec.Code, tc.want, rec.Body.String())
			}
		})
	}
}

// A batch item is decoded like the single event route's body: every bad
// field of it is named at once, wrong types and other rules together.
func TestEventBatchItemNamesEveryBadField(t *testing.T) {
	e, _ := evSetup(t)
	m := e.evBatch(http.StatusOK, e.Cli, map[string]any{"events": []any{
		map[string]any{"eventId": 42, "metadata": "x"},
	}})
	items := batchItems(t, m)
	fields, _ := items[0]["error"].(map[string]any)["details"].(map[string]any)["fields"].(map[string]any)
	for _, f := range []string{"events[0].eventId", "events[0].metadata"} {
		if _, ok := fields[f]; !ok {
			t.Fatalf("fields=%v, want %s named", fields, f)
		}
	}
}

// TestEventMetadataNumberRange: a number in metadata beyond a 64-bit float
// (1e999, which JavaScript reads as Infinity) is refused on the single and
// the batch route alike, naming metadata, as content items refuse it; a
// batch stores its other events. Bodies with an escape take encoding/json's
// path instead of the flat decoder's, and are checked the same.
func TestEventMetadataNumberRange(t *testing.T) {
	e, _ := evSetup(t)
	const reason = "must not contain numbers out of range"
	for _, tc := range []struct {
		name, userID, metadata string
		refused                bool
	}{
		{"Overflow", "u1", `{"v":1e999}`, true},
		{"NegativeOverflow", "u1", `{"v":-1e999}`, true},
		{"Nested", "u1", `{"a":{"b":[1,{"c":1E400}]}}`, true},
		{"Digits", "u1", `{"v":1` + strings.Repeat("0", 309) + `}`, true},
		{"AfterEscapedString", `u\u00e91`, `{"s":"a\"b","v":1e999}`, true},
		{"Largest", "u1", `{"v":1.7976931348623157e308,"w":-1e308}`, false},
		{"Underflow", "u1", `{"v":1e-999}`, false},
		{"InAString", "u1", `{"v":"1e999","1e999":true}`, false},
		{"EscapedQuoteThenText", `u\u00e91`, `{"v":"\"1e999"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			event := `{"eventId":"` + tc.name + `","userId":"` + tc.userID + `","metadata":` + tc.metadata + `}`
			before := len(e.evList("limit=1000"))
			rec := e.do("POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, event)
			if !tc.refused {
				if rec.Code != http.StatusCreated {
					t.Fatalf("single: status=%d, want 201: %s", rec.Code, rec.Body)
				}
			} else {
				if rec.Code != http.StatusBadRequest || errCode(t, rec) != "INVALID_REQUEST" {
					t.Fatalf("single: status=%d, want 400: %s", rec.Code, rec.Body)
				}
				if f := fieldsOf(t, rec); len(f) != 1 || f["metadata"] != reason {
					t.Fatalf("single: details.fields=%v, want metadata: %s", f, reason)
				}
				if after := len(e.evList("limit=1000")); after != before {
					t.Fatalf("single: a refused event was stored (%d -> %d)", before, after)
				}
			}

			m := e.evBatch(http.StatusOK, e.Cli, `{"events":[{"eventId":"kept-`+tc.name+`"},`+event+`]}`)
			items := batchItems(t, m)
			if items[0]["success"] != true {
				t.Fatalf("batch: the valid event=%v, want stored", items[0])
			}
			if !tc.refused {
				if items[1]["success"] != true || num(m, "accepted") != 2 {
					t.Fatalf("batch: %v, want both stored", m)
				}
				return
			}
			if num(m, "accepted") != 1 || num(m, "rejected") != 1 {
				t.Fatalf("batch: accepted/rejected=%v/%v, want 1/1", m["accepted"], m["rejected"])
			}
			errObj, _ := items[1]["error"].(map[string]any)
			if items[1]["success"] != false || errObj == nil || errObj["code"] != "INVALID_REQUEST" {
				t.Fatalf("batch: item 1=%v, want an INVALID_REQUEST error", items[1])
			}
			if f := errObj["details"].(map[string]any)["fields"].(map[string]any); len(f) != 1 || f["events[1].metadata"] != reason {
				t.Fatalf("batch: fields=%v, want events[1].metadata: %s", f, reason)
			}
			if got, want := evNames(e.evList("limit=1")), "kept-"+tc.name; got != want {
				t.Fatalf("batch: latest stored=%s, want %s", got, want)
			}
		})
	}
}
