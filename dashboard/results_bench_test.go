package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkResultsPage renders the results page of a campaign with
// 1,000,000 impressions over 30 days: analytics from the variant counters,
// charts from the hourly counters, never the assignments. Target: well
// under 50 ms an answer.
//
//	go test ./dashboard -run '^$' -bench ResultsPage -benchtime 20x
func BenchmarkResultsPage(b *testing.B) {
	e := newEnv(b)
	br := e.signedIn()
	app := e.app("big")
	c := e.campaign(app.ID, "big", "buy")
	e.start(app.ID, c.ID)
	const impressions = 1_000_000
	start := e.now.Add(-30 * 24 * time.Hour).UnixMilli()
	span := int64(30 * 24 * time.Hour / time.Millisecond)
	db := e.sql()
	// The rows the write path leaves behind for a million users, written
	// in bulk: assignments (every 9th converted, control a little less),
	// the variant counters and the hourly counters built from them.
	_, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
		INSERT INTO assignments (campaign_id, user_key, variant_id, assigned_at, converted_at)
		SELECT ?, 'u:' || i, CASE i % 2 WHEN 0 THEN ? ELSE ? END, ? + i * ? / ?,
			CASE WHEN i % 9 = 0 OR (i % 2 = 1 AND i % 11 = 0) THEN ? + i * ? / ? + 60000 END FROM n`,
		impressions, c.ID, c.Variants[0].ID, c.Variants[1].ID, start, span, impressions, start, span, impressions)
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE campaign_variants SET impressions = (SELECT COUNT(*) FROM assignments WHERE variant_id = campaign_variants.id),
			conversions = (SELECT COUNT(converted_at) FROM assignments WHERE variant_id = campaign_variants.id) WHERE campaign_id = ?`,
		`INSERT INTO campaign_variant_hours (variant_id, hour, impressions)
			SELECT variant_id, assigned_at / 3600000, COUNT(*) FROM assignments WHERE campaign_id = ? GROUP BY 1, 2`,
		`INSERT INTO campaign_variant_hours (variant_id, hour, conversions)
			SELECT variant_id, converted_at / 3600000, COUNT(*) FROM assignments WHERE campaign_id = ? AND converted_at IS NOT NULL GROUP BY 1, 2
			ON CONFLICT (variant_id, hour) DO UPDATE SET conversions = excluded.conversions`,
	} {
		if _, err := db.Exec(q, c.ID); err != nil {
			b.Fatal(err)
		}
	}
	page := fmt.Sprintf("/apps/%d/campaigns/%d/results", app.ID, c.ID)
	if p := br.get(page); p.status != http.StatusOK || !containsAll(p.body, "1,000,000 impressions", "Impressions per day") {
		b.Fatalf("status=%d\n%.2000s", p.status, p.body)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p := br.get(page); p.status != http.StatusOK {
			b.Fatal(p.status)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
