package cmd

import (
	"context"
	"encoding/json"

	"service/jsonjs"
	"service/store"
)

// seedDemo fills a database with a small app a developer can try at once.
func seedDemo(ctx context.Context, d *store.DB) (map[string]any, error) {
	app, err := d.CreateApp(ctx, "Demo app", "pro", 0)
	if err != nil {
		return nil, err
	}
	_, admin, err := d.CreateKey(ctx, app.ID, store.RoleAdmin, "demo admin")
	if err != nil {
		return nil, err
	}
	_, client, err := d.CreateKey(ctx, app.ID, store.RoleClient, "demo client")
	if err != nil {
		return nil, err
	}
	var contentIDs []int64
	for _, c := range []struct{ name, items string }{
		{"Hero A", `[{"type":"heading","content":"Welcome back"},{"type":"text","content":"Save 10% today.","styles":{"fontSize":16,"color":"#333333"}},{"type":"button","label":"Shop now","url":"/shop"}]`},
		{"Hero B", `[{"type":"heading","content":"Hello again"},{"type":"text","content":"Free shipping this week.","styles":{"fontSize":18,"color":"#0a7d32"}},{"type":"button","label":"Start shopping","url":"/shop"}]`},
		{"Newsletter", `[{"type":"text","content":"Stay in touch"},{"type":"form","fields":[{"name":"email","type":"email","label":"Email","required":true}],"submitLabel":"Subscribe","successMessage":"Thanks!"}]`},
	} {
		name, status := c.name, store.ContentPublished
		cv, err := d.CreateContent(ctx, app.ID, store.ContentInput{Name: &name, Status: &status, Items: json.RawMessage(c.items)})
		if err != nil {
			return nil, err
		}
		contentIDs = append(contentIDs, cv.ID)
	}
	out := map[string]any{
		"appId":          app.ID,
		"adminKey":       admin,
		"clientKey":      client,
		"contentViewIds": contentIDs,
	}
	return seedMore(ctx, d, app.ID, contentIDs, out)
}

// seedMore adds the audience and an active campaign of the demo.
func seedMore(ctx context.Context, d *store.DB, appID int64, contentIDs []int64, out map[string]any) (map[string]any, error) {
	aname := "Returning buyers"
	aud, err := d.CreateAudience(ctx, appID, store.AudienceInput{Name: &aname, Definition: json.RawMessage(
		`{"logic":"AND","rules":[{"ruleType":"event","eventId":"purchase","operator":"has_performed"}]}`)})
	if err != nil {
		return nil, err
	}
	if aud, err = d.RecountAudience(ctx, appID, aud.ID); err != nil {
		return nil, err
	}
	name, status, goal := "Homepage hero", store.CampaignActive, `"purchase"`
	end := []byte(`"` + d.Now().UTC().AddDate(0, 1, 0).Format(jsonjs.TimeLayout) + `"`)
	ctl, a, b := true, contentIDs[0], contentIDs[1]
	nameA, nameB := "Control", "Free shipping"
	half := 50.0
	c, err := d.CreateCampaign(ctx, appID, 0, store.CampaignInput{
		Name: &name, Status: &status, EndDate: end, GoalEventID: json.RawMessage(goal),
		Variants: &[]store.VariantInput{
			{Name: &nameA, ContentViewID: &a, TrafficAllocation: &half, IsControl: &ctl},
			{Name: &nameB, ContentViewID: &b, TrafficAllocation: &half},
		},
	})
	if err != nil {
		return nil, err
	}
	out["audienceId"] = aud.ID
	out["campaignId"] = c.ID
	return out, nil
}
