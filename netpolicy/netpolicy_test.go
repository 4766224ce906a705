package netpolicy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	for _, tc := range []struct {
		addr string
		// want is the reason under the zero Policy and under BlockPrivate;
		// "" means allowed.
		always, private string
	}{
		{"169.254.169.254", "link-local", "link-local"},
		{"169.254.0.1", "link-local", "link-local"},
		{"fe80::1", "link-local", "link-local"},
		{"fe80::a9fe:a9fe%eth0", "link-local", "link-local"},
		{"febf:ffff::1", "link-local", "link-local"},
		{"fd00:ec2::254", "a cloud metadata address", "a cloud metadata address"},
		{"100.100.100.200", "a cloud metadata address", "a cloud metadata address"},
		{"192.0.0.192", "a cloud metadata address", "a cloud metadata address"},
		{"fd00:ec2::253", "", "private"},
		{"::ffff:169.254.169.254", "link-local", "link-local"},
		{"64:ff9b::a9fe:a9fe", "link-local (embedded in 64:ff9b::a9fe:a9fe)", "link-local (embedded in 64:ff9b::a9fe:a9fe)"},
		{"::a9fe:a9fe", "link-local (embedded in ::a9fe:a9fe)", "link-local (embedded in ::a9fe:a9fe)"},
		{"0.0.0.0", "unspecified", "unspecified"},
		{"0.1.2.3", "unspecified", "unspecified"},
		{"::", "unspecified", "unspecified"},
		{"::ffff:0.0.0.0", "unspecified", "unspecified"},
		{"224.0.0.1", "multicast", "multicast"},
		{"239.255.255.250", "multicast", "multicast"},
		{"ff02::1", "multicast", "multicast"},
		{"ff0e::1", "multicast", "multicast"},
		{"255.255.255.255", "broadcast", "broadcast"},
		{"127.0.0.1", "", "loopback"},
		{"127.255.0.9", "", "loopback"},
		{"::1", "", "loopback"},
		{"::ffff:127.0.0.1", "", "loopback"},
		{"10.0.0.1", "", "private"},
		{"10.255.255.255", "", "private"},
		{"172.16.0.1", "", "private"},
		{"172.31.255.254", "", "private"},
		{"192.168.1.1", "", "private"},
		{"::ffff:192.168.1.1", "", "private"},
		{"fc00::1", "", "private"},
		{"fdff::1", "", "private"},
		{"100.64.0.1", "", "shared address space (carrier-grade NAT)"},
		{"100.127.255.255", "", "shared address space (carrier-grade NAT)"},
		{"64:ff9b::7f00:1", "", "loopback (embedded in 64:ff9b::7f00:1)"},
		{"2002:a9fe:a9fe::1", "link-local (embedded in 2002:a9fe:a9fe::1)", "link-local (embedded in 2002:a9fe:a9fe::1)"},
		{"2002:7f00:1::", "", "loopback (embedded in 2002:7f00:1::)"},
		{"2002:c0a8:101:1::1", "", "private (embedded in 2002:c0a8:101:1::1)"},
		// Teredo: server 65.54.227.120, client 169.254.169.254 inverted.
		{"2001:0:4136:e378:8000:63bf:5601:5601", "link-local (embedded in 2001:0:4136:e378:8000:63bf:5601:5601)", "link-local (embedded in 2001:0:4136:e378:8000:63bf:5601:5601)"},
		{"2001:0:4136:e378:8000:63bf:f5ff:fff5", "", "private (embedded in 2001:0:4136:e378:8000:63bf:f5ff:fff5)"},
		// Neighbours of the refused ranges stay allowed.
		{"172.15.255.255", "", ""},
		{"172.32.0.1", "", ""},
		{"100.63.255.255", "", ""},
		{"100.128.0.1", "", ""},
		{"169.253.255.255", "", ""},
		{"11.0.0.1", "", ""},
		{"1.1.1.1", "", ""},
		{"93.184.216.34", "", ""},
		{"2606:4700::1111", "", ""},
		{"fec0::1", "", ""},
		{"64:ff9b::5db8:d822", "", ""},
		{"2002:5db8:d822::1", "", ""},
		{"2001:0:4136:e378:8000:63bf:a247:27dd", "", ""},
		{"2001:db8::1", "", ""},
		{"2001:4860:4860::8888", "", ""},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			for _, p := range []struct {
				pol  Policy
				want string
			}{{Policy{}, tc.always}, {Policy{BlockPrivate: true}, tc.private}} {
				err := p.pol.Check(a)
				if p.want == "" {
					if err != nil {
						t.Fatalf("%+v: %v, want allowed", p.pol, err)
					}
					continue
				}
				var be *BlockedError
				if !errors.As(err, &be) || be.Reason != p.want || !errors.Is(err, ErrBlocked) {
					t.Fatalf("%+v: err=%v, want refused as %q", p.pol, err, p.want)
				}
			}
		})
	}
}

func TestPolicyCheckHost(t *testing.T) {
	p := Policy{BlockPrivate: true}
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"169.254.169.254", false},
		{"::ffff:169.254.169.254", false},
		{"127.0.0.1", false},
		{"example.com", true},
		// Names are judged when dialled, whatever they look like.
		{"localhost", true},
		{"metadata.google.internal", true},
		{"2130706433", true},
		{"93.184.216.34", true},
	} {
		if err := p.CheckHost(tc.host); (err == nil) != tc.ok {
			t.Errorf("CheckHost(%q)=%v, want ok=%v", tc.host, err, tc.ok)
		}
	}
}

func TestPolicyControl(t *testing.T) {
	for _, tc := range []struct {
		address string
		ok      bool
	}{
		{"93.184.216.34:443", true},
		{"127.0.0.1:80", true},
		{"[2606:4700::1111]:443", true},
		{"169.254.169.254:80", false},
		{"[::ffff:169.254.169.254]:80", false},
		{"[fe80::1%eth0]:80", false},
		{"0.0.0.0:8080", false},
		{"255.255.255.255:80", false},
		// Fail closed on anything that is not an address and a port.
		{"example.com:80", false},
		{"garbage", false},
	} {
		err := Policy{}.Control("tcp", tc.address, nil)
		if (err == nil) != tc.ok {
			t.Errorf("Control(%q)=%v, want ok=%v", tc.address, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("Control(%q)=%v, not ErrBlocked", tc.address, err)
		}
	}
	err := Policy{}.Control("tcp", "169.254.169.254:80", nil)
	if got := err.Error(); !strings.HasPrefix(got, "blocked by network policy") || !strings.Contains(got, "169.254.169.254") {
		t.Fatalf("operator message=%q", got)
	}
	if ErrBlocked.Error() != "blocked by network policy" {
		t.Fatalf("ErrBlocked=%q", ErrBlocked)
	}
}
