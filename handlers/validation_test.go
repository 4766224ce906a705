package handlers

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// validationFields asserts a 400 INVALID_REQUEST whose details.fields are
// exactly want (path to reason; an empty reason accepts any).
func validationFields(t *testing.T, rec interface {
	Result() *http.Response
}, raw []byte, want map[string]string) {
	t.Helper()
	if code := rec.Result().StatusCode; code != http.StatusBadRequest {
		t.Fatalf("status=%d, want 400: %s", code, raw)
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Details struct {
				Fields map[string]string `json:"fields"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code != "INVALID_REQUEST" {
		t.Fatalf("not an INVALID_REQUEST envelope: %s", raw)
	}
	got := body.Error.Details.Fields
	var gotKeys, wantKeys []string
	for k := range got {
		gotKeys = append(gotKeys, k)
	}
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	sort.Strings(gotKeys)
	sort.Strings(wantKeys)
	if strings.Join(gotKeys, ",") != strings.Join(wantKeys, ",") {
		t.Fatalf("fields named %v, want %v: %s", gotKeys, wantKeys, raw)
	}
	for k, reason := range want {
		if reason != "" && got[k] != reason {
			t.Fatalf("%s: %q, want %q", k, got[k], reason)
		}
	}
}

func TestValidationNamesEveryBadBodyField(t *testing.T) {
	e := newEnv(t)
	block := e.mustContent("Block", "published")
	for _, tc := range []struct {
		name, method, path, key, body string
		want                          map[string]string
	}{
		{"ContentWrongTypes", "POST", "/v1/apps/%d/content", "admin", `{"name":5,"items":"x"}`,
			map[string]string{"name": "must be a string", "items": "must be an array"}},
		{"ContentWrongTypeAndMissingName", "POST", "/v1/apps/%d/content", "admin", `{"status":7,"items":"x"}`,
			map[string]string{"status": "must be a string", "items": "must be an array", "name": "is required"}},
		{"ContentUpdate", "PATCH", pathf("/v1/content/%d", block), "admin", `{"name":5,"status":"bogus"}`,
			map[string]string{"name": "must be a string", "status": ""}},
		{"Event", "POST", "/v1/apps/%d/events", "client", `{"eventId":42,"metadata":"x"}`,
			map[string]string{"eventId": "must be a string", "metadata": "must be an object"}},
		{"Audience", "POST", "/v1/apps/%d/audiences", "admin", `{"name":5,"definition":"x"}`,
			map[string]string{"name": "must be a string", "definition": "must be an object"}},
		{"Campaign", "POST", "/v1/apps/%d/campaigns", "admin", `{"name":5,"assignmentType":"bogus","variants":[]}`,
			map[string]string{"name": "must be a string", "assignmentType": "", "variants": ""}},
		{"Webhook", "POST", "/v1/apps/%d/webhooks", "admin", `{"url":5,"maxRetries":99,"events":["*"]}`,
			map[string]string{"url": "must be a string", "maxRetries": "must be between 0 and 10"}},
		{"FormSubmit", "POST", "/v1/apps-external/%d/submit-form", "client", `{"contentViewId":"x","userId":5}`,
			map[string]string{"contentViewId": "must be a number", "userId": "must be a string", "data": "is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := e.Admin
			if tc.key == "client" {
				key = e.Cli
			}
			path := tc.path
			if strings.Contains(path, "/apps") {
				path = pathf(path, e.App.ID)
			}
			rec := e.do(tc.method, path, key, tc.body)
			validationFields(t, rec, rec.Body.Bytes(), tc.want)
		})
	}
}

func TestValidationNamesEveryBadQueryParameter(t *testing.T) {
	e := newEnv(t)
	block := e.mustContent("Block", "published")
	hook := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/webhooks", e.App.ID), e.Admin,
		map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"*"}}), "id")
	aud := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/audiences", e.App.ID), e.Admin,
		map[string]any{"name": "All", "definition": json.RawMessage(`{"rules":[{"field":"plan","operator":"exists"}]}`)}), "id")
	bad := map[string]string{"limit": "must be a positive integer", "page": "must be a positive integer"}
	withStatus := map[string]string{"limit": "must be a positive integer", "page": "must be a positive integer", "status": ""}
	for _, tc := range []struct {
		path, query string
		want        map[string]string
	}{
		{pathf("/v1/apps/%d/campaigns", e.App.ID), "limit=0&page=x&status=running", withStatus},
		{pathf("/v1/apps/%d/content", e.App.ID), "limit=0&page=x&status=running", withStatus},
		{pathf("/v1/apps/%d/audiences", e.App.ID), "limit=0&page=x&status=running", withStatus},
		{pathf("/v1/webhooks/%d/deliveries", hook), "limit=0&page=x&status=running", withStatus},
		{pathf("/v1/apps/%d/webhooks", e.App.ID), "limit=0&page=x", bad},
		{pathf("/v1/audiences/%d/members", aud), "limit=0&page=x", bad},
		{pathf("/v1/content/%d/submissions", block), "limit=0&page=x", bad},
		{pathf("/v1/apps/%d/form-submissions", e.App.ID), "limit=0&page=x&contentViewId=y",
			map[string]string{"limit": "must be a positive integer", "page": "must be a positive integer", "contentViewId": "must be a positive integer"}},
		{pathf("/v1/apps/%d/events", e.App.ID), "limit=0&before=x",
			map[string]string{"limit": "must be a positive integer", "before": ""}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := e.do("GET", tc.path+"?"+tc.query, e.Admin, nil)
			validationFields(t, rec, rec.Body.Bytes(), tc.want)
		})
	}
}

func TestValidationContentStyles(t *testing.T) {
	e := newEnv(t)
	path := pathf("/v1/apps/%d/content", e.App.ID)
	item := func(styles string) string {
		return `{"name":"Styled","items":[{"type":"text","content":"hi"},{"type":"heading","content":"h","styles":` + styles + `}]}`
	}
	for _, tc := range []struct {
		name, styles string
		want         map[string]string // nil: accepted
	}{
		{"NumericFontSizeAndStringColor", `{"fontSize":16,"color":"#333333","fontWeight":"bold"}`, nil},
		{"Empty", `{}`, nil},
		{"FontSizeString", `{"fontSize":"12"}`, map[string]string{"items[1].styles.fontSize": "must be a number"}},
		{"ColorNumber", `{"color":5}`, map[string]string{"items[1].styles.color": "must be a string"}},
		{"Both", `{"fontSize":true,"color":[]}`, map[string]string{"items[1].styles.fontSize": "must be a number", "items[1].styles.color": "must be a string"}},
		{"NotAnObject", `"big"`, map[string]string{"items[1].styles": "must be an object"}},
		// Any number beyond a 64-bit float in an item refuses the item,
		// as it does in an event's metadata.
		{"NumberOutOfRange", `{"fontSize":16,"shadow":[0,1e999]}`, map[string]string{"items[1]": "must not contain numbers out of range"}},
		{"LargestNumber", `{"fontSize":1.7976931348623157e308}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", path, e.Admin, item(tc.styles))
			if tc.want == nil {
				if rec.Code != http.StatusCreated {
					t.Fatalf("status=%d, want 201: %s", rec.Code, rec.Body.String())
				}
				return
			}
			validationFields(t, rec, rec.Body.Bytes(), tc.want)
		})
	}
}

