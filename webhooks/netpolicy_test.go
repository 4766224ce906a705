package webhooks_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"service/netpolicy"
	"service/webhooks"
)

// fakeDNS is a resolver answering A and AAAA queries from a table (and
// NXDOMAIN otherwise) over an in-memory connection, so a test can make a
// host name resolve to any address, the way an attacker's DNS server
// would.
func fakeDNS(table map[string]netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			for {
				// Not a PacketConn, so the resolver frames messages as over
				// TCP: a two-byte length first.
				var n uint16
				if binary.Read(server, binary.BigEndian, &n) != nil {
					return
				}
				q := make([]byte, n)
				if _, err := io.ReadFull(server, q); err != nil {
					return
				}
				a := dnsAnswer(q, table)
				if binary.Write(server, binary.BigEndian, uint16(len(a))) != nil {
					return
				}
				if _, err := server.Write(a); err != nil {
					return
				}
			}
		}()
		return client, nil
	}}
}

// dnsAnswer answers one query message.
func dnsAnswer(q []byte, table map[string]netip.Addr) []byte {
	// The question: labels from byte 12, then type and class.
	i, labels := 12, []string{}
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	qend := i + 5
	qtype := binary.BigEndian.Uint16(q[i+1:])
	name := strings.ToLower(strings.Join(labels, "."))
	addr, found := table[name]
	var rdata []byte
	switch {
	case found && qtype == 1 && addr.Is4():
		b := addr.As4()
		rdata = b[:]
	case found && qtype == 28 && addr.Is6():
		b := addr.As16()
		rdata = b[:]
	}
	out := append([]byte{}, q[:2]...)
	flags := uint16(0x8180)
	if !found {
		flags |= 3 // NXDOMAIN
	}
	out = binary.BigEndian.AppendUint16(out, flags)
	ancount := uint16(0)
	if rdata != nil {
		ancount = 1
	}
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint16(out, ancount)
	out = append(out, 0, 0, 0, 0)
	out = append(out, q[12:qend]...)
	if rdata != nil {
		out = append(out, 0xc0, 12)
		out = binary.BigEndian.AppendUint16(out, qtype)
		out = binary.BigEndian.AppendUint16(out, 1)
		out = binary.BigEndian.AppendUint32(out, 60)
		out = binary.BigEndian.AppendUint16(out, uint16(len(rdata)))
		out = append(out, rdata...)
	}
	return out
}

// TestDialPolicyThroughResolvedNames: a webhook whose host NAME resolves
// to a refused address passes the create check (names are not judged
// then) and is refused when dialled: its delivery is failed after one
// attempt recorded as "blocked by network policy", it is not retried, and
// the webhook's failure counters do not move. Loopback and private
// addresses are refused only with BlockPrivate; a name resolving to the
// local receiver is delivered without it, which shows the resolver is the
// one in use.
func TestDialPolicyThroughResolvedNames(t *testing.T) {
	rcv := e2eListen(t, nil)
	ru, _ := url.Parse(rcv.URL)
	port := ru.Port()
	table := map[string]netip.Addr{}
	always := []string{"169.254.169.254", "169.254.10.1", "fe80::1", "::ffff:169.254.169.254", "fd00:ec2::254",
		"0.0.0.0", "::", "224.0.0.251", "ff02::fb", "255.255.255.255"}
	private := []string{"127.0.0.1", "::1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "fd00::1", "100.64.0.1"}
	nameOf := func(a string) string {
		n := strings.NewReplacer(".", "-", ":", "x").Replace(a) + ".rebind.test"
		table[n] = netip.MustParseAddr(a)
		return n
	}
	for _, block := range []bool{false, true} {
		t.Run(fmt.Sprintf("BlockPrivate=%v", block), func(t *testing.T) {
			before := len(rcv.Hits())
			e := e2eNew(t)
			pol := netpolicy.Policy{BlockPrivate: block}
			e.DB.WebhookPolicy = pol
			e.start(10*time.Millisecond, func(d *webhooks.Dispatcher) { d.Client = webhooks.NewResolverClient(pol, fakeDNS(table)) })
			refused := map[int64]string{}
			for _, a := range always {
				refused[e.hook(map[string]any{"url": "http://" + nameOf(a) + ":" + port + "/hook", "maxRetries": 3})] = a
			}
			var allowed []int64
			for _, a := range private {
				id := e.hook(map[string]any{"url": "http://" + nameOf(a) + ":" + port + "/hook", "maxRetries": 3, "timeoutSeconds": 2})
				if block {
					refused[id] = a
				} else if a == "127.0.0.1" {
					allowed = append(allowed, id)
				}
			}
			e.publish("promo")
			for id, a := range refused {
				e2eEventually(t, 10*time.Second, "the delivery to "+a+" to settle", func() bool {
					list := e.deliveries(id)
					return len(list) == 1 && list[0]["status"] != "pending"
				})
				d := e.deliveries(id)[0]
				attempts, _ := d["attempts"].([]any)
				if d["status"] != "failed" || len(attempts) != 1 {
					t.Fatalf("%s: delivery=%v, want failed after one attempt", a, d)
				}
				at := attempts[0].(map[string]any)
				if at["error"] != "blocked by network policy" || at["responseStatus"] != nil {
					t.Fatalf("%s: attempt=%v, want error \"blocked by network policy\"", a, at)
				}
				w := e.webhook(id)
				if w["consecutiveFailures"] != float64(0) || w["totalFailures"] != float64(0) || w["status"] != "ACTIVE" {
					t.Fatalf("%s: webhook=%v, want no failure counted", a, w)
				}
			}
			for _, id := range allowed {
				e2eEventually(t, 10*time.Second, "the allowed delivery", func() bool {
					list := e.deliveries(id)
					return len(list) == 1 && list[0]["status"] == "succeeded"
				})
			}
			// Only the allowed webhooks reached the receiver (127.0.0.1 is
			// the receiver itself: blocked, it must not be hit).
			if got, want := len(rcv.Hits())-before, len(allowed); got != want {
				t.Fatalf("receiver got %d requests, want %d", got, want)
			}
		})
	}
	if got := len(rcv.Hits()); got != 1 {
		t.Fatalf("receiver got %d requests in all, want 1 (127.0.0.1 allowed by default only)", got)
	}
}

// TestPolicyClientIgnoresProxyEnvironment: through a proxy the dialled
// address would be the proxy's, so the policy would never see the
// receiver's; the client must not use one.
func TestPolicyClientIgnoresProxyEnvironment(t *testing.T) {
	tr, ok := webhooks.NewClient().Transport.(*http.Transport)
	if !ok || tr.Proxy != nil {
		t.Fatalf("transport=%T, proxy set=%v: deliveries must not go through HTTP_PROXY", webhooks.NewClient().Transport, ok && tr.Proxy != nil)
	}
	if tr.DialContext == nil {
		t.Fatal("no DialContext: the policy's dialer is not in use")
	}
	// A direct request to a refused literal fails with the policy's error,
	// before any connection.
	_, err := webhooks.NewClient().Get("http://169.254.169.254/latest/meta-data")
	if err == nil || !strings.Contains(err.Error(), "blocked by network policy") {
		t.Fatalf("err=%v, want blocked by network policy", err)
	}
}
