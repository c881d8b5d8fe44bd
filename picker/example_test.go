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
// client: it answers a Get of one key itself, and cannot do anything else,
// which it says with errors.ErrUnsupported.
type memPeer struct{ addr string }

func (p memPeer) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if req.Op != cache.OpGet || len(req.Keys) != 1 {
		return fmt.Errorf("peer %s: %w", p.addr, errors.ErrUnsupported)
	}
	v := req.Group + "/" + req.Keys[0] + " from " + p.addr
	reply.Answer(0, cache.ByteViewOf([]byte(v)), -1, nil) // -1: no TTL from the owner
	return nil
}

func (p memPeer) Addr() string { return p.addr }

// printReply prints the value a peer answers.
type printReply struct{}

func (printReply) Answer(_ int, v cache.ByteView, _ time.Duration, _ error) { fmt.Println(v) }
func (printReply) Loading()                                                 {}

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
		_ = peer.Do(context.Background(), cache.PeerRequest{Op: cache.OpGet, Group: "scores", Keys: []string{key}}, printReply{})
	}
	// Output:
	// scores/Tom from http://localhost:8002
	// Alice is owned by this node: http://localhost:8001
}
