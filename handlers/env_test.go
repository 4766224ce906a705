package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"service/internal/storetest"
	"service/store"
)

// testEnv is a server on a real SQLite file with one app and a key of each
// role. Tests in this package share it; add helpers here, not per file.
type testEnv struct {
	t     testing.TB
	DB    *store.DB
	Srv   *Server
	App   *store.App
	Admin string // admin key plaintext
	Read  string
	Cli   string // client key
	// instance is the instance key's plaintext, made on first use by
	// instanceKey.
	instance string
	// target is where the database is: a SQLite file or a postgres URL.
	target string
}

// instanceKey returns an instance key, made on first use so that tests
// that never provision keep the database they had.
func (e *testEnv) instanceKey() string {
	e.t.Helper()
	if e.instance == "" {
		_, plain, err := e.DB.CreateInstanceKey(context.Background(), "tests")
		if err != nil {
			e.t.Fatal(err)
		}
		e.instance = plain
	}
	return e.instance
}

// newEnv opens a fresh database in t.TempDir() and builds the real router.
// The app is on the enterprise plan with a high limit so tests that are not
// about rate limits never meet one.
// newServer is the server as serve wires it: JSON log lines, request lines
// written straight to the log's writer.
func newServer(db *store.DB) *Server {
	s := New(db, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	s.AccessLog = io.Discard
	return s
}

func newEnv(t testing.TB) *testEnv {
	t.Helper()
	target := storetest.DB(t, filepath.Join(t.TempDir(), "test.db"))
	db, err := store.Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &testEnv{t: t, DB: db, Srv: newServer(db), target: target}
	t.Cleanup(e.Srv.Close) // before the database closes
	e.App, e.Admin, e.Read, e.Cli = e.newApp("test", "enterprise", 1_000_000)
	return e
}

// newApp creates another app with a key of each role.
func (e *testEnv) newApp(name, plan string, limit int) (app *store.App, admin, read, client string) {
	e.t.Helper()
	ctx := context.Background()
	app, err := e.DB.CreateApp(ctx, name, plan, limit)
	if err != nil {
		e.t.Fatal(err)
	}
	keys := make([]string, 3)
	for i, role := range []string{store.RoleAdmin, store.RoleRead, store.RoleClient} {
		_, keys[i], err = e.DB.CreateKey(ctx, app.ID, role, role)
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return app, keys[0], keys[1], keys[2]
}

// do sends a request through the real router. body may be nil, a string
// (sent verbatim) or any value (sent as JSON).
func (e *testEnv) do(method, path, key string, body any) *httptest.ResponseRecorder {
	e.t.Helper()
	return e.doCtx(context.Background(), method, path, key, body)
}

// doCtx is do on a request whose connection's context is ctx: a stream
// ends when it ends.
func (e *testEnv) doCtx(ctx context.Context, method, path, key string, body any) *httptest.ResponseRecorder {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req := httptest.NewRequestWithContext(ctx, method, path, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.Srv.ServeHTTP(rec, req)
	exchanges.record(req, body, rec)
	return rec
}

// must sends a request and fails the test unless the status is want; it
// returns the decoded JSON object.
func (e *testEnv) must(want int, method, path, key string, body any) map[string]any {
	e.t.Helper()
	rec := e.do(method, path, key, body)
	if rec.Code != want {
		e.t.Fatalf("%s %s: status=%d, want %d; body=%s", method, path, rec.Code, want, rec.Body.String())
	}
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		e.t.Fatalf("%s %s: body is not a JSON object: %s", method, path, rec.Body.String())
	}
	return m
}

// errCode returns error.code of an error envelope, failing the test when
// the body is not one.
func errCode(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error *struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == nil || body.Error.Details == nil || body.Error.Message == "" {
		t.Fatalf("not an error envelope (status %d): %s", rec.Code, rec.Body.String())
	}
	return body.Error.Code
}

// fieldsOf returns error.details.fields of an error envelope.
func fieldsOf(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body struct {
		Error struct {
			Details struct {
				Fields map[string]any `json:"fields"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("bad error body: %s", rec.Body.String())
	}
	return body.Error.Details.Fields
}

// num reads a JSON number field as int64.
func num(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

// mustContent creates a content block and returns its id.
func (e *testEnv) mustContent(name, status string) int64 {
	e.t.Helper()
	m := e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/content", e.App.ID), e.Admin,
		map[string]any{"name": name, "status": status, "items": []any{map[string]any{"type": "text", "content": name, "styles": map[string]any{}}}})
	return num(m, "id")
}
