package handlers

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"service/internal/pgtest"
	"service/internal/storetest"
	"service/store"
)

// When the database cannot answer (PostgreSQL frozen or down, SQLite's
// write lock held elsewhere), a route that needs it answers 503
// SERVICE_UNAVAILABLE with Retry-After within the database timeout and a
// second, never 500, and serves again once the database is back, without
// a restart.
func TestDatabaseUnavailableAnswers503(t *testing.T) {
	const timeout = 300 * time.Millisecond
	bound := timeout + time.Second
	target := storetest.DB(t, filepath.Join(t.TempDir(), "test.db"))
	var proxy *pgProxy
	if pgtest.Selected() {
		proxy = newPGProxy(t, target)
		target = proxy.url
	}
	db, err := store.OpenWith(context.Background(), target, store.Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &testEnv{t: t, DB: db, Srv: newServer(db)}
	t.Cleanup(e.Srv.Close)
	e.App, e.Admin, e.Read, e.Cli = e.newApp("test", "enterprise", 1_000_000)

	// A returning user, whom the assignment memory knows.
	a, b := e.mustContent("A", "published"), e.mustContent("B", "published")
	camp := num(e.must(http.StatusCreated, "POST", pathf("/v1/apps/%d/campaigns", e.App.ID), e.Admin, map[string]any{
		"name": "Outage", "status": "active", "endDate": time.Now().Add(48 * time.Hour).Format(time.RFC3339),
		"variants": []any{map[string]any{"contentViewId": a, "isControl": true}, map[string]any{"contentViewId": b}},
	}), "id")
	variantPath := pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, camp)
	returning := num(e.must(http.StatusOK, "POST", variantPath, e.Cli, map[string]any{"userId": "returning"}), "variantId")
	contentPath := pathf("/v1/apps-external/%d/content/%d", e.App.ID, a)

	writes := []struct{ name, method, path, key, body string }{
		{"admin write", "POST", pathf("/v1/apps/%d/audiences", e.App.ID), e.Admin, `{"name":"A","definition":{"rules":[{"field":"plan","operator":"exists"}]}}`},
		{"event (group commit)", "POST", pathf("/v1/apps/%d/events", e.App.ID), e.Cli, `{"eventId":"view","userId":"u1"}`},
	}
	outage := func(name string, start func() (end func())) {
		t.Run(name, func(t *testing.T) {
			// Served since the last change, as a page asks for it.
			block := e.do("GET", contentPath, e.Cli, nil).Body.String()
			end := start()
			// Past the key cache's time, so that the key is due to be read
			// again: the memory answers while that read waits.
			time.Sleep(1100 * time.Millisecond)
			t0 := time.Now()
			rec := e.do("POST", variantPath, e.Cli, `{"userId":"returning"}`)
			if rec.Code != http.StatusOK || variantOf(rec) != returning || time.Since(t0) > timeout {
				end()
				t.Fatalf("returning user during the outage: status=%d after %s body=%s, want 200 with variant %d from memory",
					rec.Code, time.Since(t0), rec.Body.String(), returning)
			}
			// A content block served before is served from memory too.
			if rec := e.do("GET", contentPath, e.Cli, nil); rec.Code != http.StatusOK || rec.Body.String() != block {
				end()
				t.Fatalf("content block during the outage: status=%d body=%s, want 200 %s", rec.Code, rec.Body.String(), block)
			}
			for _, w := range writes {
				t0 := time.Now()
				rec := e.do(w.method, w.path, w.key, w.body)
				took := time.Since(t0)
				if rec.Code != http.StatusServiceUnavailable || errCode(t, rec) != "SERVICE_UNAVAILABLE" || rec.Header().Get("Retry-After") != "1" {
					end()
					t.Fatalf("%s during the outage: status=%d Retry-After=%q body=%s, want 503 SERVICE_UNAVAILABLE with Retry-After",
						w.name, rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
				}
				if took > bound {
					end()
					t.Fatalf("%s answered after %s, want within %s", w.name, took, bound)
				}
			}
			if proxy != nil {
				t0 := time.Now()
				rec := e.do("GET", "/healthz", "", nil)
				if rec.Code != http.StatusServiceUnavailable || errCode(t, rec) != "SERVICE_UNAVAILABLE" || time.Since(t0) > 1500*time.Millisecond {
					end()
					t.Fatalf("/healthz during the outage: status=%d after %s, want 503 within 1.5 s", rec.Code, time.Since(t0))
				}
			}
			end()
			// Back: every write goes through again, on the same process.
			for _, w := range writes {
				deadline := time.Now().Add(5 * time.Second)
				for {
					rec := e.do(w.method, w.path, w.key, strings.Replace(w.body, `"A"`, `"A`+name+`"`, 1))
					if rec.Code < 300 {
						break
					}
					if time.Now().After(deadline) || rec.Code != http.StatusServiceUnavailable {
						t.Fatalf("%s after the outage: status=%d body=%s", w.name, rec.Code, rec.Body.String())
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			if rec := e.do("GET", "/healthz", "", nil); rec.Code != http.StatusOK {
				t.Fatalf("/healthz after the outage: status=%d", rec.Code)
			}
		})
	}
	if proxy == nil {
		outage("write lock held", func() func() {
			raw, err := store.OpenSQL(target)
			if err != nil {
				t.Fatal(err)
			}
			c, err := raw.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
				t.Fatal(err)
			}
			return func() {
				c.ExecContext(context.Background(), `ROLLBACK`)
				c.Close()
				raw.Close()
			}
		})
		return
	}
	outage("frozen", func() func() { proxy.freeze(); return proxy.thaw })
	outage("down", func() func() { proxy.down(); return proxy.thaw })
}

// pgProxy stands between the service and PostgreSQL, so that a test can
// make the server hang (as a stopped process or a partition looks) or go
// away, and come back.
type pgProxy struct {
	url      string
	upstream string
	ln       net.Listener

	mu     sync.Mutex
	frozen bool
	gone   bool
	cond   *sync.Cond
	conns  map[net.Conn]bool
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{upstream: u.Host, ln: ln, conns: map[net.Conn]bool{}}
	p.cond = sync.NewCond(&p.mu)
	u.Host = ln.Addr().String()
	p.url = u.String()
	go p.serve()
	t.Cleanup(func() {
		p.thaw()
		ln.Close()
		p.closeAll()
	})
	return p
}

func (p *pgProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.gone {
			p.mu.Unlock()
			c.Close() // refused, as a stopped server's port is
			continue
		}
		p.conns[c] = true
		p.mu.Unlock()
		go p.pipe(c)
	}
}

func (p *pgProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[up] = true
	p.mu.Unlock()
	go p.copy(up, c)
	p.copy(c, up)
}

// copy forwards src to dst, holding every chunk while the proxy is frozen.
func (p *pgProxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.frozen {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			return
		}
	}
}

func (p *pgProxy) freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// down closes every connection and refuses new ones.
func (p *pgProxy) down() {
	p.mu.Lock()
	p.gone = true
	p.mu.Unlock()
	p.closeAll()
}

func (p *pgProxy) thaw() {
	p.mu.Lock()
	p.frozen, p.gone = false, false
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *pgProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func variantOf(rec interface{ Result() *http.Response }) int64 {
	var m struct {
		VariantID int64 `json:"variantId"`
	}
	json.NewDecoder(rec.Result().Body).Decode(&m)
	return m.VariantID
}
