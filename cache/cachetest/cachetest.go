// Package cachetest checks that a transport keeps the promises a cluster of
// groups makes to its callers, as testing/fstest.TestFS checks a file
// system: a transport's own tests call TestTransport with a way to start a
// cluster of nodes over that transport, and it runs every check as a
// subtest.
//
//	func TestConformance(t *testing.T) {
//		cachetest.TestTransport(t, func(t *testing.T, o cachetest.Options) cachetest.Cluster {
//			// start o.Nodes nodes over the transport, each with a group
//			// named o.Group whose Getter is o.Getter(i) and whose options
//			// are o.GroupOptions with Peers set to the node's peer set
//		})
//	}
//
// What it checks, over the transport: values and "not found" cross the
// hop, and each key is loaded once in the cluster; concurrent Gets of a cold
// key with a slow source load it once; a memory-only read (cache.OpPeek)
// never loads, and answers what the owner holds; the owner's TTLs, of a
// value and of a "not found", cross the hop; Set and Remove reach every node;
// GetMany answers every key; a hung peer (if the cluster can hang one)
// costs its callers a fallback, not an error, and one that hangs in the
// middle of a load costs them at most the hedge delay after its last sign;
// a lying peer's answers (if the cluster can make one lie) are refused, and
// the callers get the source's; and a history of concurrent reads and
// writes never reads a value that an acknowledged write had replaced.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/transports.md
//   - https://github.com/geecache/geecache/blob/main/docs/testing.md
package cachetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/history"
)

// Options is the cluster a check asks for.
type Options struct {
	// Nodes is how many nodes to start.
	Nodes int
	// Group is the name of the one group every node serves.
	Group string
	// Getter returns node i's source.
	Getter func(i int) getter.Getter
	// GroupOptions are each node's group options; the transport sets
	// Peers (and may set Logger).
	GroupOptions cache.GroupOptions
}

// A Cluster is the nodes a NewCluster started.
type Cluster struct {
	// Groups are the nodes' groups, in order, each wired to the others
	// through the transport.
	Groups []*cache.Group
	// Hang, if not nil, makes node i stop answering its peers, as a
	// stopped process would (requests wait, connections stay open), until
	// the func it returns is called. The checks that need it are skipped
	// without it. A request node i was serving when it hung stops too:
	// its signs that it is loading and its answer wait for the resume.
	Hang func(i int) (resume func())
	// Lie, if not nil, makes node i answer its peers with a wrong value
	// that still looks like an answer, until the func it returns is
	// called. Only a transport that carries checksums can refuse such a
	// value: one without them leaves Lie nil, and the check is skipped.
	Lie func(i int) (undo func())
	// SaysLoading reports that the transport carries an owner's sign
	// that it is loading a key (the net/http binding's 102 Processing),
	// so that the nodes waiting for it do not hedge a slow source. A
	// transport without it (one answer per request, as the Lambda Invoke
	// API and fetch give) has the slow-source check run with hedging off:
	// with hedging on, a source slower than the hedge delay is loaded up
	// to once per asking node until the delay has learned how slow it is.
	SaysLoading bool
	// Pickers, if not nil, are the nodes' peer sets (the Peers of their
	// GroupOptions), in order: the checks that send a request through a
	// cache.Peer of the transport themselves need them, and are skipped
	// without them.
	Pickers []cache.PeerPicker
}

// NewCluster starts a cluster over the transport under test. t.Cleanup
// stops it.
type NewCluster func(t *testing.T, o Options) Cluster

// TestTransport runs every check of the package doc against clusters that
// newCluster starts, each as a subtest.
func TestTransport(t *testing.T, newCluster NewCluster) {
	t.Run("ValuesCrossTheHop", func(t *testing.T) { valuesCrossTheHop(t, newCluster) })
	t.Run("SlowSourceLoadsOnce", func(t *testing.T) { slowSourceLoadsOnce(t, newCluster) })
	t.Run("WritesReachEveryNode", func(t *testing.T) { writesReachEveryNode(t, newCluster) })
	t.Run("GetMany", func(t *testing.T) { getMany(t, newCluster) })
	t.Run("HungPeer", func(t *testing.T) { hungPeer(t, newCluster) })
	t.Run("HangMidLoad", func(t *testing.T) { hangMidLoad(t, newCluster) })
	t.Run("LyingPeer", func(t *testing.T) { lyingPeer(t, newCluster) })
	t.Run("PeekNeverLoads", func(t *testing.T) { peekNeverLoads(t, newCluster) })
	t.Run("TTLsCrossTheHop", func(t *testing.T) { ttlsCrossTheHop(t, newCluster) })
	t.Run("History", func(t *testing.T) { historyCheck(t, newCluster) })
}

