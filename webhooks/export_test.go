package webhooks

import (
	"net"
	"net/http"

	"service/netpolicy"
)

// NewResolverClient is NewPolicyClient resolving names through r, so tests
// can make a name resolve to any address.
func NewResolverClient(p netpolicy.Policy, r *net.Resolver) *http.Client { return newClient(p, r) }
