package groupbridge_test

import (
	"context"
	"slices"
	"testing"

	"github.com/geecache/geecache/internal/groupbridge"
)

// node embeds a Bridge under an unexported name, as cache.Group does, and
// records the calls of its handover functions.
type node struct {
	bridge
	calls []string
}

type bridge = groupbridge.Bridge[*node]

func (n *node) handOver(ctx context.Context) {
	n.calls = append(n.calls, "handover:"+ctx.Value(ctxKey{}).(string))
}

func (n *node) takeOffer(ctx context.Context, keys []string) {
	n.calls = append(n.calls, "offer:"+ctx.Value(ctxKey{}).(string))
	n.calls = append(n.calls, keys...)
}

type ctxKey struct{}

// HandOver and TakeOffer call the functions of the value's Bridge with
// that value, the caller's context and keys; a Bridge without them does
// nothing.
func TestBridgeCallsTheGroupsFunctions(t *testing.T) {
	n := &node{bridge: groupbridge.New((*node).handOver, (*node).takeOffer)}
	ctx := context.WithValue(t.Context(), ctxKey{}, "c")
	groupbridge.HandOver(ctx, n)
	groupbridge.TakeOffer(ctx, n, []string{"a", "b"})
	if want := []string{"handover:c", "offer:c", "a", "b"}; !slices.Equal(n.calls, want) {
		t.Fatalf("calls = %q; want %q", n.calls, want)
	}
	empty := &node{}
	groupbridge.HandOver(ctx, empty)
	groupbridge.TakeOffer(ctx, empty, []string{"a"})
	if len(empty.calls) != 0 {
		t.Fatalf("a node without functions recorded %q", empty.calls)
	}
}
