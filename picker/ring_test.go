package picker

import (
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
)

var hashes = []struct {
	name string
	h    Hash
}{
	{"xxhash", xxHash},
	{"crc32", CRC32},
}

// testKeys returns n distinct keys.
func testKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	return keys
}

func nodeNames(n int) []string {
	nodes := make([]string, n)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("http://10.0.0.%d:8001", i+1)
	}
	return nodes
}

func TestEmptyRing(t *testing.T) {
	for _, nodes := range [][]string{nil, {}, {""}, {"", ""}} {
		r := mustNew(nodes, nil)
		if got := r.owner("k"); got != "" {
			t.Errorf("newRing(%q).owner = %q; want \"\"", nodes, got)
		}
		if len(r.nodes) != 0 {
			t.Errorf("newRing(%q) has %d nodes; want 0", nodes, len(r.nodes))
		}
	}
}

func TestCRC32MatchesChecksumIEEE(t *testing.T) {
	for _, s := range []string{"", "a", "Tom", "http://localhost:8001", strings.Repeat("xyz", 100)} {
		if got, want := CRC32(s), uint64(crc32.ChecksumIEEE([]byte(s))); got != want {
			t.Errorf("CRC32(%q) = %d; want %d", s, got, want)
		}
	}
}

func TestOptions(t *testing.T) {
	nodes := nodeNames(3)
	if got := mustNew(nodes, nil).cfg.replicas; got != 1024 {
		t.Errorf("default replicas = %d; want 1024, as Options.Replicas says", got)
	}
	if got := mustNew(nodes, &Options{Replicas: 7}).cfg.replicas; got != 7 {
		t.Errorf("Replicas 7: replicas = %d", got)
	}
	if _, err := newRing(nodes, &Options{Replicas: -1}); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("Replicas -1: err = %v, want cache.ErrConfig", err)
	}
	if _, err := NewPeers("a", nil, &Options{Replicas: -1}); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("NewPeers with Replicas -1: err = %v, want cache.ErrConfig", err)
	}
	if got := mustNew(nodes, &Options{Replicas: 0}).cfg.replicas; got != 1024 {
		t.Errorf("Replicas 0: replicas = %d; want 1024", got)
	}
	a := mustNew(nodes, &Options{Replicas: 50})
	b := mustNew(nodes, &Options{Replicas: 50, Hash: nil})
	c := mustNew(nodes, &Options{Replicas: 50, Hash: CRC32})
	diff := 0
	for _, k := range testKeys(1000) {
		if a.owner(k) != b.owner(k) {
			t.Fatalf("WithHash(nil) is not xxHash: key %q: %q vs %q", k, a.owner(k), b.owner(k))
		}
		if a.owner(k) != c.owner(k) {
			diff++
		}
	}
	if diff == 0 {
		t.Error("WithHash(CRC32) places every key like xxHash; hash option ignored?")
	}
}

func TestNodesAndWith(t *testing.T) {
	r := mustNew([]string{"c", "a", "", "b", "a"}, nil)
	if got, want := r.nodes, []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("nodes = %q; want %q", got, want)
	}
	w := r.with("a", "d")
	if !slices.Equal(w.nodes, []string{"a", "d"}) || w.cfg.replicas != r.cfg.replicas || len(r.nodes) != 3 {
		t.Errorf("with: got %q (replicas %d), original %q", w.nodes, w.cfg.replicas, r.nodes)
	}
}

// TestAddrsIsACopy checks that Peers.Addrs hands out a copy: changing it
// changes nothing on the ring.
func TestAddrsIsACopy(t *testing.T) {
	p, err := NewPeers("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Set("c", "a", "", "b", "a")
	got := p.Addrs()
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("Addrs() = %q; want %q", got, want)
	}
	got[0] = "changed"
	if again := p.Addrs(); again[0] != "a" {
		t.Errorf("Addrs() after changing its result = %q", again)
	}
}

// refOwner is a brute-force reference: the owner of key is the node with a
// point at the smallest value >= hash(key) (wrapping to the smallest
// point), and among nodes with a point at that value, the smallest name.
func refOwner(cfg config, nodes []string, key string) string {
	h := cfg.hash(key)
	var best, first uint64
	bestName, firstName := "", ""
	haveBest, haveFirst := false, false
	for _, n := range nodes {
		seed := nodeSeed(n)
		for j := range cfg.replicas {
			p := newPointGen(cfg).point(seed, j)
			if !haveFirst || p < first || (p == first && n < firstName) {
				first, firstName, haveFirst = p, n, true
			}
			if p >= h && (!haveBest || p < best || (p == best && n < bestName)) {
				best, bestName, haveBest = p, n, true
			}
		}
	}
	if haveBest {
		return bestName
	}
	return firstName
}

// coarse is a hash with few distinct values, so that points tie often.
func coarse(s string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(s)) % 61) }

