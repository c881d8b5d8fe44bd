package cache

import "context"

// A PeerPicker locates the peer that owns a key. Transports implement it
// (see package picker for a consistent-hash implementation that works with
// any of them).
type PeerPicker interface {
	// PickPeer returns the peer that owns key. ok is false when this node
	// owns the key (or there are no peers), and the group loads the key
	// itself.
	PickPeer(key string) (peer PeerGetter, ok bool)
}

// A PeerGetter fetches a value from the group of the same name on another
// node. Implementations must return an error wrapping getter.ErrNotFound
// when the peer reports that the key does not exist, and must not keep or
// change the returned slice afterwards.
type PeerGetter interface {
	Get(ctx context.Context, group, key string) ([]byte, error)
}
