package handlers

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// benchExposures is the size of BenchmarkExposures' batch: the JS SDK's
// local evaluation sends its exposures in batches of this order.
const benchExposures = 50

// perItem reports ns/item and allocs/item for b.N operations of items
// each, from the memory statistics taken before them.
func perItem(b *testing.B, before *runtime.MemStats, items int) {
	b.StopTimer()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	n := float64(b.N * items)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/item")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/item")
}

// BenchmarkExposures compares two ways to record 50 new users' first
// assignments and impressions on one campaign: one exposures call of 50
// (Batch), and 50 variant requests in flight together (Variants), as 50
// SDK clients in remote evaluation send them. A batch must cost less per
// item; ns/item and allocs/item compare them. Batches is Batch with 16
// calls in flight, as under load, where their exposures share commits.
func BenchmarkExposures(b *testing.B) {
	e, id, variantPath := benchCampaign(b)
	variants := campaignVariantIDs(e, id)
	half := []float64{50, 50}
	auth := "Bearer " + e.Cli
	exposuresPath := pathf("/v1/apps-external/%d/exposures", e.App.ID)
	var seq atomic.Int64
	// The bodies are made before the clock and the allocation count start.
	batches := func(n int) []string {
		bodies := make([]string, n)
		for i := range bodies {
			var sb strings.Builder
			sb.WriteString(`{"exposures":[`)
			for j := range benchExposures {
				if j > 0 {
					sb.WriteByte(',')
				}
				user := "x-" + strconv.FormatInt(seq.Add(1), 10)
				sb.WriteString(`{"campaignId":` + strconv.FormatInt(id, 10) + `,"variantId":` +
					strconv.FormatInt(exposurePick(id, variants, half, user), 10) + `,"userId":"` + user + `"}`)
			}
			sb.WriteString(`]}`)
			bodies[i] = sb.String()
		}
		return bodies
	}
	// Every exposure recorded: one "recorded":true per item.
	recorded := func(rec *httptest.ResponseRecorder) bool {
		return rec.Code == http.StatusOK && strings.Count(rec.Body.String(), `"recorded":true}`) == benchExposures
	}
	b.Run("Batch", func(b *testing.B) {
		bodies := batches(b.N)
		b.ReportAllocs()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		for i := range b.N {
			if rec := benchServe(e.Srv, exposuresPath, auth, bodies[i]); !recorded(rec) {
				b.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
		}
		perItem(b, &before, benchExposures)
	})
	b.Run("Batches", func(b *testing.B) {
		bodies := batches(b.N)
		var next atomic.Int64
		b.SetParallelism(8) // 16 calls in flight on 2 CPUs
		b.ReportAllocs()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if rec := benchServe(e.Srv, exposuresPath, auth, bodies[next.Add(1)-1]); !recorded(rec) {
					b.Errorf("%d %s", rec.Code, rec.Body.String())
					return
				}
			}
		})
		perItem(b, &before, benchExposures)
	})
	b.Run("Variants", func(b *testing.B) {
		bodies := make([]string, b.N*benchExposures)
		for i := range bodies {
			bodies[i] = `{"userId":"v-` + strconv.FormatInt(seq.Add(1), 10) + `"}`
		}
		recs := make([]*httptest.ResponseRecorder, benchExposures)
		b.ReportAllocs()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		for i := range b.N {
			var wg sync.WaitGroup
			for j := range recs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					recs[j] = benchServe(e.Srv, variantPath, auth, bodies[i*benchExposures+j])
				}()
			}
			wg.Wait()
			for _, rec := range recs {
				if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"impressionRecorded":true}`) {
					b.Fatalf("%d %s", rec.Code, rec.Body.String())
				}
			}
		}
		perItem(b, &before, benchExposures)
	})
}

// BenchmarkVariantLinkedPair is BenchmarkVariantReturning/Serial for a
// signed-in visitor: each request carries a userId and the sessionId
// linked to it, of a pair whose session was assigned first and whose user
// took that assignment when they were linked (a visitor who signs in;
// BenchmarkVariantReturning/SerialPair links sessions to users assigned
// already). The answer is the pair's variant, with nothing written.
func BenchmarkVariantLinkedPair(b *testing.B) {
	e, id, path := benchCampaign(b)
	auth := "Bearer " + e.Cli
	const pairs = 1000
	bodies := make([]string, pairs)
	for i := range bodies {
		n := strconv.Itoa(i)
		if rec := benchServe(e.Srv, path, auth, `{"sessionId":"s-`+n+`"}`); rec.Code != http.StatusOK {
			b.Fatalf("session: %d %s", rec.Code, rec.Body.String())
		}
		bodies[i] = `{"userId":"u-` + n + `","sessionId":"s-` + n + `"}`
		// The link: the user takes the session's variant, without an
		// impression of its own.
		if rec := benchServe(e.Srv, path, auth, bodies[i]); rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"impressionRecorded":false}`) {
			b.Fatalf("link: %d %s", rec.Code, rec.Body.String())
		}
	}
	if rec := benchServe(e.Srv, pathf("/v1/apps-external/%d/identify", e.App.ID), auth, `{"userId":"other","sessionId":"s-0"}`); rec.Code != http.StatusConflict {
		b.Fatalf("s-0 is not linked: identify as another user answered %d %s", rec.Code, rec.Body.String())
	}
	if got := num(e.must(http.StatusOK, "GET", pathf("/v1/campaigns/%d/analytics", id), e.Admin, nil), "totalImpressions"); got != pairs {
		b.Fatalf("impressions=%v, want one per pair (%d)", got, pairs)
	}
	b.Run("Serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rec := benchServe(e.Srv, path, auth, bodies[i%pairs])
			if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), `"impressionRecorded":false}`) {
				b.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			i++
		}
	})
}
