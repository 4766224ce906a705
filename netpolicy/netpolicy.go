// Package netpolicy decides which addresses outbound webhook deliveries may
// connect to, so that a webhook cannot be turned against the host's own
// network (server-side request forgery). It holds no I/O: the dispatcher
// applies Control to every connection it dials, after name resolution, and
// the store applies CheckHost to URLs that hold a literal IP.
package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"
)

// ErrBlocked is the error of a refused address; errors.Is finds it inside
// the errors an HTTP client returns. Its text is what the delivery log
// records: it names no address, so a refused delivery tells an app nothing
// about the host's network.
var ErrBlocked = errors.New("blocked by network policy")

// BlockedError is a refused address and the range it falls in. Its text is
// for the operator's log, not for API clients.
type BlockedError struct {
	Addr   netip.Addr
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s: %s is %s", ErrBlocked, e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Policy is the set of refused destinations. The zero Policy refuses only
// the addresses no webhook ever has a reason to reach.
type Policy struct {
	// BlockPrivate also refuses loopback, private (RFC 1918, fc00::/7) and
	// carrier-grade NAT (100.64.0.0/10) addresses: the host itself and its
	// internal network.
	BlockPrivate bool
}

var (
	broadcast = netip.MustParseAddr("255.255.255.255")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	sharedNAT = netip.MustParsePrefix("100.64.0.0/10")
	// NAT64 prefixes carry an IPv4 address in their last 32 bits, and a
	// NAT64 gateway connects to it: they are judged by that address.
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	// Deprecated IPv4-compatible IPv6 (::a.b.c.d), judged the same way.
	v4compat = netip.MustParsePrefix("::/96")
	// 6to4 (2002:AABB:CCDD::/48) reaches the IPv4 host A.B.C.D through a
	// relay; Teredo (2001:0::/32) reaches the client whose IPv4 address is
	// the last 32 bits inverted. Both are judged by that IPv4 address too.
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
	// metadata are the cloud instance-metadata services outside
	// link-local: AWS's IPv6 endpoint, Alibaba Cloud's, Oracle Cloud's.
	// They hand out credentials, so they are refused even when private
	// addresses are allowed.
	metadata = []netip.Addr{netip.MustParseAddr("fd00:ec2::254"),
		netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("192.0.0.192")}
)

// Check returns nil when a connection to a is allowed, else a
// *BlockedError. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are judged as
// the IPv4 address they stand for.
func (p Policy) Check(a netip.Addr) error {
	if r := p.refuse(a); r != "" {
		return &BlockedError{Addr: a, Reason: r}
	}
	return nil
}

func (p Policy) refuse(a netip.Addr) string {
	if !a.IsValid() {
		return "not an IP address"
	}
	a = a.WithZone("").Unmap()
	if v4, ok := embeddedIPv4(a); ok {
		if r := p.refuse(v4); r != "" {
			return r + " (embedded in " + a.String() + ")"
		}
	}
	switch {
	case a.IsUnspecified() || thisNet.Contains(a):
		return "unspecified"
	case a.IsLinkLocalUnicast():
		// 169.254.0.0/16 and fe80::/10: cloud metadata services live here.
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	case a == broadcast:
		return "broadcast"
	case slices.Contains(metadata, a):
		return "a cloud metadata address"
	}
	if !p.BlockPrivate {
		return ""
	}
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case sharedNAT.Contains(a):
		return "shared address space (carrier-grade NAT)"
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address an IPv6 address a leads to, for the
// forms that carry one: NAT64, IPv4-compatible, 6to4 and Teredo.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a) || nat64Local.Contains(a) ||
		(v4compat.Contains(a) && !a.IsUnspecified() && !a.IsLoopback()):
		return netip.AddrFrom4([4]byte(b[12:])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case teredo.Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}

// CheckHost checks a URL's host name when it is a literal IP address; a
// name is allowed here, since what it resolves to can change, and is
// judged when the connection is dialled.
func (p Policy) CheckHost(host string) error {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return nil
	}
	return p.Check(a)
}

// Control is a net.Dialer Control function. It runs after name resolution,
// on the very address about to be connected to, so a name that resolves
// differently at delivery time than when the webhook was saved (DNS
// rebinding) is judged by where it really leads. An address it cannot
// parse is refused.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Reason: "not an IP address: " + address}
	}
	return p.Check(ap.Addr())
}
