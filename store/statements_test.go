package store

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"service/internal/pgtest"
	"service/store/postgres"
)

// The statement registry: every SQL text the store runs, named by the
// function that runs it, in each engine's form. It is read from the
// source itself (go/ast), so a statement added anywhere in the store is in
// it without a list kept by hand; a text built at run time, which the
// source alone cannot spell, is registered in its built forms in
// builtStatements, and a call site that is neither fails the test.
// testdata/statements.sqlite.sql and testdata/statements.postgres.sql
// hold the registry as each engine runs it (go test ./store -run
// TestStatementRegistry -update), so the SQL of a route on an engine is
// one file away; TestStatementsPrepare proves each text on each engine.

// sqlMethods are the methods that run SQL, with the position of their SQL
// argument.
var sqlMethods = map[string]int{
	"exec": 0, "query": 0, "queryRow": 0, "insertID": 0, "queryRowFirst": 1,
	"ExecContext": 1, "QueryContext": 1, "QueryRowContext": 1, "PrepareContext": 1, "Prepare": 0,
	// pgx's own connections: the context first.
	"Exec": 1, "Query": 1, "QueryRow": 1,
	// The store's statements sent with pgx's own (store/postgres/tx.go).
	"ExecCommit": 2, "RawQuery": 2, "RawQueryRow": 2, "Defer": 1,
}

// statement is one registered SQL text.
type statement struct {
	name string // the function that runs it, and its ordinal there
	pos  string // file:line of the call
	// engines are the engines that run it: a statement of an engine's own
	// file runs on that engine only.
	engines []string
	// text is its text on each engine, in each form it is built in.
	text map[string][]string
}

// engineFragments evaluates the SQL fragments of sqlText by method name.
var engineFragments = map[string]func(sqlText) string{
	"greatest":          sqlText.greatest,
	"jsonEach":          sqlText.jsonEach,
	"jsonTexts":         sqlText.jsonTexts,
	"jsonIDs":           sqlText.jsonIDs,
	"assignmentsOfKeys": sqlText.assignmentsOfKeys,
	"instr":             sqlText.instr,
	"payloadHas":        sqlText.payloadHas,
	"unindexed":         sqlText.unindexed,
	"eventsByEventTS":   sqlText.eventsByEventTS,
	"forUpdate":         sqlText.forUpdate,
	"skipLocked":        sqlText.skipLocked,
}

// testEngines are the engines the registry is spelled for.
var testEngines = []struct {
	name string
	eng  engine
}{
	{"sqlite", sqliteEngine{}},
	{"postgres", &postgresEngine{}},
}

// engineOf returns the engine whose own code a file or function is, or
// "" for the domain's.
func engineOf(file, fn string) string {
	switch {
	case strings.HasPrefix(file, "sqlite"), strings.HasPrefix(fn, "sqliteEngine."):
		return "sqlite"
	case strings.HasPrefix(file, "postgres"), strings.HasPrefix(fn, "postgresEngine."):
		return "postgres"
	}
	return ""
}

// source is the store's parsed source.
type source struct {
	fset   *token.FileSet
	files  map[string]*ast.File
	consts map[string]ast.Expr
	funcs  map[string][]*ast.FuncDecl // by name, methods and functions alike
	pkg    map[*ast.FuncDecl]string   // "" for package store's, else "sqlite." or "postgres."
}

// pkgOf is the prefix of the names of a file's package: "" for package
// store, "postgres." for store/postgres.
func pkgOf(file string) string {
	if dir := filepath.Dir(file); dir != "." {
		return dir + "."
	}
	return ""
}