func TestLookupMatchesReference(t *testing.T) {
	cases := []struct {
		name string
		h    Hash
		n    int
		reps int
	}{
		{"xxhash", xxHash, 7, 40},
		{"crc32", CRC32, 7, 40},
		{"coarse-ties", coarse, 5, 9},
		{"constant", func(string) uint64 { return 42 }, 4, 3},
		{"max", func(string) uint64 { return ^uint64(0) }, 4, 3},
		{"single", xxHash, 1, 5},
		// Node points (labels are 8 bytes long, test keys are not) lie in
		// the lowest quarter of the space, so most keys hash past the last
		// point and wrap around.
		{"wrap", func(s string) uint64 {
			if len(s) == 8 {
				return xxHash(s) >> 2
			}
			return xxHash(s)
		}, 5, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := nodeNames(tc.n)
			slices.Reverse(nodes) // the reference does not sort
			cfg := config{hash: tc.h, replicas: tc.reps}
			r := mustNew(nodes, &Options{Hash: tc.h, Replicas: tc.reps})
			for _, k := range testKeys(2000) {
				if len(k) == 8 {
					k += "+" // not a label (see the "wrap" case)
				}
				got := r.owner(k)
				if want := refOwner(cfg, nodes, k); got != want {
					t.Fatalf("owner(%q) = %q; want %q", k, got, want)
				}
			}
		})
	}
}

func TestTiesGoToSmallestName(t *testing.T) {
	constant := func(string) uint64 { return 7 }
	for _, nodes := range [][]string{{"b", "c", "a"}, {"c", "a", "b"}, {"a", "b", "c"}} {
		r := mustNew(nodes, &Options{Hash: constant})
		if got := r.owner("anything"); got != "a" {
			t.Errorf("newRing(%q) with all points tied: owner %q; want \"a\"", nodes, got)
		}
	}
}

func TestOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, h := range hashes {
		nodes := nodeNames(20)
		ref := mustNew(nodes, &Options{Hash: h.h})
		for range 5 {
			shuffled := slices.Clone(nodes)
			shuffled = append(shuffled, nodes[rng.IntN(len(nodes))]) // a duplicate
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			r := mustNew(shuffled, &Options{Hash: h.h})
			if !slices.Equal(r.points, ref.points) || !slices.Equal(r.owners, ref.owners) {
				t.Fatalf("%s: ring of %q differs from ring of %q", h.name, shuffled, nodes)
			}
			for _, k := range testKeys(1000) {
				if a, b := r.owner(k), ref.owner(k); a != b {
					t.Fatalf("%s: key %q: owner %q vs %q", h.name, k, a, b)
				}
			}
		}
	}
}

// spread returns the busiest node's share of keys divided by the mean share.
func spread(r *ring, keys []string) float64 {
	counts := make([]int, len(r.nodes))
	for _, k := range keys {
		counts[r.owners[r.lookup(k)]]++
	}
	return float64(slices.Max(counts)) * float64(len(counts)) / float64(len(keys))
}

func TestDefaultReplicasSpread(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	keys := testKeys(n)
	nameSets := map[string][]string{
		"ip":        nodeNames(10),
		"localhost": make([]string, 10),
		"names":     make([]string, 10),
	}
	for i := range 10 {
		nameSets["localhost"][i] = "http://localhost:" + strconv.Itoa(8001+i)
		nameSets["names"][i] = "cache-" + strconv.Itoa(i) + ".geecache.internal"
	}
	for _, h := range hashes {
		for setName, nodes := range nameSets {
			s := spread(mustNew(nodes, &Options{Hash: h.h}), keys)
			t.Logf("%s, %s, %d nodes, %d keys: spread %.3f", h.name, setName, len(nodes), n, s)
			if s > 1.10 {
				t.Errorf("%s, %s: busiest node gets %.3f x the mean share; want <= 1.10", h.name, setName, s)
			}
		}
	}
}

