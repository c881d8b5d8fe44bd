module github.com/geecache/geecache/discovery/dns/e2e

go 1.26.0

require (
	github.com/geecache/geecache v0.0.0-00010101000000-000000000000
	github.com/miekg/dns v1.1.73
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/geecache/geecache => ../../..