func parseStore(t *testing.T) *source {
	t.Helper()
	src := &source{fset: token.NewFileSet(), files: map[string]*ast.File{}, consts: map[string]ast.Expr{}, funcs: map[string][]*ast.FuncDecl{}, pkg: map[*ast.FuncDecl]string{}}
	var names []string
	for _, dir := range []string{".", "sqlite", "postgres"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m...)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(src.fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		src.files[name] = f
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				src.funcs[d.Name.Name] = append(src.funcs[d.Name.Name], d)
				src.pkg[d] = pkgOf(name)
			case *ast.GenDecl:
				if d.Tok != token.CONST && d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							src.consts[pkgOf(name)+n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	return src
}

// registry reads the store's statements from its source: the texts of the
// SQL arguments of every call of sqlMethods, spelled on each engine. A
// text built at run time must be in builtStatements; the names of those
// that are not come back in unbuilt.
func registry(t *testing.T) (list []statement, unbuilt []string) {
	t.Helper()
	src := parseStore(t)
	files := slices.Sorted(maps.Keys(src.files))
	methods := wrappers(src)
	for _, file := range files {
		for _, d := range src.files[file].Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fname := pkgOf(file) + funcName(fd)
			params := paramNames(fd)
			locals := localAssignments(fd.Body)
			calls := localWrappers(fd, methods, params)
			n := 0
			ast.Inspect(fd.Body, func(node ast.Node) bool {
				call, ok := node.(*ast.CallExpr)
				if !ok {
					return true
				}
				at, ok := methods[calledName(call.Fun)]
				if local, isLocal := calls[calledName(call.Fun)]; isLocal {
					at, ok = local, true
				}
				if name := calledName(call.Fun); (name == "Exec" || name == "Query" || name == "QueryRow") && len(call.Args) > 0 && !isContext(call.Args[0]) {
					at = 0 // database/sql's Exec, Query and QueryRow, without one
				}
				if !ok || at >= len(call.Args) {
					return true
				}
				arg := call.Args[at]
				if id, ok := arg.(*ast.Ident); ok && params[id.Name] && locals[id.Name] == nil {
					return true // a wrapper: its callers name the statement
				}
				pos := src.fset.Position(call.Pos())
				n++
				st := statement{name: fmt.Sprintf("%s#%d", fname, n), pos: fmt.Sprintf("%s:%d", pos.Filename, pos.Line), text: map[string][]string{}}
				only := engineOf(file, fname)
				for _, e := range testEngines {
					if only != "" && only != e.name {
						continue
					}
					st.engines = append(st.engines, e.name)
					var texts []string
					if build, ok := builtStatements[st.name]; ok {
						if build == nil {
							return true // not a statement of its own
						}
						texts = build(e.eng)
					} else {
						ev := &evaluator{src: src, eng: e.eng, locals: locals, pkg: pkgOf(file)}
						texts, ok = ev.eval(arg)
						if !ok {
							// Built from the function's parameters: spelled
							// with each caller's arguments.
							texts, ok = ev.viaCallers(fd, arg)
						}
						if !ok {
							unbuilt = append(unbuilt, st.name+" ("+st.pos+")")
							return true
						}
					}
					if calledName(call.Fun) == "insertID" {
						for i := range texts {
							texts[i] += ` RETURNING id`
						}
					}
					st.text[e.name] = texts
				}
				list = append(list, st)
				return true
			})
		}
	}
	return list, slices.Compact(unbuilt)
}

// wrappers returns sqlMethods and the store's functions that run a text
// their caller gives them (as a parameter), with its position: a call of
// one of those is where the statement is named.
func wrappers(src *source) map[string]int {
	methods := maps.Clone(sqlMethods)
	for changed := true; changed; {
		changed = false
		for name, fds := range src.funcs {
			if _, ok := methods[name]; ok || len(fds) != 1 || fds[0].Body == nil {
				continue
			}
			fd := fds[0]
			var params []string
			for _, p := range fd.Type.Params.List {
				for _, n := range p.Names {
					params = append(params, n.Name)
				}
			}
			locals := localAssignments(fd.Body)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				at, ok := methods[calledName(call.Fun)]
				if !ok || at >= len(call.Args) {
					return true
				}
				id, ok := call.Args[at].(*ast.Ident)
				if !ok || locals[id.Name] != nil {
					return true
				}
				if i := slices.Index(params, id.Name); i >= 0 {
					methods[name] = i
					changed = true
					return false
				}
				return true
			})
		}
	}
	return methods
}

