package handlers

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// benchCampaign is an active two-variant campaign in a fresh environment.
func benchCampaign(b *testing.B) (*testEnv, int64, string) {
	b.Helper()
	e := newEnv(b)
	blocks := campaignBlocks(e, 2)
	id := campaignInState(e, blocks, "active", nil)
	return e, id, pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, id)
}

// benchServe sends one request through the full router (auth, rate limit,
// logging), the way the load test reaches it over TCP minus the network.
func benchServe(h http.Handler, path, auth, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// BenchmarkVariantReturning is the SDK's common case: a user who already
// has a variant, answered from memory.
func BenchmarkVariantReturning(b *testing.B) {
	e, _, path := benchCampaign(b)
	const users = 1000
	bodies := make([]string, users)
	for i := range bodies {
		bodies[i] = `{"userId":"bench-` + strconv.Itoa(i) + `"}`
		if rec := benchServe(e.Srv, path, "Bearer "+e.Cli, bodies[i]); rec.Code != http.StatusOK {
			b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.String())
		}
	}
	// The same users as the SDK sends them, with the session it keeps:
	// linked once here, then answered from memory as the others are.
	pairs := make([]string, users)
	for i := range pairs {
		pairs[i] = `{"userId":"bench-` + strconv.Itoa(i) + `","sessionId":"sess-` + strconv.Itoa(i) + `"}`
		if rec := benchServe(e.Srv, path, "Bearer "+e.Cli, pairs[i]); rec.Code != http.StatusOK {
			b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.String())
		}
	}
	auth := "Bearer " + e.Cli
	b.Run("SerialPair", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rec := benchServe(e.Srv, path, auth, pairs[i%users])
			if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"impressionRecorded":false}`) {
				b.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			i++
		}
	})
	b.Run("Serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rec := benchServe(e.Srv, path, auth, bodies[i%users])
			if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"impressionRecorded":false}`) {
				b.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			i++
		}
	})
	// By key: the key is looked up in memory, without a read.
	byKey := pathf("/v1/apps-external/%d/campaigns/spring-sale/variant", e.App.ID)
	b.Run("SerialByKey", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rec := benchServe(e.Srv, byKey, auth, bodies[i%users])
			if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"impressionRecorded":false}`) {
				b.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			i++
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				rec := benchServe(e.Srv, path, auth, bodies[next.Add(1)%users])
				if rec.Code != http.StatusOK {
					b.Errorf("%d %s", rec.Code, rec.Body.String())
					return
				}
			}
		})
	})
}

// BenchmarkVariantNew assigns a fresh user each iteration: a hash, a
// stored assignment and an impression, committed before the answer. In
// parallel the group commit shares one transaction among waiting requests.
func BenchmarkVariantNew(b *testing.B) {
	e, _, path := benchCampaign(b)
	auth := "Bearer " + e.Cli
	var seq atomic.Int64
	check := func(rec *httptest.ResponseRecorder) error {
		if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"impressionRecorded":true}`) {
			return fmt.Errorf("%d %s", rec.Code, rec.Body.String())
		}
		return nil
	}
	b.Run("Serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			body := `{"userId":"new-` + strconv.FormatInt(seq.Add(1), 10) + `"}`
			if err := check(benchServe(e.Srv, path, auth, body)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		// Many more requests in flight than cores, as behind a real server.
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				body := `{"userId":"new-` + strconv.FormatInt(seq.Add(1), 10) + `"}`
				if err := check(benchServe(e.Srv, path, auth, body)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkBareHandler is the floor for the ratio: a handler that reads
// the body and writes a variant-sized JSON answer, through the same
// request and recorder, without routing, auth or the store.
func BenchmarkBareHandler(b *testing.B) {
	answer := []byte(`{"campaignId":1,"variantId":2,"variantName":"Variant B","contentViewId":2,"contentView":{"id":2,"name":"block B","status":"published","items":[{"type":"text","content":"block B","styles":{}}]},"impressionRecorded":false}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header()["Content-Type"] = jsonContentType
		w.WriteHeader(http.StatusOK)
		w.Write(answer)
	})
	b.ReportAllocs()
	for b.Loop() {
		if rec := benchServe(h, "/v1/apps-external/1/campaigns/1/variant", "Bearer x", `{"userId":"bench-1"}`); rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkVariantReturningPro is BenchmarkVariantReturning for a pro
// app's client key, 100,000 requests a minute: on PostgreSQL its limit is
// leased 1,000 requests a claim, and claims/op is the round trips to the
// database a request costs (0 on SQLite, which counts in memory). The
// clock moves on a minute every 90,000 requests, so the window never
// fills.
func BenchmarkVariantReturningPro(b *testing.B) {
	e := newEnv(b)
	e.App, e.Admin, e.Read, e.Cli = e.newApp("pro", "pro", 0)
	blocks := campaignBlocks(e, 2)
	path := pathf("/v1/apps-external/%d/campaigns/%d/variant", e.App.ID, campaignInState(e, blocks, "active", nil))
	const users = 1000
	bodies := make([]string, users)
	for i := range bodies {
		bodies[i] = `{"userId":"bench-` + strconv.Itoa(i) + `"}`
		if rec := benchServe(e.Srv, path, "Bearer "+e.Cli, bodies[i]); rec.Code != http.StatusOK {
			b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.String())
		}
	}
	var served atomic.Int64
	t0 := time.Now().Truncate(time.Minute).Add(time.Hour)
	e.Srv.Now = func() time.Time { return t0.Add(time.Duration(served.Add(1)/90_000) * time.Minute) }
	claims := func() int64 {
		if l := e.Srv.limiter.shared; l != nil {
			return l.claims.Load()
		}
		return 0
	}
	auth := "Bearer " + e.Cli
	b.Run("Parallel", func(b *testing.B) {
		b.ReportAllocs()
		before := claims()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				rec := benchServe(e.Srv, path, auth, bodies[next.Add(1)%users])
				if rec.Code != http.StatusOK {
					b.Errorf("%d %s", rec.Code, rec.Body.String())
					return
				}
			}
		})
		b.ReportMetric(float64(claims()-before)/float64(b.N), "claims/op")
	})
}

// BenchmarkOFREPReturning is OpenFeature's single flag evaluation for a
// returning user, beside the variant route's: the same evaluation, with
// the key looked up in memory and OFREP's context decoded. Compare with
// BenchmarkVariantReturning/Serial.
func BenchmarkOFREPReturning(b *testing.B) {
	e, _, path := benchCampaign(b)
	const users = 1000
	bodies := make([]string, users)
	for i := range bodies {
		bodies[i] = `{"context":{"targetingKey":"bench-` + strconv.Itoa(i) + `"}}`
		if rec := benchServe(e.Srv, path, "Bearer "+e.Cli, `{"userId":"bench-`+strconv.Itoa(i)+`"}`); rec.Code != http.StatusOK {
			b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.String())
		}
	}
	auth := "Bearer " + e.Cli
	b.Run("Serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rec := benchServe(e.Srv, "/ofrep/v1/evaluate/flags/spring-sale", auth, bodies[i%users])
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"reason":"SPLIT"`) {
				b.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			i++
		}
	})
}
