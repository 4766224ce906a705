// Command webhook-receiver prints the webhook deliveries it receives, to
// try the service's webhooks without a host on the internet:
//
//	go run ./examples/webhook-receiver                  # http://localhost:9000/
//	WEBHOOK_SECRET=s3cret go run ./examples/webhook-receiver -addr localhost:9000
//
// With WEBHOOK_SECRET set it checks X-Service-Signature and answers 401 to
// a delivery signed otherwise (the service then retries it); else 204.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
)

func main() {
	addr := flag.String("addr", "localhost:9000", "address to listen on")
	flag.Parse()
	log.Printf("receiving webhooks at http://%s/", *addr)
	log.Fatal(http.ListenAndServe(*addr, receiver(os.Getenv("WEBHOOK_SECRET"))))
}

func receiver(secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, event := r.Header.Get("webhook-id"), r.Header.Get("X-Service-Event")
		if secret != "" && !verifyServiceSignature(body, r.Header.Get("X-Service-Signature"), secret) {
			log.Printf("delivery %s (%s): signature does not match, answered 401", id, event)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		log.Printf("delivery %s (%s) to %s: %s", id, event, r.URL.Path, body)
		w.WriteHeader(http.StatusNoContent)
	})
}

// verifyServiceSignature is the check docs/api.md shows: HMAC-SHA256 of the
// envelope's data bytes, as sent, under the secret.
func verifyServiceSignature(body []byte, header, secret string) bool {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || json.Unmarshal(body, &env) != nil {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(env.Data)
	return hmac.Equal(got, mac.Sum(nil))
}
