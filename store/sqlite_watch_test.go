package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A campaign paused through another handle on the file (as the CLI or a
// second server would) stops being answered from this handle's cache
// within a bounded time, for returning users too.
func TestWatchSeesOtherHandlesCommits(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	server, other := mustOpenDBAt(t, path), mustOpenDBAt(t, path)
	app, err := server.CreateApp(ctx, "watch", "enterprise", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCreateCampaign(t, server, app.ID, "goal", []testArm{{alloc: 50, control: true}, {alloc: 50}})
	answer := func() string {
		t.Helper()
		b, err := server.Variant(ctx, app.ID, c.ID, &VariantRequest{UserID: "returning"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a := answer(); !strings.Contains(a, `"variantId":`) || strings.Contains(a, ReasonNotActive) {
		t.Fatalf("before the pause: %s", a)
	}
	answer() // now answered from memory

	if _, err := other.SetCampaignStatus(ctx, app.ID, c.ID, CampaignPaused); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for !strings.Contains(answer(), ReasonNotActive) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("a campaign paused by another handle is still answered after 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("pause seen after %s (watch interval %s)", time.Since(start).Round(time.Millisecond), watchInterval)
}