// isContext reports whether e names a context: ctx, or a field of that
// name (tx.ctx).
func isContext(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "ctx" || x.Name == "pctx"
	case *ast.SelectorExpr:
		return x.Sel.Name == "ctx"
	case *ast.CallExpr:
		return calledName(x.Fun) == "Background" || calledName(x.Fun) == "TODO"
	}
	return false
}

// localWrappers returns the function's closures that run a text their
// caller gives them, by the variable that holds each, with the position
// of that parameter; it adds their parameters to params, so that their
// own call of a query method counts as a wrapper's.
func localWrappers(fd *ast.FuncDecl, methods map[string]int, params map[string]bool) map[string]int {
	out := map[string]int{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		id, ok := as.Lhs[0].(*ast.Ident)
		lit, isLit := as.Rhs[0].(*ast.FuncLit)
		if !ok || !isLit {
			return true
		}
		var names []string
		for _, p := range lit.Type.Params.List {
			for _, n := range p.Names {
				names = append(names, n.Name)
			}
		}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			at, ok := methods[calledName(call.Fun)]
			if !ok || at >= len(call.Args) {
				return true
			}
			if arg, ok := call.Args[at].(*ast.Ident); ok {
				if i := slices.Index(names, arg.Name); i >= 0 {
					out[id.Name] = i
					params[arg.Name] = true
				}
			}
			return true
		})
		return true
	})
	return out
}

// funcName names a function as Type.method or function.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	return fmt.Sprint(t) + "." + fd.Name.Name
}

func paramNames(fd *ast.FuncDecl) map[string]bool {
	params := map[string]bool{}
	for _, p := range fd.Type.Params.List {
		for _, n := range p.Names {
			params[n.Name] = true
		}
	}
	return params
}

// assignment is a value a local variable is given: set (= or :=), or
// appended to it (+=).
type assignment struct {
	expr   ast.Expr
	append bool
}

// localAssignments maps each local variable to the values it is given,
// nil for one given a value otherwise (several at once, a function's).
func localAssignments(body *ast.BlockStmt) map[string][]assignment {
	m := map[string][]assignment{}
	bad := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for i, l := range s.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				switch {
				case (s.Tok == token.ASSIGN || s.Tok == token.DEFINE) && len(s.Lhs) == len(s.Rhs):
					m[id.Name] = append(m[id.Name], assignment{expr: s.Rhs[i]})
				case s.Tok == token.ADD_ASSIGN:
					m[id.Name] = append(m[id.Name], assignment{expr: s.Rhs[i], append: true})
				default:
					bad[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				if i < len(s.Values) {
					m[id.Name] = append(m[id.Name], assignment{expr: s.Values[i]})
				}
			}
		case *ast.RangeStmt:
			// The value of a range over a list of texts is each of them.
			if id, ok := s.Value.(*ast.Ident); ok {
				m[id.Name] = append(m[id.Name], assignment{expr: &ast.UnaryExpr{Op: token.RANGE, X: s.X}})
			}
		}
		return true
	})
	for k := range bad {
		m[k] = nil
	}
	return m
}

// evaluator spells SQL expressions of the source on one engine.
type evaluator struct {
	src    *source
	eng    engine
	locals map[string][]assignment
	// bound are the values of a function's parameters at one call.
	bound map[string][]string
	// pkg is the prefix of the package's names (pkgOf).
	pkg string
}

