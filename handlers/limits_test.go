package handlers

import (
	"net/http"
	"strings"
	"testing"

	"service/store"
)

// TestLimitsCountCharacters sends a userId and a sessionId of exactly the
// limit, and one character more, in multi-byte characters, to every route
// that takes them: each counts characters the same way and refuses only
// the longer one, on that field.
func TestLimitsCountCharacters(t *testing.T) {
	e := newEnv(t)
	blocks := campaignBlocks(e, 2)
	campaign := campaignInState(e, blocks, store.CampaignActive, nil)
	form := formBlock(e, store.ContentPublished)
	app := e.App.ID
	fit := strings.Repeat("é", store.MaxUserIDLen) // 512 bytes, 256 characters
	over := fit + "é"
	routes := []struct {
		name, method, path, key string
		body                    func(field, v string) map[string]any
	}{
		{"variant", "POST", pathf("/v1/apps-external/%d/campaigns/%d/variant", app, campaign), e.Cli,
			func(f, v string) map[string]any { return map[string]any{"userId": "u", f: v} }},
		{"variants", "POST", pathf("/v1/apps-external/%d/variants", app), e.Cli,
			func(f, v string) map[string]any { return map[string]any{"userId": "u", f: v} }},
		{"events", "POST", pathf("/v1/apps/%d/events", app), e.Cli,
			func(f, v string) map[string]any { return map[string]any{"eventId": "e", f: v} }},
		{"submit-form", "POST", pathf("/v1/apps-external/%d/submit-form", app), e.Cli,
			func(f, v string) map[string]any {
				return map[string]any{"contentViewId": form, "data": formValid(), f: v}
			}},
		{"identify", "POST", pathf("/v1/apps-external/%d/identify", app), e.Cli,
			func(f, v string) map[string]any {
				if f == "sessionId" {
					return nil
				}
				return map[string]any{f: v, "attributes": map[string]any{}}
			}},
	}
	for _, rt := range routes {
		for _, field := range []string{"userId", "sessionId"} {
			if rt.body(field, fit) == nil {
				continue
			}
			if rec := e.do(rt.method, rt.path, rt.key, rt.body(field, fit)); rec.Code >= 400 {
				t.Errorf("%s: %s of %d characters refused: %d %s", rt.name, field, store.MaxUserIDLen, rec.Code, rec.Body)
			}
			rec := e.do(rt.method, rt.path, rt.key, rt.body(field, over))
			if rec.Code != http.StatusBadRequest {
				t.Errorf("%s: %s of %d characters: status %d, want 400", rt.name, field, store.MaxUserIDLen+1, rec.Code)
				continue
			}
			if _, ok := fieldsOf(t, rec)[field]; !ok {
				t.Errorf("%s: %s too long, but the error names %v", rt.name, field, fieldsOf(t, rec))
			}
		}
	}
}
