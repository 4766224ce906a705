package handlers

import (
	"net/http"
	"strconv"
	"testing"

	"service/metrics"
)

// BenchmarkVariantReturningMetrics is BenchmarkVariantReturning/Serial with
// and without Prometheus metrics, to measure what they cost on the
// hottest route.
func BenchmarkVariantReturningMetrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "Off"
		if on {
			name = "On"
		}
		b.Run(name, func(b *testing.B) {
			e, _, path := benchCampaign(b)
			if on {
				m := metrics.New(e.DB)
				e.DB.Observe = m.Store()
				e.Srv.Observe = m
			}
			const users = 1000
			bodies := make([]string, users)
			auth := "Bearer " + e.Cli
			for i := range bodies {
				bodies[i] = `{"userId":"bench-` + strconv.Itoa(i) + `"}`
				if rec := benchServe(e.Srv, path, auth, bodies[i]); rec.Code != http.StatusOK {
					b.Fatalf("warm-up: %d %s", rec.Code, rec.Body.String())
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if rec := benchServe(e.Srv, path, auth, bodies[i%users]); rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body.String())
				}
				i++
			}
		})
	}
}
