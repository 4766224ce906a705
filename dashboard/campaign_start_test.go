package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"service/store"
)

// The campaign page says why a campaign cannot start before Start is
// pressed, and the scheduled one says it will not start, until its draft
// block is published.
func TestCampaignPageSaysWhyItCannotStart(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	pub := e.published(app.ID, "Hero A", `[]`)
	draft := e.content(app.ID, "Hero B", `[]`)
	name, end := "Hero test", json.RawMessage(fmt.Sprintf("%q", e.now.Add(30*24*time.Hour).UTC().Format(time.RFC3339)))
	vs := []store.VariantInput{{ContentViewID: &pub.ID}, {ContentViewID: &draft.ID}}
	c, err := e.db.CreateCampaign(e.ctx, app.ID, 0, store.CampaignInput{Name: &name, EndDate: end, Variants: &vs})
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("/apps/%d/campaigns/%d", app.ID, c.ID)
	problem := fmt.Sprintf(`block %d is a draft (<a href="/apps/%d/content/%d">Hero B</a>).`, draft.ID, app.ID, draft.ID)
	disabledStart := fmt.Sprintf(`disabled aria-describedby="start-blocked" title="content block %d is a draft; publish it first">Start</button>`, draft.ID)

	t.Run("Unscheduled", func(t *testing.T) {
		p := b.get(page)
		wantContains(t, p, `id="start-blocked"`, "Cannot start: "+problem, disabledStart)
		if strings.Contains(p.body, "will not start") {
			t.Error("a draft without a start date is said to be scheduled")
		}
		// Posted anyway, the start is refused beside the variant's picker.
		p = b.post(page+"/status", url.Values{"to": {"active"}})
		wantStatus(t, p, http.StatusUnprocessableEntity)
		wantContains(t, p, fmt.Sprintf("Refused: content block %d is a draft; publish it first", draft.ID))
		if !errBeside(p.body, "variants[1].contentViewId", fmt.Sprintf("content block %d is a draft", draft.ID)) {
			t.Fatalf("no refusal beside the draft block's picker:\n%s", p.body)
		}
	})

	t.Run("Scheduled", func(t *testing.T) {
		at := e.now.Add(24 * time.Hour).UTC().Truncate(time.Minute)
		start := json.RawMessage(fmt.Sprintf("%q", at.Format(time.RFC3339)))
		if _, err := e.db.UpdateCampaign(e.ctx, app.ID, c.ID, store.CampaignInput{StartDate: start}); err != nil {
			t.Fatal(err)
		}
		wantContains(t, b.get(page), "Scheduled for "+at.Format("2006-01-02 15:04")+" (UTC), but will not start: "+problem, disabledStart)
	})

	t.Run("Published", func(t *testing.T) {
		st := store.ContentPublished
		if _, err := e.db.UpdateContent(e.ctx, app.ID, draft.ID, store.ContentInput{Status: &st}); err != nil {
			t.Fatal(err)
		}
		p := b.get(page)
		wantContains(t, p, `class="btn primary">Start</button>`)
		if strings.Contains(p.body, "start-blocked") || strings.Contains(p.body, "will not start") {
			t.Fatalf("a campaign that can start is said not to:\n%s", p.body)
		}
		wantStatus(t, b.post(page+"/status", url.Values{"to": {"active"}}), http.StatusSeeOther)
	})
}

// Locked variants name their blocks, as the pickers of a draft do, and
// the start date is the same date control as the end, disabled.
func TestLockedCampaignShowsBlockNamesAndDates(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c := e.campaign(app.ID, "Names", "buy")
	e.start(app.ID, c.ID)
	page := fmt.Sprintf("/apps/%d/campaigns/%d", app.ID, c.ID)
	got, err := e.db.FindCampaignByID(e.ctx, app.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	start := got.StartDate.UTC().Format("2006-01-02T15:04")
	p := b.get(page)
	for i, v := range c.Variants {
		wantContains(t, p, fmt.Sprintf(`<td data-block="%d">Names block %d</td>`, v.ContentViewID, i))
		if strings.Contains(p.body, fmt.Sprintf("#%d", v.ContentViewID)) {
			t.Errorf("variant %d shows its block as an id", i)
		}
	}
	wantContains(t, p, fmt.Sprintf(`<input type="datetime-local" value="%s" disabled>`, start), `type="datetime-local" name="endDate"`)

	// Completed, both dates are locked alike; a block archived since keeps
	// its name, and one deleted since is said to be.
	if _, err := e.db.SetCampaignStatus(e.ctx, app.ID, c.ID, store.CampaignCompleted); err != nil {
		t.Fatal(err)
	}
	archived := store.ContentArchived
	if _, err := e.db.UpdateContent(e.ctx, app.ID, c.Variants[0].ContentViewID, store.ContentInput{Status: &archived}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.DeleteContent(e.ctx, app.ID, c.Variants[1].ContentViewID); err != nil {
		t.Fatal(err)
	}
	p = b.get(page)
	wantContains(t, p, `>Names block 0</td>`, fmt.Sprintf(`>#%d (deleted)</td>`, c.Variants[1].ContentViewID))
	if n := strings.Count(p.body, `<input type="datetime-local" value=`); n != 2 {
		t.Fatalf("%d disabled date controls on a completed campaign, want start and end", n)
	}
}
