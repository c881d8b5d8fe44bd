// Package dns finds a cluster's peers in DNS and keeps a node's peer set
// in step with them: the A (or AAAA) records of a name, such as a
// Kubernetes headless Service, or its SRV records, which carry the ports
// too. It needs no permission and works wherever DNS does, in Kubernetes
// or out of it.
//
//	pool, _ := nethttp.NewPool("http://"+podIP+":8080", reg, nil)
//	go dns.Watch(ctx, pool, "cache-peers", &dns.Options{Port: 8080})
//
// [Watch] asks again every Options.Interval (5 s by default), so a
// change reaches the ring within the interval plus the debounce (0.5 s by
// default). It feeds the list to the peer set's Set, the same call as a
// list from a flag, so every binding's peer set fits (picker.Peers,
// nethttp.Pool, lambda.Peers). A changed answer applies once it has held
// for the debounce period, so a flickering record moves no keys; a failed
// or empty answer (timeout, SERVFAIL, NXDOMAIN, no records) never empties
// the ring: the last good list stays, and Watch says so in its log and in
// [Stats].
//
// A node that is not in the records (a Pod not ready yet, which a
// headless Service leaves out) still owns its share of its own ring, as
// with any list given to Set; the other nodes send it requests once its
// record appears.
//
// The lookups are the standard library's: Options.Resolver, by default
// net.DefaultResolver with the nameservers, search list and ndots of
// /etc/resolv.conf; a resolver with PreferGo and a Dial of its own asks
// another DNS server. Watch polls at a fixed interval rather than at the
// records' TTL, which net.Resolver does not report: set Interval to about
// the TTL the records are served with (CoreDNS's kubernetes plugin gives
// 5 s) to see a change about when a cache would.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/deploy-kubernetes.md
package dns
