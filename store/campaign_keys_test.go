package store

import (
	"context"
	"strings"
	"testing"
)

func TestCampaignKeySlug(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Spring sale", "spring-sale"},
		{"  Hero -- test!  ", "hero-test"},
		{"Checkout_v2.1", "checkout-v2-1"},
		{"Été 2024!", "t-2024"},
		{"\u212a-day", "day"}, // the Kelvin sign is not an ASCII K
		{"2024", "campaign-2024"},
		{"!!!", "campaign"},
		{"", "campaign"},
		{strings.Repeat("ab ", 40), strings.Repeat("ab-", 21) + "a"}, // cut to 64
		{strings.Repeat("a", 63) + " b", strings.Repeat("a", 63)},    // no trailing dash
	} {
		if got := CampaignKeySlug(tc.name); got != tc.want || !ValidCampaignKey(got) {
			t.Errorf("CampaignKeySlug(%q)=%q (valid %v), want %q", tc.name, got, ValidCampaignKey(got), tc.want)
		}
	}
}

func TestValidCampaignKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a", true}, {"hero-test", true}, {"v2.checkout_x", true}, {"2024-sale", true},
		{strings.Repeat("k", 64), true}, {strings.Repeat("k", 65), false},
		{"", false}, {"123", false}, {"-a", false}, {"_a", false}, {".a", false},
		{"Hero", false}, {"a b", false}, {"a/b", false}, {"é", false},
	} {
		if got := ValidCampaignKey(tc.key); got != tc.ok {
			t.Errorf("ValidCampaignKey(%q)=%v, want %v", tc.key, got, tc.ok)
		}
	}
}

// Campaigns made before keys existed get keys from their names when the
// database migrates, deduplicated per app in id order with -2, -3…, even
// where a name already looks like a deduplicated key.
func TestCampaignKeyMigration(t *testing.T) {
	ctx := context.Background()
	db := mustOpenDB(t)
	a, err := db.CreateApp(ctx, "a", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateApp(ctx, "b", "free", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustMigrateDownTo(t, db, campaignKeysVersion-1)
	rows := []struct {
		app  int64
		name string
		want string
	}{
		{a.ID, "Spring sale", "spring-sale"},
		{a.ID, "Spring sale", "spring-sale-2"},
		{a.ID, "spring-sale-2", "spring-sale-2-2"},
		{a.ID, "SPRING  SALE", "spring-sale-3"},
		{a.ID, "2024", "campaign-2024"},
		{a.ID, "!!!", "campaign"},
		{a.ID, "???", "campaign-2"},
		{b.ID, "Spring sale", "spring-sale"},
	}
	ids := make([]int64, len(rows))
	err = db.withTx(ctx, func(tx *Tx) error {
		for i, r := range rows {
			if ids[i], err = tx.insertID(`INSERT INTO campaigns (app_id, name, status, created_at, updated_at) VALUES (?, ?, 'draft', 0, 0)`, r.app, r.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		c, err := db.FindCampaignByID(ctx, r.app, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if c.Key != r.want {
			t.Errorf("campaign %q of app %d: key=%q, want %q", r.name, r.app, c.Key, r.want)
		}
	}
	if n := countRows(t, db, `SELECT COUNT(*) FROM campaigns WHERE key IS NULL`); n != 0 {
		t.Fatalf("%d campaigns without a key", n)
	}
	if id, err := db.CampaignIDByKey(ctx, a.ID, "spring-sale-2-2"); err != nil || id != ids[2] {
		t.Fatalf("CampaignIDByKey=%d, %v; want %d", id, err, ids[2])
	}
	if _, err := db.CampaignIDByKey(ctx, b.ID, "spring-sale-2"); ErrorCode(err) != ENOTFOUND {
		t.Fatalf("another app's key: err=%v, want not found", err)
	}
}
