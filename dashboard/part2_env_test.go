package dashboard_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"service/store"
)

// campaign creates a draft campaign over two fresh published blocks.
func (e *env) campaign(appID int64, name, goal string, weights ...float64) *store.Campaign {
	e.t.Helper()
	if len(weights) == 0 {
		weights = []float64{50, 50}
	}
	var vs []store.VariantInput
	for i, w := range weights {
		c := e.published(appID, fmt.Sprintf("%s block %d", name, i), `[{"type":"heading","content":"Hello `+fmt.Sprint(i)+`"}]`)
		n := fmt.Sprintf("V%d", i)
		if i == 0 {
			n = "Control"
		}
		vs = append(vs, store.VariantInput{Name: &n, ContentViewID: &c.ID, TrafficAllocation: ptr(w)})
	}
	end, _ := json.Marshal(e.now.Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339))
	in := store.CampaignInput{Name: &name, Variants: &vs, EndDate: end}
	if goal != "" {
		g, _ := json.Marshal(goal)
		in.GoalEventID = g
	}
	c, err := e.db.CreateCampaign(e.ctx, appID, 0, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) start(appID, id int64) {
	e.t.Helper()
	if _, err := e.db.SetCampaignStatus(e.ctx, appID, id, store.CampaignActive); err != nil {
		e.t.Fatal(err)
	}
}

// traffic sends users u0..u(n-1) through the variant route and logs the
// goal event for those convert picks, by variant index. It returns how
// many users each variant got.
func (e *env) traffic(appID int64, c *store.Campaign, n int, convert func(variant, user int) bool) []int {
	e.t.Helper()
	got := make([]int, len(c.Variants))
	for u := 0; u < n; u++ {
		user := fmt.Sprintf("u%d", u)
		b, err := e.db.Variant(e.ctx, appID, c.ID, &store.VariantRequest{UserID: user}, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		var ans struct {
			VariantID int64 `json:"variantId"`
		}
		if err := json.Unmarshal(b, &ans); err != nil {
			e.t.Fatalf("%s: %v", b, err)
		}
		for i, v := range c.Variants {
			if v.ID == ans.VariantID {
				got[i]++
				if convert(i, got[i]) {
					if _, err := e.db.LogEvent(e.ctx, appID, &store.EventInput{EventID: *c.GoalEventID, UserID: user}); err != nil {
						e.t.Fatal(err)
					}
				}
			}
		}
	}
	return got
}

// audience creates an audience from a definition.
func (e *env) audience(appID int64, name, def string) *store.Audience {
	e.t.Helper()
	a, err := e.db.CreateAudience(e.ctx, appID, store.AudienceInput{Name: &name, Definition: json.RawMessage(def)})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// sql opens the database file beside the store, for tests that must put
// it in a state the API cannot reach.
func (e *env) sql() *sql.DB {
	e.t.Helper()
	db, err := store.OpenSQL(e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	return db
}

// api calls the JSON API with a fresh admin key of the app.
func (e *env) api(appID int64, path string, into any) {
	e.t.Helper()
	_, key, err := e.db.CreateKey(e.ctx, appID, "admin", "test")
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1"+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		e.t.Fatal(err)
	}
}

var dataValueRe = regexp.MustCompile(`data-k="([a-zA-Z]+)" data-value="([^"]*)"`)

// world2 is two apps, each with a campaign and an audience, for the
// part-two routes.
type world2 struct {
	a, b                 *store.App
	campaignA, campaignB *store.Campaign
	audA, audB           *store.Audience
}

const defCountry = `{"logic":"AND","rules":[{"field":"country","operator":"equals","value":"DE"}]}`

func (e *env) world2() *world2 {
	e.t.Helper()
	w := &world2{a: e.app("A"), b: e.app("B")}
	w.campaignA = e.campaign(w.a.ID, "ca", "buy")
	w.campaignB = e.campaign(w.b.ID, "cb", "buy")
	w.audA = e.audience(w.a.ID, "aa", defCountry)
	w.audB = e.audience(w.b.ID, "ab", defCountry)
	return w
}

func routes2(app, campaign, audience int64) []route {
	a := fmt.Sprintf("/apps/%d", app)
	c := fmt.Sprintf("%s/campaigns/%d", a, campaign)
	au := fmt.Sprintf("%s/audiences/%d", a, audience)
	return []route{
		{"GET", a + "/campaigns"},
		{"GET", a + "/campaigns/new"},
		{"POST", a + "/campaigns"},
		{"GET", c},
		{"POST", c},
		{"POST", c + "/status"},
		{"GET", c + "/results"},
		{"GET", c + "/results.csv"},
		{"GET", c + "/preview"},
		{"GET", a + "/audiences"},
		{"GET", a + "/audiences/new"},
		{"POST", a + "/audiences"},
		{"GET", au},
		{"POST", au},
		{"GET", au + "/check?userId=x"},
		{"POST", au + "/recount"},
		{"POST", au + "/status"},
		{"GET", a + "/events"},
		{"GET", a + "/users?userId=x"},
		{"GET", a + "/settings"},
		{"POST", a + "/settings"},
	}
}
