// Command bare is the floor the load test compares the service against: a
// plain net/http server that decodes a variant request and answers a
// variant-sized JSON body, with no routing, auth, rate limit, logging or
// database.
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"time"
)

// answer is the size and shape of a returning user's variant answer.
var answer = []byte(`{"campaignId":1,"variantId":2,"variantName":"Variant B","contentViewId":2,"contentView":{"id":2,"name":"block B","status":"published","items":[{"type":"text","content":"block B","styles":{}}]},"impressionRecorded":false}`)

func main() {
	addr := flag.String("addr", "127.0.0.1:18182", "address to listen on")
	flag.Parse()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			UserID    string         `json:"userId"`
			SessionID string         `json:"sessionId"`
			Attrs     map[string]any `json:"attributes"`
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil || json.Unmarshal(body, &req) != nil || (req.UserID == "" && req.SessionID == "") {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		w.Header()["Content-Type"] = []string{"application/json"}
		w.Write(answer)
	})
	// The same server timeouts as the service, so only the handler differs.
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