func TestValidationPathParameterNames(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ method, path, param string }{
		{"GET", "/v1/campaigns/abc", "campaignId"},
		{"PATCH", "/v1/campaigns/abc/status", "campaignId"},
		{"POST", "/v1/campaigns/abc/unarchive", "campaignId"},
		{"GET", "/v1/campaigns/abc/analytics", "campaignId"},
		{"GET", "/v1/content/abc", "contentViewId"},
		{"DELETE", "/v1/content/abc", "contentViewId"},
		{"GET", "/v1/content/abc/submissions", "contentViewId"},
		{"GET", pathf("/v1/apps-external/%d/content/abc", e.App.ID), "contentViewId"},
		{"GET", "/v1/audiences/abc", "audienceId"},
		{"GET", "/v1/audiences/abc/members", "audienceId"},
		{"GET", "/v1/webhooks/abc", "webhookId"},
		{"GET", "/v1/webhooks/abc/deliveries", "webhookId"},
		{"POST", "/v1/webhooks/abc/rotate-secret", "webhookId"},
		{"GET", "/v1/webhooks/1/deliveries/abc", "deliveryId"},
		{"POST", "/v1/webhooks/1/deliveries/abc/redeliver", "deliveryId"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			var body any
			if tc.method != "GET" && tc.method != "DELETE" {
				body = `{}`
			}
			rec := e.do(tc.method, tc.path, e.Admin, body)
			var m struct {
				Error struct {
					Message string         `json:"message"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			if rec.Code != http.StatusBadRequest || m.Error.Details["param"] != tc.param ||
				m.Error.Message != "path parameter "+tc.param+" must be a positive integer" {
				t.Fatalf("status=%d body=%s, want 400 naming %s", rec.Code, rec.Body.String(), tc.param)
			}
		})
	}
}

// Text that is not UTF-8 names nothing the API stores, and PostgreSQL
// refuses it with an encoding error: it is refused before any handler.
func TestValidationRefusesInvalidUTF8(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ method, path, key, body, param string }{
		{"GET", "/v1/apps/%d/users/%%FF%%FE", "admin", "", "userId"},
		{"PUT", "/v1/apps/%d/users/u%%C3", "admin", `{"attributes":{}}`, "userId"},
		{"GET", "/v1/apps/%d/events?userId=%%FF", "admin", "", "userId"},
		{"GET", "/v1/apps/%d/events?limit=5&eventId=ok%%E2%%82", "admin", "", "eventId"},
		{"GET", "/v1/apps/%d/events?%%FF=1", "admin", "", "\uFFFD"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			rec := e.do(tc.method, pathf(tc.path, e.App.ID), e.Admin, body)
			var m struct {
				Error struct {
					Code    string         `json:"code"`
					Message string         `json:"message"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &m)
			if rec.Code != http.StatusBadRequest || m.Error.Code != "INVALID_REQUEST" || m.Error.Details["param"] != tc.param ||
				!strings.HasSuffix(m.Error.Message, tc.param+" must be valid UTF-8") {
				t.Fatalf("status=%d body=%s, want 400 naming %s", rec.Code, rec.Body.String(), tc.param)
			}
		})
	}
	// Valid UTF-8 beyond ASCII, escaped or not, goes through.
	for _, path := range []string{"/v1/apps/%d/events?userId=%%C3%%A9", "/v1/apps/%d/events?userId=é"} {
		if rec := e.do("GET", pathf(path, e.App.ID), e.Admin, nil); rec.Code != http.StatusOK {
			t.Fatalf("%s: status=%d body=%s, want 200", path, rec.Code, rec.Body.String())
		}
	}
}

