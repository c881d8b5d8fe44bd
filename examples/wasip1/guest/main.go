//go:build wasip1

// Command guest is a GeeCache node built as a WASI preview 1 reactor
// module (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared). WASI
// preview 1 has no sockets, so the node reaches its peers through its
// host: it imports geecache.fetch (go:wasmimport), which the host
// implements over its own network, and wraps it in a cache.Peer.
// The host asks the node for keys through the exported get
// (go:wasmexport).
//
// The host sets two environment variables: GEECACHE_SELF, this node's
// name on the ring, and GEECACHE_PEERS, the comma-separated names of all
// nodes (peers are named by whatever the host's fetch understands; the
// example's host uses base URLs).
//
// The ABI, all integers little-endian wasm i32/i64:
//
//	buffer(size u32) → ptr u32    the exchange buffer, at least size bytes
//	get(keyLen u32) → i64         key in the buffer; the result is
//	                              code<<32 | length, the value (code 0) or
//	                              an error message (code 1 not found,
//	                              2 other error) in the buffer (ask
//	                              buffer(0) for its address: it may move)
//	import geecache.fetch(peer, peerLen, group, groupLen, key, keyLen,
//	                      out, outCap u32) → i32
//	                              ≥ 0: value length (copied if ≤ outCap,
//	                              else called again with a bigger out);
//	                              -1 not found; -2 any other error
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// A reactor's exported functions have no receiver: the node and the
// exchange buffer are the module instance's state, one per instance.
var (
	group    *cache.Group
	exchange = make([]byte, 4<<10)
	initErr  error
)

func init() {
	self := os.Getenv("GEECACHE_SELF")
	peers, err := picker.NewPeers(self, func(addr string) cache.Peer { return hostPeer(addr) }, nil)
	if err != nil {
		initErr = err
		return
	}
	if initErr = peers.Set(strings.Split(os.Getenv("GEECACHE_PEERS"), ",")...); initErr != nil {
		return
	}
	reg := cache.NewRegistry()
	scores := getter.Map(map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"})
	group, initErr = reg.NewGroup("scores", 1<<20, scores, &cache.GroupOptions{Peers: peers})
}

func main() {} // a reactor: the host calls the exports, main never runs

//go:wasmimport geecache fetch
func hostFetch(peer unsafe.Pointer, peerLen uint32, group unsafe.Pointer, groupLen uint32,
	key unsafe.Pointer, keyLen uint32, out unsafe.Pointer, outCap uint32) int32

// hostPeer is a cache.Peer for the peer of that name, through the
// host's fetch. The host's import carries a Get of one key and nothing
// else: neither the owner's TTL (the answer says "no TTL", -1, and this
// group's own applies), nor memory-only reads, batches or writes. Those
// fail with errors.ErrUnsupported, which a Group takes as "not held" for
// a memory-only read, as "ask key by key" for a batch, and names in its
// UpdateError (without retrying) for a write.
type hostPeer string

var errPeer = errors.New("geecache/wasip1: the host's fetch failed")

func (p hostPeer) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if req.Op != cache.OpGet || len(req.Keys) != 1 {
		return fmt.Errorf("peer %s: the host's import has no %v of %d keys: %w", string(p), req.Op, len(req.Keys), errors.ErrUnsupported)
	}
	group, key := req.Group, req.Keys[0]
	out := make([]byte, 256)
	for {
		n := hostFetch(ptr(string(p)), uint32(len(p)), ptr(group), uint32(len(group)),
			ptr(key), uint32(len(key)), unsafe.Pointer(unsafe.SliceData(out)), uint32(len(out)))
		switch {
		case n == -1:
			reply.Answer(0, cache.ByteView{}, -1, fmt.Errorf("peer %s: %q: %w", string(p), key, getter.ErrNotFound))
			return nil
		case n < 0:
			return fmt.Errorf("peer %s: %q: %w", string(p), key, errPeer)
		case int(n) <= len(out):
			reply.Answer(0, cache.ByteViewOf(out[:n]), -1, nil)
			return nil
		}
		out = make([]byte, n) // too small: once more, with room for it
	}
}

func (p hostPeer) Addr() string { return string(p) }

// ptr is the address of s's bytes (never written through).
func ptr(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

// buffer is exported to the host (staticcheck does not see go:wasmexport).
//
//lint:ignore U1000 called by the host
//go:wasmexport buffer
func buffer(size uint32) uint32 {
	if int(size) > len(exchange) {
		exchange = make([]byte, size)
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(exchange))))
}

// get is exported to the host.
//
//lint:ignore U1000 called by the host
//go:wasmexport get
func get(keyLen uint32) uint64 {
	if initErr != nil {
		return result(2, initErr.Error())
	}
	key := string(exchange[:keyLen])
	v, err := group.Get(context.Background(), key)
	switch {
	case errors.Is(err, getter.ErrNotFound):
		return result(1, err.Error())
	case err != nil:
		return result(2, err.Error())
	}
	return result(0, v.String())
}

// result puts s in the exchange buffer and packs code and length.
func result(code uint64, s string) uint64 {
	buffer(uint32(len(s)))
	copy(exchange, s)
	return code<<32 | uint64(len(s))
}