// source is a Getter that counts its loads per key, answers "v:"+key, and
// "not found" for a key that starts with "missing".
type source struct {
	delay   time.Duration
	mu      sync.Mutex
	loads   map[string]int
	started chan string // if not nil, each load's key, once it began (never blocks)
}

func newSource(delay time.Duration) *source { return &source{delay: delay, loads: map[string]int{}} }

func (s *source) Get(ctx context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	s.loads[key]++
	s.mu.Unlock()
	if s.started != nil {
		select {
		case s.started <- key:
		default:
		}
	}
	if s.delay > 0 {
		t := time.NewTimer(s.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if strings.HasPrefix(key, "missing") {
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	}
	return []byte("v:" + key), nil
}

func (s *source) loadsOf(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads[key]
}

// start starts a cluster of n nodes sharing src, without hedging unless
// hedge: a hedge on a busy test machine would load a key twice.
func start(t *testing.T, newCluster NewCluster, n int, src getter.Getter, hedge bool) Cluster {
	t.Helper()
	o := Options{Nodes: n, Group: "cachetest", Getter: func(int) getter.Getter { return src }}
	o.GroupOptions.PeerPolicy.NoHedge = !hedge
	c := newCluster(t, o)
	if len(c.Groups) != n {
		t.Fatalf("NewCluster started %d groups; want %d", len(c.Groups), n)
	}
	return c
}

func keys(prefix string, n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprint(prefix, i)
	}
	return ks
}

// checkValue checks what a Get of key returned: "v:"+key, or for a key
// that starts with "missing" an error wrapping getter.ErrNotFound.
func checkValue(t *testing.T, who string, key string, v cache.ByteView, err error) {
	t.Helper()
	if strings.HasPrefix(key, "missing") {
		if !errors.Is(err, getter.ErrNotFound) {
			t.Errorf("%s: Get(%q) = %q, %v; want an error wrapping getter.ErrNotFound", who, key, v, err)
		}
		return
	}
	if err != nil || v.String() != "v:"+key {
		t.Errorf("%s: Get(%q) = %q, %v; want %q", who, key, v, err, "v:"+key)
	}
}

// valuesCrossTheHop gets every key from every node, one after another:
// each answer is right, and each present key is loaded once in the
// cluster (by its owner; the others fetch it).
func valuesCrossTheHop(t *testing.T, newCluster NewCluster) {
	src := newSource(0)
	c := start(t, newCluster, 3, src, false)
	ks := append(keys("key", 30), keys("missing", 5)...)
	for i, g := range c.Groups {
		for _, k := range ks {
			v, err := g.Get(t.Context(), k)
			checkValue(t, fmt.Sprint("node", i), k, v, err)
		}
	}
	for _, k := range ks {
		if strings.HasPrefix(k, "missing") {
			continue
		}
		if n := src.loadsOf(k); n != 1 {
			t.Errorf("%q was loaded %d times over 3 nodes; want once, by its owner", k, n)
		}
	}
}

// slowSourceLoadsOnce gets one cold key from every node at once, three
// times each, with a source that takes 300 ms: it is loaded once in the
// cluster, and every caller gets it; with hedging on where the transport
// says "loading" (Cluster.SaysLoading).
func slowSourceLoadsOnce(t *testing.T, newCluster NewCluster) {
	src := newSource(300 * time.Millisecond)
	c := start(t, newCluster, 3, src, true)
	if !c.SaysLoading {
		t.Log("the transport does not say that an owner is loading: checked with hedging off")
		src = newSource(300 * time.Millisecond)
		c = start(t, newCluster, 3, src, false)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 9 {
		g := c.Groups[i%3]
		wg.Go(func() {
			v, err := g.Get(ctx, "cold")
			checkValue(t, fmt.Sprint("node", i%3), "cold", v, err)
		})
	}
	wg.Wait()
	if n := src.loadsOf("cold"); n != 1 {
		t.Errorf("9 concurrent Gets over 3 nodes of a key whose source takes 300 ms loaded it %d times; want once", n)
	}
}

// writesReachEveryNode sets and removes keys through each node in turn
// (the source holds the new values first, as a user's writes do): once a
// write returns nil, every node serves its value.
func writesReachEveryNode(t *testing.T, newCluster NewCluster) {
	src := history.NewSource(keys("w", 12))
	c := start(t, newCluster, 3, getter.Func(src.Get), false)
	ctx := t.Context()
	for r, k := range keys("w", 12) {
		for _, g := range c.Groups { // a copy everywhere first
			if _, err := g.Get(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		val := fmt.Sprint("set:", r)
		src.Put(k, val)
		w := c.Groups[r%3]
		var err error
		if r%2 == 0 {
			err = w.Set(ctx, k, []byte(val), 0)
		} else {
			err = w.Remove(ctx, k)
		}
		if err != nil {
			t.Fatalf("write %d of %q through node%d: %v", r, k, r%3, err)
		}
		for i, g := range c.Groups {
			if v, err := g.Get(ctx, k); err != nil || v.String() != val {
				t.Errorf("node%d: Get(%q) = %q, %v after the write of %q returned", i, k, v, err, val)
			}
		}
	}
}

// getMany asks every node for many keys at once, present and missing,
// twice (cold, then warm): every key's answer is right.
func getMany(t *testing.T, newCluster NewCluster) {
	src := newSource(0)
	c := start(t, newCluster, 3, src, false)
	ks := append(keys("many", 40), keys("missing-many", 5)...)
	for round := range 2 {
		for i, g := range c.Groups {
			seen := make([]bool, len(ks))
			g.GetMany(t.Context(), ks, func(j int, v cache.ByteView, err error) {
				seen[j] = true
				checkValue(t, fmt.Sprint("node", i, " round ", round), ks[j], v, err)
			})
			for j, ok := range seen {
				if !ok {
					t.Errorf("node%d: GetMany gave no answer for %q", i, ks[j])
				}
			}
		}
	}
}

// hungPeer hangs each key's owner in turn and gets the key from another
// node: the caller gets the right value (a hedge or a fallback loads it),
// within its own deadline, not the hung peer's.
func hungPeer(t *testing.T, newCluster NewCluster) {
	src := newSource(0)
	c := start(t, newCluster, 3, src, true)
	if c.Hang == nil {
		t.Skip("the cluster cannot hang a node (Cluster.Hang is nil)")
	}
	for _, k := range keys("hung", 6) {
		owner := -1 // the node that loads it
		before := make([]int64, len(c.Groups))
		for i, g := range c.Groups {
			before[i] = g.Stats().LocalLoads
		}
		if _, err := c.Groups[0].Get(t.Context(), k); err != nil {
			t.Fatal(err)
		}
		for i, g := range c.Groups {
			if g.Stats().LocalLoads > before[i] {
				owner = i
			}
		}
		if owner < 0 {
			t.Fatalf("no node loaded %q", k)
		}
		other := c.Groups[(owner+1)%3]
		if err := other.Remove(t.Context(), k); err != nil {
			t.Fatalf("Remove(%q): %v", k, err)
		}
		resume := c.Hang(owner)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		v, err := other.Get(ctx, k)
		cancel()
		resume()
		checkValue(t, "a node whose owner hangs", k, v, err)
	}
}

// hangMidLoad gets a cold key that node 1 owns through node 0, three
// Gets at once, with a source that takes a second and hedging on (HedgeMax
// 200 ms), and hangs node 1 once its load has begun: the callers get the
// value, from node 0's own load (the hedge), without an error and before
// node 1 is resumed, which the check does only once they have returned or
// after 30 s (then it fails). Without the promise that a peer that stops
// mid-load costs at most HedgeMax after its last sign, node 0 would wait
// for node 1 until the resume.
func hangMidLoad(t *testing.T, newCluster NewCluster) {
	const delay = time.Second
	srcs := []*source{newSource(delay), newSource(delay)}
	srcs[1].started = make(chan string, 1)
	o := Options{Nodes: 2, Group: "cachetest", Getter: func(i int) getter.Getter { return srcs[i] }}
	o.GroupOptions.PeerPolicy.HedgeMin = 10 * time.Millisecond
	o.GroupOptions.PeerPolicy.HedgeMax = 200 * time.Millisecond
	c := newCluster(t, o)
	if c.Hang == nil {
		t.Skip("the cluster cannot hang a node (Cluster.Hang is nil)")
	}
	if c.Pickers == nil {
		t.Skip("the Cluster has no Pickers")
	}
	key, _ := remoteKey(t, c, "midload")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type result struct {
		v   cache.ByteView
		err error
	}
	results := make(chan result, 3)
	for range 3 {
		go func() {
			v, err := c.Groups[0].Get(ctx, key)
			results <- result{v, err}
		}()
	}
	long := time.NewTimer(30 * time.Second)
	defer long.Stop()
	select {
	case <-srcs[1].started:
	case <-long.C:
		cancel()
		t.Fatalf("node 1 did not begin loading %q within 30 s", key)
	}
	if c.SaysLoading {
		// Time for node 1's signs that it is loading to reach node 0 (the
		// net/http binding repeats its 102 every 100 ms). If none did,
		// node 0 hedges sooner, which this check does not tell apart.
		wait(ctx, 300*time.Millisecond)
	}
	resume := c.Hang(1)
	for range 3 {
		select {
		case r := <-results:
			checkValue(t, "node0, its owner hung mid-load", key, r.v, r.err)
		case <-long.C:
			resume()
			cancel()
			t.Fatalf("node 0's Gets of %q did not return within 30 s while its owner hung mid-load", key)
		}
	}
	resume()
	if n := srcs[0].loadsOf(key); n == 0 {
		t.Errorf("node 0 never loaded %q itself: its Gets returned, so its hung owner answered them (Cluster.Hang let a request in flight go on)", key)
	}
}

// lyingPeer makes node 1 lie and gets the keys it owns, present and
// missing, through nodes 0 and 2: every answer is the source's (the asking
// node refuses the lie and loads the key elsewhere), never the lie.
func lyingPeer(t *testing.T, newCluster NewCluster) {
	src := newSource(0)
	c := start(t, newCluster, 3, src, false)
	if c.Lie == nil {
		t.Skip("the cluster cannot make a node lie (Cluster.Lie is nil): the transport carries no checksums")
	}
	if c.Pickers == nil {
		t.Skip("the Cluster has no Pickers")
	}
	ks := append(ownedBy(t, c, 1, "lie", 6), ownedBy(t, c, 1, "missing-lie", 2)...)
	undo := c.Lie(1)
	defer undo()
	for _, i := range []int{0, 2} {
		g := c.Groups[i]
		errs := g.Stats().PeerErrors
		for _, k := range ks {
			v, err := g.Get(t.Context(), k)
			checkValue(t, fmt.Sprint("node", i, ", node1 lying"), k, v, err)
		}
		if g.Stats().PeerErrors == errs {
			t.Errorf("node%d counted no failed fetch from its lying peer: the check never reached the lie", i)
		}
	}
}

// ownedBy returns n keys with prefix that node i's picker says node i
// owns.
func ownedBy(t *testing.T, c Cluster, i int, prefix string, n int) []string {
	t.Helper()
	var ks []string
	for j := 0; j < 10000 && len(ks) < n; j++ {
		k := fmt.Sprint(prefix, j)
		if p, ok := c.Pickers[i].PickPeer(k); !ok || p == nil {
			ks = append(ks, k)
		}
	}
	if len(ks) < n {
		t.Fatalf("node%d's picker says it owns %d of 10,000 keys; want %d", i, len(ks), n)
	}
	return ks
}

// historyCheck runs concurrent Gets, GetManys, Sets, Removes, RemoveManys
// and Purges on three nodes for a second, and checks every read against
// the acknowledged writes (see internal/history); with Hang, one node
// hangs now and then.
func historyCheck(t *testing.T, newCluster NewCluster) {
	ks := keys("h", 12)
	src := history.NewSource(ks)
	o := Options{Nodes: 3, Group: "cachetest", Getter: func(int) getter.Getter { return getter.Func(src.Get) }}
	o.GroupOptions.NotFoundTTL = time.Minute
	o.GroupOptions.PeerPolicy.SlowAfter = 300 * time.Millisecond // a write waits this long for a hung node
	c := newCluster(t, o)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	w := history.Workload{
		Nodes: len(c.Groups), Group: func(i int) *cache.Group { return c.Groups[i] },
		Source: src, Keys: ks, Writers: 3, Readers: 6, Duration: time.Second, MaxOps: 1 << 20, Seed: seed,
		MinReads: 100, MinAcked: 5,
	}
	if c.Hang != nil {
		w.Fault = func(ctx context.Context, rng *rand.Rand) {
			for ctx.Err() == nil {
				wait(ctx, time.Duration(100+rng.IntN(200))*time.Millisecond)
				resume := c.Hang(rng.IntN(len(c.Groups)))
				wait(ctx, time.Duration(100+rng.IntN(300))*time.Millisecond)
				resume()
			}
		}
	}
	rep := history.Run(t.Context(), w)
	t.Log(rep)
	if rep.Reads < 100 || rep.Acked < 5 {
		t.Fatalf("%v: too little checked", rep)
	}
	if len(rep.Violations) > 0 {
		t.Fatalf("%v (seed %d)\n%s", rep, seed, rep.Detail(10))
	}
}

func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// peekNeverLoads sends an OpPeek through the transport's cache.Peer for a
// key the other node owns: "not held" while the owner does not hold it,
// without a load anywhere, and its value once it does. A transport that
// cannot carry OpPeek (errors.ErrUnsupported) passes: the group takes
// that as "not held".
func peekNeverLoads(t *testing.T, newCluster NewCluster) {
	src := newSource(0)
	c := start(t, newCluster, 2, src, false)
	if c.Pickers == nil {
		t.Skip("the Cluster has no Pickers")
	}
	key, peer := remoteKey(t, c, "peek")
	peek := cache.PeerRequest{Op: cache.OpPeek, Group: "cachetest", Keys: []string{key}}
	var r oneReply
	err := peer.Do(t.Context(), peek, &r)
	if errors.Is(err, errors.ErrUnsupported) {
		return
	}
	if err != nil || r.n != 1 || !errors.Is(r.err, cache.ErrNotHeld) {
		t.Fatalf("an OpPeek of %q, not held: %d answers, %v, %v; want one answer wrapping cache.ErrNotHeld", key, r.n, r.err, err)
	}
	if n := src.loadsOf(key); n != 0 {
		t.Fatalf("an OpPeek loaded %q %d times; want 0", key, n)
	}
	if _, err := c.Groups[0].Get(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	r = oneReply{}
	if err := peer.Do(t.Context(), peek, &r); err != nil || r.n != 1 || r.err != nil || r.v != "v:"+key {
		t.Fatalf("an OpPeek of %q, held by its owner: %d answers, %q, %v, %v; want %q", key, r.n, r.v, r.err, err, "v:"+key)
	}
	if n := src.loadsOf(key); n != 1 {
		t.Fatalf("%q was loaded %d times; want 1 (the Get's)", key, n)
	}
}

// oneReply is a cache.PeerReply that keeps the answers to a request of one
// key.
type oneReply struct {
	n   int
	v   string
	err error
}

func (r *oneReply) Answer(_ int, v cache.ByteView, _ time.Duration, err error) {
	r.n++
	r.v, r.err = v.String(), err
}

func (*oneReply) Loading() {}

// remoteKey is a key with prefix that node 0's picker says another node
// owns, and that node's cache.Peer.
func remoteKey(t *testing.T, c Cluster, prefix string) (string, cache.Peer) {
	t.Helper()
	for i := range 10000 {
		if p, ok := c.Pickers[0].PickPeer(fmt.Sprint(prefix, i)); ok && p != nil {
			return fmt.Sprint(prefix, i), p
		}
	}
	t.Fatal("node 0's picker names no peer for 10,000 keys")
	return "", nil
}

// ttlsCrossTheHop asks the owner of a value and of a missing key, through
// the transport's cache.Peer, with the groups' TTL and NotFoundTTL set:
// each answer's TTL is within what the owner gives it, or negative where
// the transport does not carry TTLs (the asking group's own apply then).
func ttlsCrossTheHop(t *testing.T, newCluster NewCluster) {
	const ttl, notFoundTTL = time.Hour, time.Minute
	o := Options{Nodes: 2, Group: "cachetest", Getter: func(int) getter.Getter { return newSource(0) }}
	o.GroupOptions.PeerPolicy.NoHedge = true
	o.GroupOptions.TTL, o.GroupOptions.NotFoundTTL = ttl, notFoundTTL
	c := newCluster(t, o)
	if c.Pickers == nil {
		t.Skip("the Cluster has no Pickers")
	}
	for _, k := range []struct {
		prefix string
		max    time.Duration
	}{{"ttl", ttl}, {"missing-ttl", notFoundTTL}} {
		key, peer := remoteKey(t, c, k.prefix)
		var r ttlReply
		err := peer.Do(t.Context(), cache.PeerRequest{Op: cache.OpGet, Group: o.Group, Keys: []string{key}}, &r)
		missing := strings.HasPrefix(key, "missing")
		switch {
		case err != nil || r.n != 1:
			t.Fatalf("an OpGet of %q: %d answers, %v; want one", key, r.n, err)
		case missing != errors.Is(r.err, getter.ErrNotFound):
			t.Fatalf("an OpGet of %q answered %v", key, r.err)
		case r.ttl > k.max || r.ttl == 0:
			t.Fatalf("an OpGet of %q answered a TTL of %v; want one in (0, %v], or negative if the transport does not carry it", key, r.ttl, k.max)
		}
	}
}

// ttlReply keeps the answers to a request of one key, with their TTL.
type ttlReply struct {
	n   int
	ttl time.Duration
	err error
}

func (r *ttlReply) Answer(_ int, _ cache.ByteView, ttl time.Duration, err error) {
	r.n++
	r.ttl, r.err = ttl, err
}

func (*ttlReply) Loading() {}
