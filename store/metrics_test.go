package store

import (
	"context"
	"testing"
	"time"
)

// An app that holds only a metric still holds data: deleting it needs
// force, and force takes the metric and its links with it.
func TestMetricsGoWithTheirApp(t *testing.T) {
	ctx := context.Background()
	db, app, _ := mustOpenApp(t, time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC))
	key, name, typ, event := "signups", "Sign-ups", MetricConversion, "signup"
	m, err := db.CreateMetric(ctx, app, MetricInput{Key: &key, Name: &name, Type: &typ, EventID: &event})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := db.DeleteApp(ctx, app, false)
	wantCode(t, err, EINVALID)
	if err.(*Error).Details["metrics"] != int64(1) {
		t.Fatalf("refusal details %v, want metrics: 1", err.(*Error).Details)
	}
	if counts, err = db.DeleteApp(ctx, app, true); err != nil || counts["metrics"] != 1 {
		t.Fatalf("forced delete: %v, %v", counts, err)
	}
	if n := countRows(t, db, `SELECT COUNT(*) FROM metrics WHERE id = ?`, m.ID); n != 0 {
		t.Fatalf("%d metrics left of the deleted app", n)
	}
}
