package picker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// A Peers with no getters and no self of its own is a plain
// consistent-hash ring: Owner names the node that owns a key.
func ExamplePeers_Owner() {
	nodes := []string{"http://localhost:8001", "http://localhost:8002", "http://localhost:8003"}
	ring, err := picker.NewPeers("", nil, nil)
	if err != nil {
		panic(err)
	}
	if err := ring.Set(nodes...); err != nil {
		panic(err)
	}
	// The order of the node list does not matter.
	same, _ := picker.NewPeers("", nil, nil)
	_ = same.Set(nodes[2], nodes[0], nodes[1])
	for _, key := range []string{"Tom", "Jack", "Alice"} {
		owner := ring.Owner(key)
		fmt.Println(key, "->", owner, owner == same.Owner(key))
	}
	// Output:
	// Tom -> http://localhost:8002 true
	// Jack -> http://localhost:8001 true
	// Alice -> http://localhost:8001 true
}

// memPeer is an in-memory Peer, standing in for a transport's
// client. It cannot change keys, and says so.
type memPeer struct{ addr string }

func (p memPeer) Get(_ context.Context, group, key string) ([]byte, time.Duration, error) {
	return []byte(group + "/" + key + " from " + p.addr), -1, nil // -1: no TTL from the owner
}

func (p memPeer) Remove(context.Context, string, string) error {
	return fmt.Errorf("peer %s: %w", p.addr, errors.ErrUnsupported)
}

func (p memPeer) Set(context.Context, string, string, []byte, time.Duration) error {
	return fmt.Errorf("peer %s: %w", p.addr, errors.ErrUnsupported)
}

func (p memPeer) Addr() string { return p.addr }

func (p memPeer) Batch(context.Context, string, []string, bool, func(int, []byte, time.Duration, error)) error {
	return fmt.Errorf("peer %s: %w", p.addr, errors.ErrUnsupported)
}

func ExamplePeers() {
	self := "http://localhost:8001"
	peers, err := picker.NewPeers(self, func(addr string) cache.Peer { return memPeer{addr} }, nil)
	if err != nil {
		panic(err)
	}
	if err := peers.Set("http://localhost:8001", "http://localhost:8002", "http://localhost:8003"); err != nil {
		panic(err)
	}

	for _, key := range []string{"Tom", "Alice"} {
		peer, ok := peers.PickPeer(key)
		if !ok {
			fmt.Println(key, "is owned by this node:", peers.Owner(key))
			continue
		}
		v, _, _ := peer.Get(context.Background(), "scores", key)
		fmt.Println(string(v))
	}
	// Output:
	// scores/Tom from http://localhost:8002
	// Alice is owned by this node: http://localhost:8001
}
