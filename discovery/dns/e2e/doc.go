// Package e2e tests package discovery/dns against a real DNS server on
// 127.0.0.1, built on github.com/miekg/dns, which speaks the wire protocol
// over UDP and TCP: A, AAAA and SRV records, their changes, every kind of
// failure, truncation and TCP, and servers that lie. It is a module of its
// own so that the DNS library never enters the main module's go.mod; its
// tests run in scripts/test.sh.
package e2e
