package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"service/store"
)

// TestCampaignEditorKey shows the key in the editor, makes one from the
// name when left empty, takes a new one while the campaign is a draft,
// refuses a bad one beside the field, and locks it once started.
func TestCampaignEditorKey(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app := e.app("shop")
	c1 := e.published(app.ID, "one", `[{"type":"text","content":"one"}]`)
	c2 := e.published(app.ID, "two", `[{"type":"text","content":"two"}]`)
	base := fmt.Sprintf("/apps/%d/campaigns", app.ID)
	wantContains(t, b.get(base+"/new"), `name="key"`)

	f := campaignFormOf(c1.ID, c2.ID)
	f.Set("name", "Hero Test")
	wantStatus(t, b.post(base, f), http.StatusSeeOther)
	list, _, err := e.db.FindCampaigns(e.ctx, app.ID, store.CampaignDraft, store.ListOptions{Limit: 10, Page: 1})
	if err != nil || len(list) != 1 || list[0].Key != "hero-test" {
		t.Fatalf("drafts %v, %v", list, err)
	}
	page := fmt.Sprintf("%s/%d", base, list[0].ID)
	wantContains(t, b.get(page), `name="key" value="hero-test"`)

	t.Run("BadKeyBesideTheField", func(t *testing.T) {
		f.Set("key", "Not A Key")
		p := b.post(page, f)
		wantStatus(t, p, http.StatusUnprocessableEntity)
		if !errBeside(p.body, "key", "must be 1 to 64 characters") {
			t.Fatalf("no refusal beside the key:\n%s", p.body)
		}
	})
	t.Run("ChangedWhileDraft", func(t *testing.T) {
		f.Set("key", "hero-v2")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		c, err := e.db.FindCampaignByID(e.ctx, app.ID, list[0].ID)
		if err != nil || c.Key != "hero-v2" {
			t.Fatalf("key %q, %v", c.Key, err)
		}
	})
	t.Run("LockedOnceStarted", func(t *testing.T) {
		e.start(app.ID, list[0].ID)
		p := b.get(page)
		if strings.Contains(p.body, `name="key"`) {
			t.Fatal("a running campaign offers its key for editing")
		}
		wantContains(t, p, `value="hero-v2" disabled`)
		f.Set("key", "other")
		f.Set("name", "Hero renamed")
		wantStatus(t, b.post(page, f), http.StatusSeeOther)
		c, err := e.db.FindCampaignByID(e.ctx, app.ID, list[0].ID)
		if err != nil || c.Key != "hero-v2" || c.Name != "Hero renamed" {
			t.Fatalf("key %q name %q, %v", c.Key, c.Name, err)
		}
	})
}
