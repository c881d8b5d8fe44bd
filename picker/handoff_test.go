package picker

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
)

func newAddrPeers(t *testing.T, self string, o *Options, addrs ...string) *Peers {
	t.Helper()
	p, err := NewPeers(self, func(a string) cache.Peer { return &addrGetter{addr: a} }, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Set(addrs...); err != nil {
		t.Fatal(err)
	}
	return p
}

func addrOf(g cache.Peer) string {
	if g == nil {
		return ""
	}
	return g.Addr()
}

// next is the owner of a key on the ring without its owner (and without
// the skipped nodes), or nil when that is self.
func TestPickFallbackNextIsTheOwnerWithoutTheSkipped(t *testing.T) {
	all := []string{"a", "b", "c", "d", "e"}
	p := newAddrPeers(t, "a", &Options{Replicas: 64}, all...)
	for i := range 500 {
		k := fmt.Sprint("k", i)
		owner := p.Owner(k)
		skip := map[string]bool{"c": owner != "c"} // c down, unless it owns k
		var rest []string
		for _, n := range all {
			if n != owner && !skip[n] {
				rest = append(rest, n)
			}
		}
		want := newAddrPeers(t, "", &Options{Replicas: 64}, rest...).Owner(k)
		if want == "a" {
			want = "" // self: load locally
		}
		next, _, _ := p.PickFallback(k, func(g cache.Peer) bool { return skip[g.Addr()] })
		if addrOf(next) != want {
			t.Fatalf("%s (owner %s): next %q; want %q", k, owner, addrOf(next), want)
		}
	}
	// Every other node skipped and self not on the ring: no next node.
	c := newAddrPeers(t, "", &Options{Replicas: 8}, "x", "y")
	if next, _, _ := c.PickFallback("k", func(cache.Peer) bool { return true }); next != nil {
		t.Errorf("all skipped: next %q; want none", next.Addr())
	}
}

// previous is the owner before the last change of the node set, within
// HandoffWindow, when it is another node than self and the owner now;
// after a node's first Set it is the owner on the ring without self.
func TestPickFallbackPrevious(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &Options{Replicas: 64, HandoffWindow: 10 * time.Second, Handoff: true}
		d := newAddrPeers(t, "d", o, "a", "b", "c", "d") // d joins a, b, c
		abc := newAddrPeers(t, "", o, "a", "b", "c")
		moved := 0
		for i := range 300 {
			k := fmt.Sprint("k", i)
			_, prev, _ := d.PickFallback(k, nil)
			want := ""
			if d.Owner(k) != abc.Owner(k) {
				want = abc.Owner(k)
				moved++
			}
			if addrOf(prev) != want {
				t.Fatalf("%s: previous %q; want %q", k, addrOf(prev), want)
			}
		}
		if moved == 0 {
			t.Fatal("no key moved to d")
		}
		// b leaves: b's keys name b as their previous owner.
		if err := d.Set("a", "c", "d"); err != nil {
			t.Fatal(err)
		}
		if err := d.Set("d", "c", "a"); err != nil { // the same set: the change keeps its time
			t.Fatal(err)
		}
		time.Sleep(9 * time.Second)
		seen := 0
		for i := range 300 {
			k := fmt.Sprint("k", i)
			_, prev, _ := d.PickFallback(k, nil)
			if prev != nil {
				seen++
				if prev.Addr() != "b" {
					t.Fatalf("%s: previous %q; want b or none", k, prev.Addr())
				}
			}
		}
		if seen == 0 {
			t.Fatal("no key names b as its previous owner")
		}
		time.Sleep(2 * time.Second) // past the window
		for i := range 300 {
			if _, prev, _ := d.PickFallback(fmt.Sprint("k", i), nil); prev != nil {
				t.Fatalf("past HandoffWindow: previous %q", prev.Addr())
			}
		}
	})
	// Without Handoff (getters that may not send memory-only requests): no
	// previous owner, ever.
	off := newAddrPeers(t, "d", &Options{Replicas: 64}, "a", "b", "c", "d")
	for i := range 300 {
		if _, prev, _ := off.PickFallback(fmt.Sprint("k", i), nil); prev != nil {
			t.Fatalf("without Handoff: previous %q", prev.Addr())
		}
	}
	if _, err := NewPeers("a", nil, &Options{HandoffWindow: -1}); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("a negative HandoffWindow: %v; want ErrConfig", err)
	}
}
