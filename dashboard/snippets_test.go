package dashboard_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var openFeatureRe = regexp.MustCompile(`(?s)<pre id="snippet-openfeature" class="code-block"><code>(.*?)</code></pre>`)

var snippetRe = regexp.MustCompile(`(?s)<pre id="snippet-js" class="code-block"><code>(.*?)</code></pre>`)

// TestKeysPageSDKSnippet: Settings → API Keys shows the app's id and a
// createClient snippet to copy, carrying a client key of this app: the
// whole key right after it is created, later its prefix, and never an
// admin key or another app's.
func TestKeysPageSDKSnippet(t *testing.T) {
	e := newEnv(t)
	b := e.signedIn()
	app, other := e.app("Shop"), e.app("Other")
	otherKey, _, err := e.db.CreateKey(e.ctx, other.ID, "client", "other-web")
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/apps/%d/settings/keys", app.ID)
	snippet := func(p page) string {
		t.Helper()
		m := snippetRe.FindStringSubmatch(p.body)
		if m == nil {
			t.Fatalf("no snippet:\n%s", p.body)
		}
		wantContains(t, p, fmt.Sprintf(`<code id="app-id">%d</code>`, app.ID), `data-copy="snippet-js"`)
		return html.UnescapeString(m[1])
	}
	want := func(key string) string {
		return "import { createClient } from 'service-sdk';\n\nconst client = createClient({\n" + key + "\n" +
			fmt.Sprintf("  appId: %d,\n  environment: 'production',\n  baseUrl: '%s',\n});", app.ID, e.srv.URL)
	}

	var web, mobile string // the client keys' whole secrets
	for _, tc := range []struct {
		name string
		do   func() page
		key  func() string // the snippet's key line
		says string        // what the page says of the key
	}{
		{"NoClientKeyAPlaceholder", func() page { return b.get(base) },
			func() string { return "  key: 'sk_c_…', // a client key: create one below" }, "no client key yet"},
		{"AnAdminKeyIsNeverCarried", func() page {
			p := b.post(base, url.Values{"name": {"backend"}, "role": {"admin"}})
			wantStatus(t, p, http.StatusCreated)
			return p
		}, func() string { return "  key: 'sk_c_…', // a client key: create one below" }, "no client key yet"},
		{"NewClientKeyWhole", func() page {
			p := b.post(base, url.Values{"name": {"web"}, "role": {"client"}})
			wantStatus(t, p, http.StatusCreated)
			web = secretRe.FindStringSubmatch(p.body)[1]
			return p
		}, func() string { return "  key: '" + web + "'," }, "copy it now"},
		{"LaterItsPrefix", func() page { return b.get(base) },
			func() string { return "  key: '" + web[:10] + "…', // paste the whole key" }, "of the client key “web”"},
		{"TheNewestClientKey", func() page {
			p := b.post(base, url.Values{"name": {"mobile"}, "role": {"client"}})
			wantStatus(t, p, http.StatusCreated)
			mobile = secretRe.FindStringSubmatch(p.body)[1]
			return b.get(base)
		}, func() string { return "  key: '" + mobile[:10] + "…', // paste the whole key" }, "of the client key “mobile”"},
		{"NotARevokedOne", func() page {
			keys, _ := e.db.FindKeys(e.ctx, app.ID)
			if _, err := e.db.RevokeKey(e.ctx, keys[len(keys)-1].ID); err != nil {
				t.Fatal(err)
			}
			return b.get(base)
		}, func() string { return "  key: '" + web[:10] + "…', // paste the whole key" }, "of the client key “web”"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.do()
			got := snippet(p)
			if w := want(tc.key()); got != w {
				t.Fatalf("snippet:\n%s\nwant:\n%s", got, w)
			}
			wantContains(t, p, tc.says)
			// The OpenFeature snippet carries the same key, as a bearer
			// token, and the same base URL: OFREP providers append
			// /ofrep/v1/… to it.
			m := openFeatureRe.FindStringSubmatch(p.body)
			if m == nil {
				t.Fatalf("no OpenFeature snippet:\n%s", p.body)
			}
			of := html.UnescapeString(m[1])
			key := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(tc.key(), ",", 2)[0], "  key: '"), "'")
			for _, w := range []string{"new OFREPWebProvider({", "  baseUrl: '" + e.srv.URL + "',",
				"  headers: [['Authorization', 'Bearer " + key + "']]," + strings.SplitN(tc.key(), ",", 2)[1]} {
				if !strings.Contains(of, w) {
					t.Fatalf("OpenFeature snippet lacks %q:\n%s", w, of)
				}
			}
			wantContains(t, p, `data-copy="snippet-openfeature"`)
		})
	}
	if p := b.get(base); strings.Contains(p.body, otherKey.Prefix) || strings.Contains(p.body, "other-web") {
		t.Fatal("another app's client key is shown")
	}
}