// eval returns every text e can be (for a variable given several values or
// appended to, each value, and the whole of what is appended), or false
// when it is built at run time.
func (ev *evaluator) eval(e ast.Expr) ([]string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return nil, false
		}
		s, err := strconv.Unquote(x.Value)
		return []string{s}, err == nil
	case *ast.ParenExpr:
		return ev.eval(x.X)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return nil, false
		}
		l, ok := ev.eval(x.X)
		if !ok {
			return nil, false
		}
		r, ok := ev.eval(x.Y)
		if !ok {
			return nil, false
		}
		var out []string
		for _, a := range l {
			for _, b := range r {
				out = append(out, a+b)
			}
		}
		return out, true
	case *ast.UnaryExpr:
		// A range value: every element of the list ranged over.
		if x.Op != token.RANGE {
			return nil, false
		}
		lit, ok := ev.literal(x.X).(*ast.CompositeLit)
		if !ok {
			return nil, false
		}
		var out []string
		for _, el := range lit.Elts {
			v, ok := ev.eval(el)
			if !ok {
				return nil, false
			}
			out = append(out, v...)
		}
		return out, true
	case *ast.IndexExpr:
		// An element of a map or list of texts: each of them.
		lit, ok := ev.literal(x.X).(*ast.CompositeLit)
		if !ok {
			return nil, false
		}
		var out []string
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			v, ok := ev.eval(el)
			if !ok {
				return nil, false
			}
			out = append(out, v...)
		}
		return out, true
	case *ast.SelectorExpr:
		// A name of an engine's package.
		if pkg, ok := x.X.(*ast.Ident); ok && (pkg.Name == "sqlite" || pkg.Name == "postgres") {
			if v, ok := ev.src.consts[pkg.Name+"."+x.Sel.Name]; ok {
				inner := &evaluator{src: ev.src, eng: ev.eng, pkg: pkg.Name + "."}
				return inner.eval(v)
			}
		}
		return ev.field(x)
	case *ast.Ident:
		if vs, ok := ev.bound[x.Name]; ok {
			return vs, true
		}
		if as, ok := ev.locals[x.Name]; ok {
			return ev.local(as)
		}
		if v, ok := builtValues[x.Name]; ok {
			return []string{v}, true
		}
		if v, ok := ev.src.consts[ev.pkg+x.Name]; ok {
			inner := &evaluator{src: ev.src, eng: ev.eng, pkg: ev.pkg}
			return inner.eval(v)
		}
		return nil, false
	case *ast.CallExpr:
		if f, ok := x.Fun.(*ast.Ident); ok && len(x.Args) == 1 {
			// The store's own functions of a text.
			if fn, ok := textFuncs[f.Name]; ok {
				v, ok := ev.eval(x.Args[0])
				for i := range v {
					v[i] = fn(v[i])
				}
				return v, ok
			}
		}
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok {
			return nil, false
		}
		if f, ok := engineFragments[sel.Sel.Name]; ok && len(x.Args) == 0 {
			return []string{f(ev.eng)}, true
		}
		if sel.Sel.Name == "covariateEvents" && len(x.Args) == 1 {
			return []string{ev.eng.covariateEvents('u'), ev.eng.covariateEvents('s')}, true
		}
		return nil, false
	}
	return nil, false
}

// local spells a local variable from what it is given.
func (ev *evaluator) local(as []assignment) ([]string, bool) {
	if as == nil {
		return nil, false
	}
	var out []string
	tail := ""
	for _, a := range as {
		v, ok := ev.eval(a.expr)
		if !ok {
			return nil, false
		}
		if a.append {
			tail += v[0]
			continue
		}
		out = append(out, v...)
	}
	if tail != "" {
		for _, base := range slices.Clone(out) {
			out = append(out, base+tail)
		}
	}
	return out, len(out) > 0
}

// literal resolves a variable to the composite literal it holds.
func (ev *evaluator) literal(e ast.Expr) ast.Expr {
	id, ok := e.(*ast.Ident)
	if !ok {
		return e
	}
	if as := ev.locals[id.Name]; len(as) == 1 {
		return as[0].expr
	}
	if v, ok := ev.src.consts[ev.pkg+id.Name]; ok {
		return v
	}
	return e
}

