package cache_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// warmGroup returns a group whose n keys ("key-0"...: 64-byte values)
// are all in memory, and the keys.
func warmGroup(b *testing.B, n int) (*cache.Group, []string) {
	keys := make([]string, n)
	data := make(map[string]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
		data[keys[i]] = string(make([]byte, 64))
	}
	grp := newGroup(b, 64<<20, getter.Map(data))
	for _, k := range keys {
		if _, err := grp.Get(b.Context(), k); err != nil {
			b.Fatal(err)
		}
	}
	return grp, keys
}

// BenchmarkGetHit measures a hit on a warm group under zipf-distributed
// keys. The side-by-side comparison with other caches is in bench/.
func BenchmarkGetHit(b *testing.B) {
	const n = 100_000
	grp, keys := warmGroup(b, n)
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 1)), 1.01, 1, n-1)
	seq := make([]string, 1<<16)
	for i := range seq {
		seq[i] = keys[z.Uint64()]
	}
	ctx := b.Context()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, _ = grp.Get(ctx, seq[i&(len(seq)-1)])
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(seq))
			for pb.Next() {
				_, _ = grp.Get(ctx, seq[i&(len(seq)-1)])
				i++
			}
		})
	})
}

// BenchmarkGetManyHit measures a GetMany of 10 keys fresh in memory:
// the per-call cost of GetMany itself beside its per-key lookups.
// "background" asks with context.Background, "request" with a context
// five values and a cancel deep (as a server's request's context, where
// each ctx.Value GetMany makes walks every layer).
func BenchmarkGetManyHit(b *testing.B) {
	const n = 1000
	grp, keys := warmGroup(b, n)
	type layer int
	deep, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 5 {
		deep = context.WithValue(deep, layer(i), i)
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"request", deep}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			hits := 0
			for i := 0; b.Loop(); i++ {
				lo := (i * 10) % (n - 10)
				grp.GetMany(c.ctx, keys[lo:lo+10], func(_ int, _ cache.ByteView, err error) {
					if err == nil {
						hits++
					}
				})
			}
			if hits == 0 {
				b.Fatal("no hits")
			}
		})
	}
}

// BenchmarkGetMiss measures a miss: every Get asks for a key the group has
// never seen, and the Getter answers at once with 64 bytes, so the time is
// the load machinery's (singleflight, the insert, the copy). "background"
// Gets with a context that cannot be cancelled, "cancellable" with one that
// can (as a request's context). The comparison with golang/groupcache is
// in bench/miss_test.go.
func BenchmarkGetMiss(b *testing.B) {
	value := make([]byte, 64)
	src := getter.Func(func(context.Context, string) ([]byte, error) { return value, nil })
	for _, bc := range []struct {
		name string
		ctx  func(b *testing.B) context.Context
	}{
		{"background", func(*testing.B) context.Context { return context.Background() }},
		{"cancellable", func(b *testing.B) context.Context { return b.Context() }},
	} {
		b.Run(bc.name+"/serial", func(b *testing.B) {
			grp := newGroup(b, 32<<20, src)
			ctx := bc.ctx(b)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := grp.Get(ctx, strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			grp := newGroup(b, 32<<20, src)
			ctx := bc.ctx(b)
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				// Each goroutine takes its own block of keys.
				i := next.Add(1) << 40
				for pb.Next() {
					if _, err := grp.Get(ctx, strconv.FormatInt(i, 36)); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

// BenchmarkGetMissOwned is BenchmarkGetMiss/background/serial on a node of
// five (picker.Peers, no handoff window open) for keys this node owns: the
// local load's questions to the ring (the owner, the next and previous
// owners) on top of the load machinery.
func BenchmarkGetMissOwned(b *testing.B) {
	peers, err := picker.NewPeers("a", func(addr string) cache.Peer { return benchPeer(addr) },
		&picker.Options{Logger: quiet, HandoffWindow: time.Nanosecond})
	if err != nil {
		b.Fatal(err)
	}
	if err := peers.Set("a", "b", "c", "d", "e"); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 64)
	grp, err := cache.NewRegistry().NewGroup("g", 32<<20, getter.Func(func(context.Context, string) ([]byte, error) { return value, nil }),
		&cache.GroupOptions{Peers: peers, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	var owned []string // keys of a, found outside the timer 1<<16 at a time
	next := 0
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i == len(owned) {
			b.StopTimer()
			for n := len(owned) + 1<<16; len(owned) < n; next++ {
				if k := strconv.Itoa(next); peers.Owner(k) == "a" {
					owned = append(owned, k)
				}
			}
			b.StartTimer()
		}
		if _, err := grp.Get(ctx, owned[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPeer is a peer that no benchmark of a local load may ask.
type benchPeer string

func (p benchPeer) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1 {
		return errors.ErrUnsupported
	}
	reply.Answer(0, cache.ByteView{}, 0, errors.New("asked "+string(p)))
	return nil
}
func (p benchPeer) Addr() string { return string(p) }