// An offset can carry a campaign date past 9999 in UTC, which an RFC 3339
// answer cannot write back.
func TestValidationCampaignDateYears(t *testing.T) {
	e := newEnv(t)
	a, b := e.mustContent("A", "published"), e.mustContent("B", "published")
	variants := pathf(`[{"contentViewId":%d},{"contentViewId":%d}]`, a, b)
	for _, tc := range []struct {
		name, fields string
		want         map[string]string // nil: accepted
	}{
		{"EndPast9999InUTC", `"endDate":"9999-12-31T23:59:59-14:00"`, map[string]string{"endDate": "must fall within the years 0000 to 9999 in UTC"}},
		{"StartBeforeYear0InUTC", `"startDate":"0000-01-01T00:00:00+01:00"`, map[string]string{"startDate": "must fall within the years 0000 to 9999 in UTC"}},
		{"LocalEndOf9999WestOfUTC", `"timezone":"Pacific/Pago_Pago","endDate":"9999-12-31T23:59:59"`, map[string]string{"endDate": "must fall within the years 0000 to 9999 in UTC"}},
		{"LocalEndOf9999EastOfUTC", `"timezone":"Pacific/Kiritimati","endDate":"9999-12-31T23:59:59"`, nil},
		{"LastMomentOf9999", `"endDate":"9999-12-31T23:59:59.999Z"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := e.do("POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, `{"name":"Dates",`+tc.fields+`,"variants":`+variants+`}`)
			if tc.want == nil {
				if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"endDate":"9999-12-31T`) {
					t.Fatalf("status=%d, want 201 with the date in 9999: %s", rec.Code, rec.Body.String())
				}
				return
			}
			validationFields(t, rec, rec.Body.Bytes(), tc.want)
		})
	}
}