// field spells a field of a range value over a list of struct literals.
func (ev *evaluator) field(x *ast.SelectorExpr) ([]string, bool) {
	id, ok := x.X.(*ast.Ident)
	if !ok || len(ev.locals[id.Name]) != 1 {
		return nil, false
	}
	r, ok := ev.locals[id.Name][0].expr.(*ast.UnaryExpr)
	if !ok || r.Op != token.RANGE {
		return nil, false
	}
	lit, ok := ev.literal(r.X).(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	st, ok := lit.Type.(*ast.ArrayType)
	if !ok {
		return nil, false
	}
	fields, ok := st.Elt.(*ast.StructType)
	if !ok {
		return nil, false
	}
	at, n := -1, 0
	for _, f := range fields.Fields.List {
		for _, name := range f.Names {
			if name.Name == x.Sel.Name {
				at = n
			}
			n++
		}
	}
	var out []string
	for _, el := range lit.Elts {
		row, ok := el.(*ast.CompositeLit)
		if !ok || at < 0 || at >= len(row.Elts) {
			return nil, false
		}
		v, ok := ev.eval(row.Elts[at])
		if !ok {
			return nil, false
		}
		out = append(out, v...)
	}
	return out, true
}

// viaCallers spells e, built from fd's parameters, at every call of fd in
// the store, with the arguments of each.
func (ev *evaluator) viaCallers(fd *ast.FuncDecl, e ast.Expr) ([]string, bool) {
	var names []string
	for _, p := range fd.Type.Params.List {
		for _, n := range p.Names {
			names = append(names, n.Name)
		}
	}
	var out []string
	calls := 0
	ok := true
	for _, name := range slices.Sorted(maps.Keys(ev.src.files)) {
		for _, d := range ev.src.files[name].Decls {
			caller, isFunc := d.(*ast.FuncDecl)
			if !isFunc || caller.Body == nil {
				continue
			}
			locals := localAssignments(caller.Body)
			ast.Inspect(caller.Body, func(n ast.Node) bool {
				call, isCall := n.(*ast.CallExpr)
				if !isCall || !ok || calledName(call.Fun) != fd.Name.Name || len(call.Args) < len(names) {
					return true
				}
				calls++
				at := &evaluator{src: ev.src, eng: ev.eng, locals: locals, pkg: ev.src.pkg[caller]}
				bound := map[string][]string{}
				for i, name := range names {
					if v, spelled := at.eval(call.Args[i]); spelled {
						bound[name] = v
					}
				}
				inner := &evaluator{src: ev.src, eng: ev.eng, locals: ev.locals, bound: bound, pkg: ev.pkg}
				v, spelled := inner.eval(e)
				if !spelled {
					ok = false
					return false
				}
				out = append(out, v...)
				return true
			})
		}
	}
	return out, ok && calls > 0
}

// calledName is the name of the function or method a call calls.
func calledName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.IndexExpr:
		return calledName(f.X)
	case *ast.IndexListExpr:
		return calledName(f.X)
	}
	return ""
}

// builtValues are the package's variables whose values the source does
// not spell as text.
var builtValues = map[string]string{
	"duePage":     duePage,
	"usersUpsert": usersUpsert,
}

// textFuncs are the store's functions of a text that statements are built
// with.
var textFuncs = map[string]func(string) string{"pageOrder": pageOrder}

