package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"service/netpolicy"
	"service/store"
)

// UserAgent identifies deliveries to receivers.
const UserAgent = "Service-Webhooks/1.0"

// maxResponseBody caps how much of a receiver's answer is read: only the
// status matters, and a huge or endless body must not hold a worker.
const maxResponseBody = 64 << 10

// NewClient returns the HTTP client deliveries use, under the default
// network policy; see NewPolicyClient.
func NewClient() *http.Client { return NewPolicyClient(netpolicy.Policy{}) }

// NewPolicyClient returns the HTTP client deliveries use: every phase has a
// timeout on the transport (the per-webhook timeout comes from the request
// context), and redirects are not followed, so a 3xx is a failed attempt
// and a receiver cannot bounce the signed payload to another host.
//
// Every connection it dials is checked against p after name resolution
// (p.Control), so no URL, DNS answer or redirect reaches a refused
// address. It ignores HTTP_PROXY and friends: through a proxy, the dialled
// address would be the proxy's and the policy would never see the
// receiver's.
func NewPolicyClient(p netpolicy.Policy) *http.Client { return newClient(p, nil) }

// newClient is NewPolicyClient with the resolver names go through (nil:
// the system's), which tests replace.
func newClient(p netpolicy.Policy, r *net.Resolver) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
				Resolver: r, Control: p.Control}).DialContext,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  time.Duration(store.MaxWebhookTimeout) * time.Second,
			ExpectContinueTimeout:  time.Second,
			MaxIdleConns:           100,
			MaxIdleConnsPerHost:    8,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
			ForceAttemptHTTP2:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// send posts the signed envelope once. No database work happens here.
func (d *Dispatcher) send(ctx context.Context, c *store.ClaimedDelivery) store.AttemptResult {
	start := time.Now()
	res := store.AttemptResult{At: start}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	body := Envelope(c.Event, c.CreatedAt, c.Payload)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		res.Err = "invalid request: " + describe(err)
		return res
	}
	// Custom headers first: the service's own are set after them and so
	// always win (validation already refuses overriding names).
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set("X-Service-Event", c.Event)
	id := strconv.FormatInt(c.ID, 10)
	h.Set("X-Service-Delivery-ID", id)
	// The Standard Webhooks headers are set directly, not through Set, to
	// keep the standard's lowercase names on the wire. webhook-id is the
	// delivery id, so it stays the same across retries and redelivery and
	// receivers can use it to drop duplicates; it and the timestamp are
	// sent with or without a secret.
	ts := start.Unix()
	h[HeaderWebhookID] = []string{id}
	h[HeaderWebhookTimestamp] = []string{strconv.FormatInt(ts, 10)}
	if c.Secret != "" {
		// The spec's signature uses the current secret only; the standard
		// one carries the previous secret's too while a rotation's grace
		// period lasts. Both are computed here, from the claim, so the
		// secrets are read in one place.
		h.Set("X-Service-Signature", Sign(c.Secret, c.Payload))
		h[HeaderWebhookSignature] = []string{StandardSignatures(id, ts, body, c.Secret, c.PreviousSecret)}
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		res.Duration = time.Since(start)
		if errors.Is(err, netpolicy.ErrBlocked) {
			// The app sees only that it was blocked; which address the
			// host resolved is for the operator.
			res.Err, res.Blocked = netpolicy.ErrBlocked.Error(), true
			d.Log.Warn("webhook delivery blocked by network policy", "webhook", c.WebhookID,
				"delivery", c.ID, "reason", describe(err))
			return res
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.Err = fmt.Sprintf("timeout after %s", c.Timeout)
		} else {
			res.Err = describe(err)
		}
		return res
	}
	// Drained (up to the cap) so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	resp.Body.Close()
	res.Duration = time.Since(start)
	res.Status = resp.StatusCode
	return res
}

// describe keeps the cause of a transport error without the URL around it,
// which may carry credentials in its user info or query.
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}
