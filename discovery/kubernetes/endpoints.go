package kubernetes

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// defaultAddress is the peer URL of an endpoint for the HTTP binding.
func defaultAddress(ip string, port int32) string {
	return "http://" + net.JoinHostPort(ip, strconv.Itoa(int(port)))
}

// selfFamily returns the address type of self's host when it is an IP
// (self being a URL such as "http://10.0.0.1:8080" or a bare host:port),
// or "" when it cannot tell.
func selfFamily(self string) discoveryv1.AddressType {
	host := self
	if u, err := url.Parse(self); err == nil && u.Host != "" {
		host = u.Hostname()
	} else if h, _, err := net.SplitHostPort(self); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return ""
	case a.Is4() || a.Is4In6():
		return discoveryv1.AddressTypeIPv4
	default:
		return discoveryv1.AddressTypeIPv6
	}
}

// endpointSet is what one computation over a Service's slices found.
type endpointSet struct {
	addrs    []string // peer addresses, sorted and unique
	problems []string // slices skipped, and why (for the log)
}

// ready reports whether an endpoint belongs on the ring: ready (nil
// means unknown, which the API says to take as ready) and not
// terminating. A terminating endpoint that still serves is draining: it
// must get no new requests.
func ready(c discoveryv1.EndpointConditions) bool {
	if c.Ready != nil && !*c.Ready {
		return false
	}
	return c.Terminating == nil || !*c.Terminating
}

// slicePort returns the TCP port named name in s (the only port when name
// is "").
func slicePort(s *discoveryv1.EndpointSlice, name string) (int32, error) {
	var found []discoveryv1.EndpointPort
	for _, p := range s.Ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if name == "" || (p.Name != nil && *p.Name == name) {
			found = append(found, p)
		}
	}
	switch {
	case len(found) == 0 && name == "":
		return 0, fmt.Errorf("no TCP port")
	case len(found) == 0:
		return 0, fmt.Errorf("no TCP port named %q", name)
	case len(found) > 1:
		return 0, fmt.Errorf("%d TCP ports and no Options.Port to choose one", len(found))
	case found[0].Port == nil:
		return 0, fmt.Errorf("port %q has no number (a Service without ports)", name)
	}
	return *found[0].Port, nil
}

// compute merges the slices of one Service into the peer addresses of the
// given family ("" for IPv4 when any slice is IPv4, else IPv6).
func compute(all []*discoveryv1.EndpointSlice, family discoveryv1.AddressType, port string,
	address func(ip string, port int32) string) endpointSet {
	if family == "" {
		family = discoveryv1.AddressTypeIPv6
		for _, s := range all {
			if s.AddressType == discoveryv1.AddressTypeIPv4 {
				family = discoveryv1.AddressTypeIPv4
				break
			}
		}
	}
	var out endpointSet
	for _, s := range all {
		if s.AddressType != family {
			continue // the other family of a dual-stack Service, or FQDN
		}
		n, err := slicePort(s, port)
		if err != nil {
			if len(s.Endpoints) > 0 {
				out.problems = append(out.problems, s.Name+": "+err.Error())
			}
			continue
		}
		for _, e := range s.Endpoints {
			if !ready(e.Conditions) || len(e.Addresses) == 0 {
				continue
			}
			// Every address of an endpoint is the same backend (the
			// slice controller writes exactly one): the first names it.
			a, err := netip.ParseAddr(e.Addresses[0])
			if err != nil || (family == discoveryv1.AddressTypeIPv4) != (a.Is4() || a.Is4In6()) {
				out.problems = append(out.problems, fmt.Sprintf("%s: address %q is not %s", s.Name, e.Addresses[0], family))
				continue
			}
			out.addrs = append(out.addrs, address(a.Unmap().String(), n))
		}
	}
	slices.Sort(out.addrs)
	out.addrs = slices.Compact(out.addrs)
	return out
}
