package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"service/webhooks"
)

// TestReceiver: deliveries signed as the service signs them are accepted;
// with a secret set, any other signature is answered 401 (so the service
// retries), and without one every delivery is accepted.
func TestReceiver(t *testing.T) {
	data := []byte(`{"contentViewId":3,"data":{"email":"ann@example.com"}}`)
	body := webhooks.Envelope("form.submitted", time.Date(2026, 11, 22, 0, 44, 45, 0, time.UTC), data)
	for _, tc := range []struct {
		name, secret, signature string
		want                    int
	}{
		{"Signed", "s3cret", webhooks.Sign("s3cret", data), http.StatusNoContent},
		{"OtherSecret", "s3cret", webhooks.Sign("other", data), http.StatusUnauthorized},
		{"Unsigned", "s3cret", "", http.StatusUnauthorized},
		{"NoSecretSet", "", "", http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/hooks", bytes.NewReader(body))
			req.Header.Set("webhook-id", "1")
			req.Header.Set("X-Service-Event", "form.submitted")
			if tc.signature != "" {
				req.Header.Set("X-Service-Signature", tc.signature)
			}
			rec := httptest.NewRecorder()
			receiver(tc.secret).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d", rec.Code, tc.want)
			}
		})
	}
}