func TestMinimalMovement(t *testing.T) {
	keys := testKeys(100_000)
	for _, h := range hashes {
		nodes := nodeNames(10)
		base := mustNew(nodes, &Options{Hash: h.h})

		const added = "http://10.0.0.99:8001"
		grown := base.with(append(slices.Clone(nodes), added)...)
		moved := 0
		for _, k := range keys {
			if before, after := base.owner(k), grown.owner(k); before != after {
				moved++
				if after != added {
					t.Fatalf("%s: adding %q moved %q from %q to %q", h.name, added, k, before, after)
				}
			}
		}
		// The new node should take about 1/11 of the keys.
		if frac := float64(moved) / float64(len(keys)); frac < 0.06 || frac > 0.12 {
			t.Errorf("%s: adding an 11th node moved %.3f of the keys; want about 0.09", h.name, frac)
		}

		removed := nodes[3]
		shrunk := base.with(slices.Delete(slices.Clone(nodes), 3, 4)...)
		moved = 0
		for _, k := range keys {
			if before, after := base.owner(k), shrunk.owner(k); before != after {
				moved++
				if before != removed {
					t.Fatalf("%s: removing %q moved %q from %q to %q", h.name, removed, k, before, after)
				}
			}
		}
		if frac := float64(moved) / float64(len(keys)); frac < 0.07 || frac > 0.13 {
			t.Errorf("%s: removing one of 10 nodes moved %.3f of the keys; want about 0.10", h.name, frac)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	keys := testKeys(64)
	for _, h := range hashes {
		for _, n := range []int{0, 1, 3, 100} {
			r := mustNew(nodeNames(n), &Options{Hash: h.h})
			i := 0
			allocs := testing.AllocsPerRun(1000, func() {
				r.owner(keys[i%len(keys)])
				i++
			})
			if allocs != 0 {
				t.Errorf("%s, %d nodes: Lookup allocates %.1f times per call", h.name, n, allocs)
			}
		}
	}
	key := strings.Repeat("k", 100)
	if allocs := testing.AllocsPerRun(1000, func() { CRC32(key) }); allocs != 0 {
		t.Errorf("CRC32 allocates %.1f times per call", allocs)
	}
}

// FuzzRing checks that any node list and key give an owner from the list,
// independent of the list's order and of duplicates, and that a ring
// changed incrementally (ring.with, Peers.Set: the nodes in changes join
// or, if present, leave) is the ring built from scratch for the new list,
// which is the brute-force reference ring.
func FuzzRing(f *testing.F) {
	f.Add("a,b,c", "Tom", uint8(3), uint8(0), "d")
	f.Add("", "k", uint8(0), uint8(1), "a,b")
	f.Add(",,x,,x", "", uint8(255), uint8(2), "x,y")
	f.Add("http://localhost:8001,http://localhost:8002", "kkk", uint8(10), uint8(1), "http://localhost:8001")
	f.Add("n1,n2,n3,n4,n5,n6", "key", uint8(7), uint8(3), "n7,n2")
	f.Fuzz(func(t *testing.T, list, key string, reps, hashSel uint8, changes string) {
		nodes := strings.Split(list, ",")
		h := testHashes[int(hashSel)%len(testHashes)]
		cfg := config{hash: h.h, replicas: int(reps%16) + 1}
		if reps >= 250 {
			cfg.replicas = 1024
		}
		opts := &Options{Replicas: cfg.replicas, Hash: h.h}
		r := mustNew(nodes, opts)
		owner := r.owner(key)
		nonEmpty := slices.ContainsFunc(nodes, func(s string) bool { return s != "" })
		if (owner != "") != nonEmpty {
			t.Fatalf("owner %q with nodes %q", owner, nodes)
		}
		if owner != "" && !slices.Contains(nodes, owner) {
			t.Fatalf("owner %q is not one of %q", owner, nodes)
		}
		rev := slices.Clone(nodes)
		slices.Reverse(rev)
		rev = append(rev, nodes...)
		if got := mustNew(rev, opts).owner(key); got != owner {
			t.Fatalf("owner %q for %q, but %q for %q", owner, nodes, got, rev)
		}
		if d := ringDiff(r, refRing(cfg, nodes)); d != "" {
			t.Fatalf("%s: newRing(%q) differs from the reference: %s", h.name, nodes, d)
		}

		changed := slices.Clone(nodes)
		for _, c := range strings.Split(changes, ",") {
			if i := slices.Index(changed, c); i >= 0 {
				changed = slices.DeleteFunc(changed, func(s string) bool { return s == c })
			} else {
				changed = append(changed, c)
			}
		}
		want := refRing(cfg, changed)
		if d := ringDiff(r.with(changed...), want); d != "" {
			t.Fatalf("%s: newRing(%q).with(%q) differs from the reference: %s", h.name, nodes, changed, d)
		}
		self := ""
		if len(nodes) > 0 {
			self = nodes[0]
		}
		p := mustPeers(self, nil, opts)
		p.Set(nodes...)
		p.Set(changed...)
		if d := ringDiff(p.state.Load().ring, refRing(cfg, append(changed, self))); d != "" {
			t.Fatalf("%s: Peers(%q).Set(%q) then Set(%q) differs from the reference: %s", h.name, self, nodes, changed, d)
		}
	})
}

// mustNew is newRing for options known to be valid.
func mustNew(nodes []string, o *Options) *ring {
	r, err := newRing(nodes, o)
	if err != nil {
		panic(err)
	}
	return r
}

// mustPeers is NewPeers for options known to be valid, logging nowhere
// unless o names a Logger.
func mustPeers(self string, newGetter func(string) cache.Peer, o *Options) *Peers {
	q := Options{Logger: slog.New(slog.DiscardHandler)}
	if o != nil {
		q = *o
		if q.Logger == nil {
			q.Logger = slog.New(slog.DiscardHandler)
		}
	}
	p, err := NewPeers(self, newGetter, &q)
	if err != nil {
		panic(err)
	}
	return p
}
