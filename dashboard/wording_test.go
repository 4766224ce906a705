package dashboard_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"service/store"
)

// Counts on the pages agree with their nouns: "1 failed attempt", "2
// failed attempts", "1 customer", "1 more impression".
func TestCountPhrasesAgree(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	db := e.sql()

	t.Run("Webhook", func(t *testing.T) {
		hook := e.webhook(app.ID, "https://hooks.example/in")
		page := fmt.Sprintf("/apps/%d/webhooks/%d", app.ID, hook.ID)
		if _, err := e.db.SendTestDelivery(e.ctx, app.ID, hook.ID); err != nil {
			t.Fatal(err)
		}
		later := time.Now()
		attempt := func(status int) {
			t.Helper()
			later = later.Add(time.Hour)
			claimed, err := e.db.ClaimDueDeliveries(e.ctx, later, store.ClaimOptions{Limit: 1, PerWebhook: 1, Lease: time.Minute})
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claimed %d deliveries: %v", len(claimed), err)
			}
			res := store.AttemptResult{At: later, Duration: time.Millisecond, Status: status}
			if err := e.db.RecordAttempt(e.ctx, claimed[0], res, time.Second); err != nil {
				t.Fatal(err)
			}
		}
		counts := func(want string) {
			t.Helper()
			wantContains(t, b.get(page), `id="delivery-counts">`+want+`</span>`)
		}
		counts("0 delivered · 0 failed attempts · 0 failures in a row")
		attempt(500)
		counts("0 delivered · 1 failed attempt · 1 failure in a row")
		attempt(503)
		counts("0 delivered · 2 failed attempts · 2 failures in a row")
		attempt(204)
		counts("1 delivered · 2 failed attempts · 0 failures in a row")

		for n, want := range map[int]string{1: "failed 1 time in a row", 10: "failed 10 times in a row"} {
			if _, err := db.Exec(`UPDATE webhooks SET status = 'FAILED', consecutive_failures = ? WHERE id = ?`, n, hook.ID); err != nil {
				t.Fatal(err)
			}
			wantContains(t, b.get(page), "This webhook "+want+" and was disabled")
		}
	})

	t.Run("AudienceCustomers", func(t *testing.T) {
		aud := e.audience(app.ID, "Germans", defCountry)
		page := fmt.Sprintf("/apps/%d/audiences/%d", app.ID, aud.ID)
		for n, want := range map[int]string{0: "customers", 1: "customer", 2: "customers"} {
			if _, err := db.Exec(`UPDATE audiences SET customer_count = ? WHERE id = ?`, n, aud.ID); err != nil {
				t.Fatal(err)
			}
			wantContains(t, b.get(page), fmt.Sprintf(`<strong id="customer-count">%d</strong> %s <span`, n, want))
		}
	})

	t.Run("Results", func(t *testing.T) {
		// The analytics read the variant counters; set them to the counts
		// each phrase needs.
		counters := func(c *store.Campaign, imp, conv [2]int) {
			t.Helper()
			for i, v := range c.Variants {
				if _, err := db.Exec(`UPDATE campaign_variants SET impressions = ?, conversions = ? WHERE id = ?`, imp[i], conv[i], v.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		one := e.campaign(app.ID, "one", "buy")
		e.start(app.ID, one.ID)
		counters(one, [2]int{1, 0}, [2]int{1, 0})
		p := b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, one.ID))
		wantContains(t, p, "1 impression · 1 conversion · ",
			"at least 1,000 impressions and 100 conversions.",
			"<li>Control: 999 more impressions and 99 more conversions</li>",
			"<li>V1: 1,000 more impressions and 100 more conversions</li>")

		near := e.campaign(app.ID, "near", "buy")
		e.start(app.ID, near.ID)
		counters(near, [2]int{999, 1000}, [2]int{99, 1})
		p = b.get(fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, near.ID))
		wantContains(t, p, "1,999 impressions · 100 conversions · ",
			"<li>Control: 1 more impression and 1 more conversion</li>",
			"<li>V1: 99 more conversions</li>")
		for _, wrong := range []string{"1 impressions", "1 conversions", "1 more impressions", "1 more conversions"} {
			if strings.Contains(p.body, ">"+wrong) || strings.Contains(p.body, " "+wrong) {
				t.Fatalf("page says %q", wrong)
			}
		}
	})
}
