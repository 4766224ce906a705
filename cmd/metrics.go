package cmd

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"service/metrics"
)

// withMetrics answers GET /metrics beside the API (serve --metrics). The
// path is outside /v1, so it can never shadow an API route.
func withMetrics(api http.Handler, mx *metrics.Metrics) http.Handler {
	prom := mx.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			prom.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// serveMetrics serves GET /metrics alone on its own listener (serve
// --metrics-addr), so scrapes never share the API's address or its
// exposure. stop closes it.
func serveMetrics(addr string, mx *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", mx.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	log.Info("metrics", "addr", ln.Addr().String())
	return func() { hs.Close() }, nil
}
