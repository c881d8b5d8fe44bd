package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// userPeer is a peer as a user writes one, against cache.Peer
// alone: it owns the keys starting with "u", whose values it gives a TTL
// of 5 s ("missing" is not found, also for 5 s), and it records the
// writes it is asked for. writeErr, if set, fails every write.
type userPeer struct {
	addr     string
	writeErr error

	gets   atomic.Int64
	mu     sync.Mutex
	writes []string // "remove k", "set k=v ttl"
}

var _ cache.Peer = (*userPeer)(nil)

// Do answers a read of one key (it has no memory of its own: a peek is
// answered as a read) and records the set or removal of one key; it
// cannot take a request of many keys, a purge or an offer.
func (p *userPeer) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if len(req.Keys) != 1 || req.Op == cache.OpOffer {
		return fmt.Errorf("peer %s: %w", p.addr, errors.ErrUnsupported)
	}
	key := req.Keys[0]
	switch req.Op {
	case cache.OpGet, cache.OpPeek:
		p.gets.Add(1)
		if key == "u-missing" {
			reply.Answer(0, cache.ByteView{}, 5*time.Second, fmt.Errorf("peer %s: %q: %w", p.addr, key, getter.ErrNotFound))
			return nil
		}
		reply.Answer(0, cache.ByteViewOf([]byte("remote:"+key)), 5*time.Second, nil)
		return nil
	case cache.OpRemove:
		p.record("remove " + key)
	case cache.OpSet:
		p.record(fmt.Sprintf("set %s=%s %v", key, req.Value, req.TTL))
	default:
		return fmt.Errorf("peer %s: %w", p.addr, errors.ErrUnsupported)
	}
	return p.writeErr
}

func (p *userPeer) Addr() string { return p.addr }

func (p *userPeer) record(w string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes = append(p.writes, w)
}

func (p *userPeer) took() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.writes...)
}

// userPicker gives the keys starting with "u" to owner and the others to
// this node, and lists both peers, as a cache.PeerLister.
type userPicker struct{ owner, other *userPeer }

func (u userPicker) PickPeer(key string) (cache.Peer, bool) {
	if key[0] == 'u' {
		return u.owner, true
	}
	return nil, false
}

func (u userPicker) ListPeers() []cache.Peer { return []cache.Peer{u.owner, u.other} }

// A peer written against the one interface gets the owner's TTLs (for a
// value and for "not found") and the writes: the owner the Set's value and
// TTL, every other peer a Remove. (Before, the TTL reached the group only
// through a second interface, PeerTTLGetter, and the writes only through a
// third, PeerUpdater, each found by type assertion: a peer with Get alone
// compiled, kept the values for the group's own TTL, here forever, and
// was never told of a write.)
func TestUserPeerGetsTTLsAndWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		owner, other := &userPeer{addr: "http://owner"}, &userPeer{addr: "http://other"}
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, getter.Map(map[string]string{"mine": "1"}),
			&cache.GroupOptions{Peers: userPicker{owner, other}, Logger: quiet, NotFoundTTL: time.Hour}) // no TTL of its own
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			mustGet(t, g, "u1", "remote:u1")
			if _, err := g.Get(t.Context(), "u-missing"); !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("Get(u-missing) = %v; want not found", err)
			}
		}
		if n := owner.gets.Load(); n != 2 {
			t.Fatalf("%d fetches before the owner's TTL ran out; want 2 (then hot hits)", n)
		}
		time.Sleep(6 * time.Second)
		mustGet(t, g, "u1", "remote:u1")
		_, _ = g.Get(t.Context(), "u-missing")
		if n := owner.gets.Load(); n != 4 {
			t.Fatalf("%d fetches after 6 s; want 4: the owner's 5 s TTL ended both copies", n)
		}

		if err := g.Set(t.Context(), "u1", []byte("new"), time.Minute); err != nil {
			t.Fatalf("Set = %v", err)
		}
		if err := g.Remove(t.Context(), "u2"); err != nil {
			t.Fatalf("Remove = %v", err)
		}
		if err := g.Remove(t.Context(), "mine"); err != nil {
			t.Fatalf("Remove(mine) = %v", err)
		}
		wantOwner := []string{"set u1=new 1m0s", "remove u2", "remove mine"}
		wantOther := []string{"remove u1", "remove u2", "remove mine"}
		if got := owner.took(); fmt.Sprint(got) != fmt.Sprint(wantOwner) {
			t.Errorf("owner was asked %q; want %q", got, wantOwner)
		}
		if got := other.took(); fmt.Sprint(got) != fmt.Sprint(wantOther) {
			t.Errorf("other peer was asked %q; want %q", got, wantOther)
		}
		idle()
	})
}

// A transport that cannot change keys says so with an error wrapping
// errors.ErrUnsupported: a Remove names the peer, with that error, and
// does not retry it; a peer whose write fails otherwise is retried in the
// background. Both serve reads as before.
func TestReadOnlyPeerIsNamedAndNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		retried bool
	}{
		{"read-only", fmt.Errorf("peer: no writes over this transport: %w", errors.ErrUnsupported), false},
		{"failing", errors.New("connection refused"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				owner := &userPeer{addr: "http://owner", writeErr: tc.err}
				other := &userPeer{addr: "http://other"}
				g, err := cache.NewRegistry().NewGroup("g", 1<<20, getter.Map(nil), &cache.GroupOptions{Peers: userPicker{owner, other}, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				mustGet(t, g, "u1", "remote:u1")
				err = g.Remove(t.Context(), "u1")
				var ue *cache.UpdateError
				if !errors.As(err, &ue) || len(ue.Failed) != 1 || !errors.Is(ue.Failed["http://owner"], tc.err) {
					t.Fatalf("Remove = %v; want an *UpdateError naming http://owner with %v", err, tc.err)
				}
				time.Sleep(time.Minute) // past every background retry
				synctest.Wait()
				n := len(owner.took())
				if tc.retried && n < 2 || !tc.retried && n != 1 {
					t.Fatalf("the owner was asked to remove u1 %d times; retried: %v", n, tc.retried)
				}
				mustGet(t, g, "u1", "remote:u1") // reads still go to it
				idle()
			})
		})
	}
}
