package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"
)

// A dialect field an engine leaves out would silently mean the zero value,
// which for forUpdate or lockOrder drops a row lock. So each engine's
// dialect must name every field, an empty one with the reason it is empty.
func TestDialectsNameEveryField(t *testing.T) {
	// Fields withCovariates builds from the others.
	derived := map[string]bool{"covariateEvents": true}
	fields := reflect.TypeOf(dialect{})
	for _, c := range []struct{ file, name string }{
		{"sqlite_sql.go", "sqliteDialect"},
		{"postgres_sql.go", "postgresDialect"},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), c.file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		named := map[string]bool{}
		found := false
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || vs.Names[0].Name != c.name {
				return true
			}
			ast.Inspect(vs.Values[0], func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok || found {
					return true
				}
				if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "dialect" {
					return true
				}
				found = true
				for _, e := range lit.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						named[kv.Key.(*ast.Ident).Name] = true
					}
				}
				return false
			})
			return false
		})
		if !found {
			t.Fatalf("%s: no dialect literal %s", c.file, c.name)
		}
		for i := 0; i < fields.NumField(); i++ {
			name := fields.Field(i).Name
			if !named[name] && !derived[name] {
				t.Errorf("%s: %s does not name the dialect field %s; set it, empty with a comment if the engine needs nothing there", c.file, c.name, name)
			}
		}
	}
}