// builtStatements are the statements built at run time, by name, in a
// representative form of each shape they are built in: what the source
// alone cannot spell.
var builtStatements = map[string]func(engine) []string{
	// Wrappers that run their caller's statement on pgx's connection.
	"postgresEngine.queryRowFirst#1": nil,
	// The group commit's multi-row statements, in every row count.
	"Tx.execRows#1": func(engine) []string {
		return slices.Concat(multiRowTexts(usersInsert), multiRowTexts(assignInsert), multiRowTexts(eventsInsert))
	},
	"Tx.queryRows#1": func(engine) []string {
		return slices.Concat(multiRowTexts(metricConversionsInsert), multiRowTexts(metricValuesAdd))
	},
	"Tx.insertAssignments#1": func(engine) []string { return multiRowTexts(assignReturning) },
	"rowStmts.prepare#1": func(engine) []string {
		var out []string
		for _, m := range multiRows {
			out = append(out, multiRowTexts(m)...)
		}
		return out
	},
	"DB.scanAudienceUsers#2": func(eng engine) []string {
		return []string{eng.audienceEvents(2, false), eng.audienceEvents(2, true)}
	},
	"userFacts#1": func(eng engine) []string {
		var out []string
		for _, where := range []string{` WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?)`, ` WHERE app_id = ? AND user_id = ? AND event_id IN (?, ?) AND ts >= ?`} {
			var c compiledAudience
			eng.compileUserEvents(&c, where)
			out = append(out, c.userEvents, c.userEventsRead)
		}
		return out
	},
	"DB.FindAuditLog#1": func(engine) []string {
		q := func(where ...string) string {
			return `SELECT id, at, app_id, instance, actor_type, actor_id, actor_name, actor_prefix,
			action, object_type, object_id, object_name, request_id, client_addr, changes
		FROM audit_log WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id DESC LIMIT ?`
		}
		all := []string{"1 = 1", `app_id = ?`, `instance = ?`, `object_type = ?`, `object_id = ?`}
		tail := []string{`action = ?`, `at >= ?`, `at <= ?`, `id < ?`}
		out := []string{q("1 = 1")}
		for _, actor := range []string{`actor_type = ?`, `actor_type = ? AND actor_id = ?`, `actor_type = ? AND lower(actor_name) = lower(?)`} {
			out = append(out, q(slices.Concat(all, []string{actor}, tail)...))
		}
		return out
	},
	"DB.UpdateCampaign#1": func(engine) []string {
		return []string{
			`UPDATE campaigns SET updated_at = ? WHERE id = ?`,
			`UPDATE campaigns SET updated_at = ?, name = ?, key = ?, description = ?, start_at = ?, end_at = ?, timezone = ?, goal_event_id = ?, audience_id = ?, assignment_type = ?, stats_engine = ?, namespace_id = ?, namespace_start = ?, namespace_end = ?, cuped_lookback_days = ?, guardrail_action = ? WHERE id = ?`,
		}
	},
	"DB.UpdateWebhook#1": func(engine) []string {
		return []string{
			`UPDATE webhooks SET updated_at = ? WHERE id = ?`,
			`UPDATE webhooks SET updated_at = ?, url = ?, events = ?, secret = ?, previous_secret = ?, previous_secret_expires_at = ?, headers = ?, max_retries = ?, timeout_seconds = ?, description = ?, status = ?, consecutive_failures = ? WHERE id = ?`,
		}
	},
	"DB.FindEvents#1": func(eng engine) []string {
		q := func(from string, where []string) string {
			return `SELECT id, event_id, user_id, session_id, metadata, log_id, ts FROM ` + from + ` WHERE ` +
				strings.Join(where, " AND ") + ` ORDER BY ts DESC, id DESC LIMIT ?`
		}
		userFrom, byUser, _ := eng.userEvents([]string{"app_id = ?"}, nil, 1, "u", "")
		eventFrom, byEvent, _ := eng.userEvents([]string{"app_id = ?", "event_id = ?"}, nil, 1, "u", "e")
		return []string{
			q("events", []string{"app_id = ?"}),
			q(userFrom, byUser),
			q(eventFrom, append(byEvent, "ts >= ?", "ts <= ?", "(ts, id) < (SELECT ts, id FROM events WHERE id = ?)")),
		}
	},
	"metricCampaigns#1": func(engine) []string {
		q := `SELECT c.id, c.name, c.status, cm.role FROM campaign_metrics cm JOIN campaigns c ON c.id = cm.campaign_id
		WHERE cm.metric_id = ?%s ORDER BY c.id`
		return []string{fmt.Sprintf(q, ``), fmt.Sprintf(q, ` AND c.status IN (?, ?)`)}
	},
	"DB.SignInLockout#1": func(engine) []string {
		return []string{`SELECT key, first_at, failures FROM dashboard_signin_failures
		WHERE first_at > ? AND key IN (?, ?)`}
	},
	"postgres.Analyze#1": func(engine) []string { return []string{`ANALYZE "events"`} },
	// The driver's own methods, which rewrite a text their caller gave.
	"postgres.rebindConn.Prepare#1":        nil,
	"postgres.rebindConn.PrepareContext#1": nil,
	"postgres.rebindConn.ExecContext#1":    nil,
	"postgres.rebindConn.QueryContext#1":   nil,
	"DB.ExportUser#6": func(eng engine) []string {
		var e eraser = sqliteEraser{}
		if _, ok := eng.(*postgresEngine); ok {
			e = pgEraser{}
		}
		user, _ := e.eventsOf(userRef{1, "u"})
		session, _ := e.eventsOf(sessionRef(1, "s"))
		return []string{user, session}
	},
	"sqlite.checkpointer.run#1": func(engine) []string {
		return []string{`PRAGMA wal_checkpoint(PASSIVE)`, `PRAGMA wal_checkpoint(RESTART)`}
	},
	"sqlite.ReadWatermark#3": func(engine) []string { return []string{`SELECT max(rowid) FROM "events"`} },
}

