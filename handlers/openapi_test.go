package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/julienschmidt/httprouter"
)

// The OpenAPI document is held true three ways: it validates as OpenAPI
// 3.1 (kin-openapi, whose 3.1 support validates schemas as JSON Schema
// 2020-12); the routes it documents are exactly the routes the router
// serves; and every request and answer the handler tests exchange through
// testEnv.do is checked against it (TestMain, after the tests ran).

func loadOpenAPI(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatalf("handlers/openapi.json does not load: %v", err)
	}
	return doc
}

func TestOpenAPIValidates(t *testing.T) {
	doc := loadOpenAPI(t)
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi=%q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("handlers/openapi.json is not a valid OpenAPI 3.1 document: %v", err)
	}
}

// pathParam turns the document's {name} into the router's :name.
var pathParam = regexp.MustCompile(`\{(\w+)\}`)

// routeParam is the router's :name, turned back into {name}.
var routeParam = regexp.MustCompile(`:(\w+)`)

// documented lists the document's operations as router routes.
func documented(doc *openapi3.T) map[Route]bool {
	out := map[Route]bool{}
	for p, item := range doc.Paths.Map() {
		for m := range item.Operations() {
			out[Route{m, pathParam.ReplaceAllString(p, ":$1")}] = true
		}
	}
	return out
}

func TestOpenAPICoversEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	docd := documented(doc)
	served := map[Route]bool{}
	for _, r := range New(nil, nil).Routes() {
		served[r] = true
	}
	var problems []string
	for r := range served {
		if !docd[r] {
			problems = append(problems, fmt.Sprintf("route %s %s is served but not documented: add paths[%q].%s to handlers/openapi.json",
				r.Method, r.Path, routeParam.ReplaceAllString(r.Path, "{$1}"), strings.ToLower(r.Method)))
		}
	}
	for r := range docd {
		if !served[r] {
			problems = append(problems, fmt.Sprintf("operation %s %s is documented in handlers/openapi.json but no route serves it", r.Method, r.Path))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/v1/openapi.json", "/api/v1/openapi.json"} {
		rec := e.do("GET", p, "", nil)
		if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), OpenAPI) {
			t.Fatalf("GET %s: %d, body equal to the document: %v", p, rec.Code, bytes.Equal(rec.Body.Bytes(), OpenAPI))
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("GET %s: Content-Type %q", p, ct)
		}
	}
}

// openAPIChecker finds the document's operation for a request path.
type openAPIChecker struct {
	doc *openapi3.T
	rt  *httprouter.Router
	// found is set by the matched route's handle; checks run one at a time.
	found *routers.Route
}

func newOpenAPIChecker(doc *openapi3.T) *openAPIChecker {
	c := &openAPIChecker{doc: doc, rt: httprouter.New()}
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			rp := pathParam.ReplaceAllString(p, ":$1")
			r := &routers.Route{Spec: doc, Server: doc.Servers[0], Path: p, PathItem: item, Method: m, Operation: op}
			c.rt.Handle(m, rp, func(http.ResponseWriter, *http.Request, httprouter.Params) { c.found = r })
		}
	}
	return c
}

// check validates one exchange: the request when it succeeded (failed
// requests are often deliberately outside the schema), and always the
// answer, whose status must be documented.
func (c *openAPIChecker) check(x exchange) (route string, err error) {
	p := x.Path
	if rest, ok := strings.CutPrefix(p, "/api/v1"); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(p, "/v1"); ok {
		p = rest
	}
	h, params, _ := c.rt.Lookup(x.Method, p)
	if h == nil {
		return "", nil // an unknown route or method: nothing to check against
	}
	h(nil, nil, nil) // sets c.found
	route2 := c.found
	route = x.Method + " " + route2.Path
	pp := map[string]string{}
	for _, prm := range params {
		pp[prm.Key] = prm.Value
	}
	target := x.Path
	if x.Query != "" {
		target += "?" + x.Query
	}
	req := httptest.NewRequest(x.Method, target, bytes.NewReader(x.Body))
	req.Header = x.Header.Clone()
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pp, Route: route2,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	ctx := context.Background()
	if x.Status < 300 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return route, fmt.Errorf("request %s %s %s: %v", x.Method, target, x.Body, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.Status, Header: x.RespHeader,
		Body: io.NopCloser(bytes.NewReader(x.RespBody)), Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return route, fmt.Errorf("answer %d to %s %s: %s: %v", x.Status, x.Method, target, x.RespBody, err)
	}
	return route, nil
}

// checkExchanges validates every recorded exchange and reports the
// failures grouped by route and status.
func checkExchanges(w io.Writer) bool {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		fmt.Fprintf(w, "openapi: %v\n", err)
		return false
	}
	c := newOpenAPIChecker(doc)
	type key struct {
		route  string
		status int
	}
	fails := map[key][]string{}
	n, checked := 0, 0
	for _, x := range exchanges.all() {
		n++
		route, err := c.check(x)
		if route != "" {
			checked++
		}
		if err != nil {
			k := key{route, x.Status}
			fails[k] = append(fails[k], err.Error())
		}
	}
	if len(fails) == 0 {
		return true
	}
	keys := make([]key, 0, len(fails))
	for k := range fails {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].route < keys[j].route || keys[i].route == keys[j].route && keys[i].status < keys[j].status
	})
	fmt.Fprintf(w, "FAIL: %d of %d recorded exchanges disagree with handlers/openapi.json:\n", len(fails), checked)
	for _, k := range keys {
		msg := strings.Join(strings.Fields(fails[k][0]), " ")
		if len(msg) > 800 {
			msg = msg[:800] + "..."
		}
		fmt.Fprintf(w, "  %s -> %d (%d times), e.g. %s\n", k.route, k.status, len(fails[k]), msg)
	}
	return false
}
