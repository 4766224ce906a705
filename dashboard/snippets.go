package dashboard

import (
	"fmt"
	"html/template"
	"strings"

	"service/store"
)

// sdkSnippet is a piece of code that connects an app to this service,
// ready to copy from Settings → API Keys.
type sdkSnippet struct {
	ID    string // the element's id, which its copy button names
	Title string
	Code  string
}

// snippetKey is the key a snippet carries: the client key created by
// this very request, whose whole secret is known only now, or else the
// newest client key still in use, of which only the prefix is known. Never
// an admin or read key: a snippet is meant to ship inside an app.
type snippetKey struct {
	Key    *store.Key // nil: the app has no client key in use
	Secret string     // the whole key, only right after it was created
}

func pickClientKey(keys []*store.Key, created *store.Key, secret string) snippetKey {
	if created != nil && created.Role == store.RoleClient {
		return snippetKey{Key: created, Secret: secret}
	}
	var newest *store.Key
	for _, k := range keys {
		if k.Role == store.RoleClient && k.RevokedAt == nil && (newest == nil || k.ID > newest.ID) {
			newest = k
		}
	}
	return snippetKey{Key: newest}
}

// jsString quotes s as a JavaScript string in single quotes, as the SDK's
// README writes them. The base URL comes from the request's Host header,
// so it is escaped rather than trusted.
func jsString(s string) string {
	return "'" + template.JSEscapeString(s) + "'"
}

// sdkSnippets are the snippets the keys page offers, in order; one for
// each SDK or standard the service supports.
func sdkSnippets(appID int64, baseURL string, key snippetKey) []sdkSnippet {
	var keyLine, bearerLine string
	switch {
	case key.Secret != "":
		keyLine = "  key: " + jsString(key.Secret) + ","
		bearerLine = "  headers: [['Authorization', " + jsString("Bearer "+key.Secret) + "]],"
	case key.Key != nil:
		keyLine = "  key: " + jsString(key.Key.Prefix+"…") + ", // paste the whole key"
		bearerLine = "  headers: [['Authorization', " + jsString("Bearer "+key.Key.Prefix+"…") + "]], // paste the whole key"
	default:
		keyLine = "  key: 'sk_c_…', // a client key: create one below"
		bearerLine = "  headers: [['Authorization', 'Bearer sk_c_…']], // a client key: create one below"
	}
	js := strings.Join([]string{
		"import { createClient } from 'service-sdk';",
		"",
		"const client = createClient({",
		keyLine,
		fmt.Sprintf("  appId: %d,", appID),
		"  environment: 'production',",
		"  baseUrl: " + jsString(baseURL) + ",",
		"});",
	}, "\n")
	// OpenFeature's web provider, for a page; the server providers of other
	// languages take the same base URL and header (docs/api.md).
	of := strings.Join([]string{
		"import { OpenFeature } from '@openfeature/web-sdk';",
		"import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';",
		"",
		"await OpenFeature.setContext({ targetingKey: 'user-1' });",
		"await OpenFeature.setProviderAndWait(new OFREPWebProvider({",
		"  baseUrl: " + jsString(baseURL) + ",",
		bearerLine,
		"}));",
		"const variant = OpenFeature.getClient().getStringValue('campaign-key', 'default');",
	}, "\n")
	return []sdkSnippet{
		{ID: "snippet-js", Title: "JavaScript and React Native SDK", Code: js},
		{ID: "snippet-openfeature", Title: "OpenFeature (any language; the web provider shown)", Code: of},
	}
}