// multiRowTexts are the texts of m, one per row count.
func multiRowTexts(m multiRow) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(m.texts)) {
		out = append(out, m.texts[n])
	}
	return out
}

// TestStatementRegistry fails on a call site whose text is built at run
// time and not registered in builtStatements, and on a registry that
// testdata/statements.*.sql no longer spells (-update rewrites them).
func TestStatementRegistry(t *testing.T) {
	list, unbuilt := registry(t)
	for _, d := range unbuilt {
		t.Errorf("%s: its SQL is built at run time; register its built forms in builtStatements (statements_test.go)", d)
	}
	for name := range builtStatements {
		if !slices.ContainsFunc(list, func(s statement) bool { return s.name == name }) && builtStatements[name] != nil {
			t.Errorf("builtStatements names %s, which runs no statement: remove it or rename it after its function", name)
		}
	}
	for _, e := range testEngines {
		var b strings.Builder
		fmt.Fprintf(&b, "-- Every SQL text the store runs on %s, by the function that runs it\n", e.name)
		fmt.Fprintf(&b, "-- (store/statements_test.go; go test ./store -run TestStatementRegistry -update).\n")
		for _, st := range list {
			texts := st.text[e.name]
			for i, q := range texts {
				if e.name == "postgres" {
					if r, _, err := postgres.RebindText(q); err == nil {
						q = r
					}
				}
				form := ""
				if len(texts) > 1 {
					form = fmt.Sprintf(" [%d/%d]", i+1, len(texts))
				}
				file, _, _ := strings.Cut(st.pos, ":")
				fmt.Fprintf(&b, "\n-- %s%s (%s)\n%s;\n", st.name, form, file, strings.TrimSpace(q))
			}
		}
		path := filepath.Join("testdata", "statements."+e.name+".sql")
		if *update {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != b.String() {
			t.Errorf("%s is not the registry's: the store's statements changed; rewrite it with go test ./store -run TestStatementRegistry -update, and read the diff", path)
		}
	}
}

// TestStatementsPrepare prepares every statement of the registry, in each
// form it is built in, on a real database of each engine with the
// migrations applied: a text that an engine cannot parse, or whose tables,
// columns or parameter types it cannot resolve, fails here, naming the
// statement and the engine, rather than when some request reaches it. The
// PostgreSQL half runs in the PostgreSQL run (SERVICE_TEST_STORE=postgres,
// make test-postgres), the SQLite half in both.
func TestStatementsPrepare(t *testing.T) {
	list, _ := registry(t)
	targets := map[string]string{"sqlite": pgtest.MigratedSQLite(t, tempSQLitePath(t), migrateNew)}
	if pgtest.Selected() {
		path := pgtest.NewDatabase(t)
		if err := migrateNew(path); err != nil {
			t.Fatal(err)
		}
		targets["postgres"] = path
	}
	for _, e := range testEngines {
		target, ok := targets[e.name]
		if !ok {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			sdb, err := OpenSQL(target)
			if err != nil {
				t.Fatal(err)
			}
			defer sdb.Close()
			sdb.SetMaxOpenConns(1)
			n := 0
			for _, st := range list {
				for i, q := range st.text[e.name] {
					ps, err := sdb.Prepare(q)
					if err != nil {
						t.Errorf("%s, form %d (%s), on %s: %v\n%s", st.name, i+1, st.pos, e.name, err, q)
						continue
					}
					ps.Close()
					n++
				}
			}
			if n < 200 {
				t.Fatalf("prepared %d statements on %s, want the store's few hundred", n, e.name)
			}
		})
	}
}
