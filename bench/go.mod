module github.com/geecache/geecache/bench

go 1.26.0

replace github.com/geecache/geecache => ../

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/geecache/geecache v0.0.0
	github.com/golang/groupcache v0.0.0-20241129210726-2c02b8208cf8
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/maypok86/otter/v2 v2.4.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/golang/protobuf v1.5.4 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
