package dashboard

import (
	"encoding/json"
	"html/template"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"service/store"
)

// funcs are the helpers templates may call. None returns template.HTML:
// everything a page shows goes through html/template's escaping.
var funcs = template.FuncMap{
	// err returns the reason for exactly this field path.
	"err": func(errs map[string]string, path string) string { return errs[path] },
	// errUnder returns the first reason for path or anything inside it
	// (events[2] is shown beside events).
	"errUnder": func(errs map[string]string, p string) string {
		if e := errs[p]; e != "" {
			return e
		}
		best := ""
		for k := range errs {
			if (strings.HasPrefix(k, p+".") || strings.HasPrefix(k, p+"[")) && (best == "" || k < best) {
				best = k
			}
		}
		if best == "" {
			return ""
		}
		return strings.TrimPrefix(best, p) + " " + errs[best]
	},
	"when": func(t any) string {
		switch v := t.(type) {
		case store.Time:
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case *store.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return ""
	},
	"add": func(a, b int) int { return a + b },
	"deref64": func(n *int64) int64 {
		if n == nil {
			return 0
		}
		return *n
	},
	// tabs is what the campaign's tab bar needs.
	"tabs": func(v *view, c *store.Campaign, tab string) any {
		return struct {
			Base     string
			Campaign *store.Campaign
			Tab      string
		}{v.Base(), c, tab}
	},
	"engineLabel":    engineLabel,
	"metricMeasures": metricMeasures,
	"metricValue":    metricValue,
	"metricDiff":     metricDiff,
	"chance":         chance,
	"prob":           prob,
	"points":         points,
	"signedPts":      signedPts,
	"share":          share,
	"nsBar":          namespaceBar,
	"ptr":            func(f float64) *float64 { return &f },
	"pct":            pct,
	"signedPct":      signedPct,
	"pval":           pval,
	"conf":           confidence,
	"pexpr":          pExpr,
	"exact":          exact,
	"thousands":      thousands,
	"plural":         plural,
	"pluralWord":     pluralWord,
	"fieldsOf":       strings.Fields,
	"contains":       func(list []string, s string) bool { return contains(list, s) },
	"json": func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	},
	"rawjson": func(r json.RawMessage) string { return string(r) },
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"deref2": func(n *int) int {
		if n == nil {
			return 0
		}
		return *n
	},
	// planLabel names a plan with its limit: "Pro (1,000/min)".
	"planLabel": func(plan string) string {
		name := strings.ToUpper(plan[:1]) + plan[1:]
		return name + " (" + thousands(int64(store.PlanLimit(plan))) + "/min)"
	},
	"title": func(s string) string {
		if s == "" {
			return s
		}
		return strings.ToUpper(s[:1]) + s[1:]
	},
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pages holds each page's template set in a sync.Pool, parsed with the
// layout and the shared partials (one set per page, so pages can all
// define "content").
//
// The pool is what keeps the service fast while nobody is looking at the
// dashboard. Parsed and escaped, the pages are about 40,000 small heap
// objects, and the garbage collector marks every live object on each of
// its cycles: kept for the life of the process they cost the SDK routes
// about 6% of their throughput under load. A pool keeps a page while the
// dashboard is in use and lets the collector drop it two cycles after its
// last render; parsing a page again takes a fraction of a millisecond.
type pages map[string]*sync.Pool

// parsePages parses every page once, so a broken template stops the
// service at start rather than at a render, and returns the pools that
// parse them again on demand.
func parsePages() pages {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	ps := pages{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if strings.HasPrefix(name, "_") {
			continue
		}
		template.Must(parsePage(n))
		ps[name] = &sync.Pool{New: func() any { return template.Must(parsePage(n)) }}
	}
	return ps
}

func parsePage(file string) (*template.Template, error) {
	t, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/_*.html")
	if err != nil {
		return nil, err
	}
	return t.ParseFS(templateFS, file)
}
