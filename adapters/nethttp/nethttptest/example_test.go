//go:build !js

package nethttptest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A test of three nodes: a key is fetched from its owner; while the owner
// is down, its keys are fetched from the next node on the ring (or loaded
// by the asking node, if it is that node); a missing key is "not found"
// either way.
func Example() {
	t := &exampleT{} // in a test, pass its t (a *testing.T or *testing.B)
	defer t.cleanup()

	// The default source answers "v:"+key. No hedge: this test counts who
	// loads a key, and a hedge on a busy machine would load it here too.
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	a := nodes[0]
	var owner *nethttptest.Node
	var keys []string // two keys another node owns (ports, so owners, differ each run)
	for i := 0; len(keys) < 2; i++ {
		k := fmt.Sprint("user-", i)
		if o := a.Owner(k); o != a && (owner == nil || o == owner) {
			owner, keys = o, append(keys, k)
		}
	}
	ctx := context.Background()

	v, err := a.Group.Get(ctx, keys[0])
	fmt.Println(v.String() == "v:"+keys[0], err, a.Group.Stats().PeerLoads)

	owner.SetFault(nethttptest.Fault{Down: true})
	v, err = a.Group.Get(ctx, keys[1])
	s := a.Group.Stats()
	fmt.Println(v.String() == "v:"+keys[1], err, s.NextPeer+s.FallbackLoads)

	_, err = a.Group.Get(ctx, "missing-"+keys[1])
	fmt.Println(errors.Is(err, getter.ErrNotFound))
	// Output:
	// true <nil> 1
	// true <nil> 1
	// true
}

// exampleT is the part of a *testing.T an Example has to supply itself.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (t *exampleT) Helper()                        {}
func (t *exampleT) Cleanup(f func())               { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatal(args ...any)              { panic(fmt.Sprint(args...)) }
func (t *exampleT) Errorf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
