// Package dns finds a cluster's peers in DNS and keeps a node's peer set
// in step with them: the A (or AAAA) records of a name, such as a
// Kubernetes headless Service, or its SRV records, which carry the ports
// too. It needs no permission and works wherever DNS does, in Kubernetes
// or out of it.
//
//	pool, _ := nethttp.NewPool("http://"+podIP+":8080", reg, nil)
//	go dns.Watch(ctx, pool, "cache-peers", &dns.Options{Port: 8080})
//
// [Watch] polls at the records' TTL, within bounds, so a change reaches
// the ring about when a cache would see it: within the TTL plus the
// debounce (0.5 s by default). It feeds the list to the peer set's Set,
// the same call as a list from a flag, so every binding's peer set fits
// (picker.Peers, nethttp.Pool, lambda.Peers). A changed answer applies
// once it has held for the debounce period, so a flickering record moves
// no keys; a failed or empty answer (timeout, SERVFAIL, NXDOMAIN, no
// records) never empties the ring: the last good list stays, and Watch
// says so in its log and in [Stats].
//
// A node that is not in the records (a Pod not ready yet, which a
// headless Service leaves out) still owns its share of its own ring, as
// with any list given to Set; the other nodes send it requests once its
// record appears.
//
// Why a DNS client of its own: the standard library's net.Resolver does
// not report TTLs, and polling at a fixed interval either lags behind a
// short TTL or asks far more often than a long one needs. The package
// therefore sends its own queries (standard library only): UDP with EDNS0,
// TCP when the answer is truncated, to the nameservers of
// /etc/resolv.conf with its search list and ndots, or to
// Options.Nameserver. An answer is read within the 64 KiB a DNS message
// can hold, and a malformed one is a failed lookup, never a panic.
package dns
