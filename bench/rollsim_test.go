package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// The rolling restarts of BenchmarkRollingRestart (handoff_test.go, the
// same-address roll; surge_test.go, the surge) in a cluster without its
// network and its clock, as churnsim_test.go's: groups joined by
// picker.Peers and a transport that calls the other group in the same
// goroutine (offers and memory-only reads too), fed one zipf sequence of
// Gets, each on a node of the clients' view drawn at random, with time
// counted in Gets (ssRate a second). A ring change runs its offers at
// once, to their end, before the next Get. What it measures depends only
// on the groups' memory and the offer's rules, never on the machine's
// load: two runs of one tree differ only by the maps' seeds (the
// sketches' hashing) and the order in which concurrent offers are taken,
// a few percent of extra-loads/key, so that two versions compare in a few
// runs each where the wall-time benchmark's runs spread by a factor of 3
// on a shared machine.

// ssRate is the Gets of a simulated second: about the wall-time
// benchmark's rate on a quiet 2-core machine.
const ssRate = 20_000

type ssNode struct {
	addr    string
	reg     *cache.Registry
	group   *cache.Group
	peers   *picker.Peers
	down    bool
	leaving bool // PickPeer names each key's owner without it (Pool.Drain's pickLeaving)
	changed bool // its ring changed (picker.Options.OnChange) since its last offer
}

// ssPicker is a node's PeerPicker: its ring, or while it leaves, its ring
// without it.
type ssPicker struct{ n *ssNode }

func (p ssPicker) PickPeer(key string) (cache.Peer, bool) {
	if p.n.leaving {
		next, _, _ := p.n.peers.PickFallback(key, nil)
		return next, next != nil
	}
	return p.n.peers.PickPeer(key)
}

func (p ssPicker) PickFallback(key string, skip func(cache.Peer) bool) (next, previous cache.Peer, changed time.Time) {
	return p.n.peers.PickFallback(key, skip)
}

type ssCluster struct {
	nodes   map[string]*ssNode
	live    []string // the clients' view
	loads   []int32
	budget  int64
	started int
}

// ssPeer reaches a node by a direct call of its registry's ServePeer.
type ssPeer struct {
	c    *ssCluster
	addr string
}

func (p ssPeer) node() *ssNode {
	if n := p.c.nodes[p.addr]; n != nil && !n.down {
		return n
	}
	return nil
}

// Do serves Gets of one key, offers and memory-only reads as the
// protocol's server does; other Gets are asked key by key, and writes are
// not carried.
func (p ssPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	n := p.node()
	switch {
	case n == nil:
		return errors.New("connection refused")
	case req.Op == cache.OpGet && len(req.Keys) == 1:
		return n.reg.ServePeer(ctx, req, reply)
	case req.Op == cache.OpPeek, req.Op == cache.OpOffer:
		// Not bound to the asking Get's context, as a server's handling
		// of a request is not.
		return n.reg.ServePeer(context.Background(), req, reply)
	}
	return errors.ErrUnsupported
}

func (p ssPeer) Addr() string { return p.addr }

func newSSCluster(tb testing.TB, n int, budget int64, keys int) *ssCluster {
	c := &ssCluster{nodes: map[string]*ssNode{}, loads: make([]int32, keys), budget: budget}
	for range n {
		c.live = append(c.live, c.start(tb, "").addr)
	}
	c.setRings(tb, nil)
	return c
}

// start starts a node, empty, at addr ("" for a new one), with no ring.
func (c *ssCluster) start(tb testing.TB, addr string) *ssNode {
	if addr == "" {
		addr = fmt.Sprintf("node-%d", c.started)
		c.started++
	}
	quiet := slog.New(slog.DiscardHandler)
	n := &ssNode{addr: addr}
	p, err := picker.NewPeers(addr, func(a string) cache.Peer { return ssPeer{c, a} },
		&picker.Options{Logger: quiet, Handoff: true, OnChange: func() { n.changed = true }})
	if err != nil {
		tb.Fatal(err)
	}
	n.peers = p
	reg := cache.NewRegistry()
	g, err := reg.NewGroup(mbGroup, c.budget, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		var id int
		if _, err := fmt.Sscanf(key, "k%06d", &id); err != nil || id >= len(c.loads) {
			return nil, getter.ErrNotFound
		}
		c.loads[id]++
		return mbValueOf(key), nil
	}), &cache.GroupOptions{Peers: ssPicker{n}, Logger: quiet, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	if err != nil {
		tb.Fatal(err)
	}
	n.reg, n.group = reg, g
	c.nodes[addr] = n
	return n
}

// setRings sets every running node's ring to the running nodes but
// without (the discovery), and runs the offers of those whose ring
// changed, to their end.
func (c *ssCluster) setRings(tb testing.TB, without *ssNode) {
	var addrs []string
	for a, n := range c.nodes {
		if !n.down && n != without {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return
	}
	slices.Sort(addrs)
	for _, a := range addrs {
		if err := c.nodes[a].peers.Set(addrs...); err != nil {
			tb.Fatal(err)
		}
	}
	for _, a := range addrs {
		if n := c.nodes[a]; n.changed {
			n.changed = false
			c.offerKeys(n)
		}
	}
}

func (c *ssCluster) offerKeys(n *ssNode) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n.group.OfferKeys(ctx)
}

// ssPhases counts a roll's loads by phase, and the out and back phases'
// loads by key: the leaving node's (own), the keys the new node of a surge
// took at its join (moved), the others' (rest).
type ssPhases struct {
	join, out, back, total int64
	outBy, backBy          [ssClasses]int64 // the out and back phases' loads by class of key
	held                   int64
	evicted                int64 // the staying nodes' main-cache evictions in the out phases
	joinTaken, outOffered  int64 // what the offers moved (Stats.TakenOver, Offered)
	outTaken               int64
	after                  int64 // the loads of ssAfter seconds after the roll
}

// ssAfter is the seconds of Gets after the last step, in which a roll
// that left the cluster as able as before loads as much as the control.
const ssAfter = 20

// The classes of key of a roll's step: the leaving node's (ssOwn), those
// the new node of a surge took at its join (ssMoved), the others' (ssRest).
const (
	ssOwn = iota
	ssMoved
	ssRest
	ssClasses
)

// addByClass adds to by each key's loads since before, by its class.
func addByClass(by *[ssClasses]int64, class []int8, now, before []int32) {
	for id, cl := range class {
		by[cl] += int64(now[id] - before[id])
	}
}

// An ssRoll is what each step of a run does to its node.
type ssRoll int

const (
	ssSame     ssRoll = iota // the node leaves, drains, restarts empty at its address
	ssSurge                  // a new node at a new address joins, then the old one leaves and drains
	ssFresh                  // the node's group is replaced by a new one holding the same values: no value is lost, only the group's own state (its frequency sketch)
	ssSnapshot               // the node's group is replaced by a new one restored from its snapshot (Group.Snapshot, Group.Restore), in place
)

// inPlace reports whether the roll replaces each node where it is,
// without a change of the rings.
func (k ssRoll) inPlace() bool { return k == ssFresh || k == ssSnapshot }

// ssClassRing is a ring of addrs, used only to say who owns a key.
func ssClassRing(tb testing.TB, addrs []string) *picker.Peers {
	p, err := picker.NewPeers(addrs[0], func(a string) cache.Peer { return ssPeer{nil, a} },
		&picker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Set(addrs...); err != nil {
		tb.Fatal(err)
	}
	return p
}

// ssRun replays the sequence through a new cluster of 5 nodes: warm and
// steady, then each node in turn rolled as kind says (roll), or the same
// schedule without changes (the control). The out phase's split by key
// uses the same rings in both: in a surge's control, the ring the new node
// would have joined (its address is the one the roll gives it).
func ssRun(tb testing.TB, keys int, budget int64, kind ssRoll, roll bool) ssPhases {
	c := newSSCluster(tb, 5, budget, keys)
	r := rand.New(rand.NewPCG(1, 18))
	z := rand.NewZipf(r, 1.01, 1, uint64(keys-1))
	pick := rand.New(rand.NewPCG(2, 18))
	ctx := context.Background()
	total := func() (n int64) {
		for _, l := range c.loads {
			n += int64(l)
		}
		return n
	}
	gets := func(n int) {
		for range n {
			id := int(z.Uint64())
			node := c.nodes[c.live[pick.IntN(len(c.live))]]
			if _, err := node.group.Get(ctx, mbKey(id)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	gets(20 * ssRate) // warm-up and steady state
	base := total()
	var ph ssPhases
	order := slices.Clone(c.live)
	for step, addr := range order {
		old := c.nodes[addr]
		ph.held += old.group.Stats().Main.Items
		l0 := total()
		newAddr := fmt.Sprintf("node-%d", len(order)+step) // the surge's new node
		if roll && kind == ssSurge {
			n := c.start(tb, "")
			if n.addr != newAddr {
				tb.Fatalf("new node at %s, want %s", n.addr, newAddr)
			}
			c.setRings(tb, nil) // the others offer it its keys
			ph.joinTaken += n.group.Stats().TakenOver
		}
		if roll && kind == ssFresh {
			c.refresh(tb, old, keys)
		}
		if roll && kind == ssSnapshot {
			c.restore(tb, old)
		}
		gets(ssRate * 6 / 10) // the wait for readiness
		if roll && kind == ssSurge {
			c.live = append(c.live, newAddr)
		}
		l1 := total()
		var stay []*ssNode
		addrs := []string{}
		for _, a := range slices.Sorted(maps.Keys(c.nodes)) {
			if o := c.nodes[a]; !o.down {
				addrs = append(addrs, a)
				if o != old && o.addr == a {
					stay = append(stay, o)
				}
			}
		}
		if !roll && kind == ssSurge {
			addrs = append(addrs, newAddr)
		}
		before, after := ssClassRing(tb, addrs), ssClassRing(tb, slices.DeleteFunc(slices.Clone(addrs), func(a string) bool { return a == addr }))
		class := make([]int8, keys)
		for id := range class {
			switch k := mbKey(id); {
			case before.Owner(k) == addr:
				class[id] = ssOwn
			case kind == ssSurge && after.Owner(k) == newAddr:
				class[id] = ssMoved
			default:
				class[id] = ssRest
			}
		}
		var e0, t0 int64
		for _, o := range stay {
			e0 += o.group.Stats().Main.Evictions
			t0 += o.group.Stats().TakenOver
		}
		h0 := old.group.Stats().Offered
		loads0 := slices.Clone(c.loads)
		if roll && !kind.inPlace() {
			c.live = slices.DeleteFunc(c.live, func(a string) bool { return a == addr })
			c.setRings(tb, old)
			old.leaving = true
			c.offerKeys(old) // its drain's offer
			ph.outOffered += old.group.Stats().Offered - h0
			for _, o := range stay {
				ph.outTaken += o.group.Stats().TakenOver
			}
			ph.outTaken -= t0
		}
		gets(5 * ssRate) // the drain
		if roll && !kind.inPlace() {
			old.down = true
			if kind == ssSame {
				delete(c.nodes, addr)
				c.start(tb, addr)
				c.setRings(tb, nil) // back: the others offer it its keys
				c.live = append(c.live, addr)
			}
		}
		addByClass(&ph.outBy, class, c.loads, loads0)
		for _, o := range stay {
			ph.evicted += o.group.Stats().Main.Evictions
		}
		ph.evicted -= e0
		l2 := total()
		loads2 := slices.Clone(c.loads)
		gets(3 * ssRate) // the settle
		l3 := total()
		addByClass(&ph.backBy, class, c.loads, loads2)
		ph.join += l1 - l0
		ph.out += l2 - l1
		ph.back += l3 - l2
	}
	ph.total = total() - base
	gets(ssAfter * ssRate)
	ph.after = total() - base - ph.total
	return ph
}

// refresh replaces old's group by a new one at its address, in the same
// ring, holding the values old's main cache holds (found by a memory-only
// read of each key old owns; old is dropped after, so the uses those
// reads count do not matter), most popular first, as offers come.
func (c *ssCluster) refresh(tb testing.TB, old *ssNode, keys int) {
	ctx := context.Background()
	type kv struct {
		key string
		v   []byte
	}
	var held []kv
	for id := range keys {
		k := mbKey(id)
		if old.peers.Owner(k) != old.addr {
			continue
		}
		var r oneAnswer
		if err := old.reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpPeek, Group: mbGroup, Keys: []string{k}}, &r); err != nil {
			tb.Fatal(err)
		}
		if r.got && r.err == nil {
			held = append(held, kv{k, r.v.ByteSlice()})
		}
	}
	delete(c.nodes, old.addr)
	n := c.start(tb, old.addr)
	c.setRings(tb, nil)
	for _, e := range held { // the most popular first, as an offer's offers come
		if err := n.reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpSet, Group: mbGroup, Keys: []string{e.key}, Value: e.v}, &keyErr{}); err != nil {
			tb.Fatal(err)
		}
	}
}

// restore replaces old's group by a new one at its address, in the same
// ring, restored from old's snapshot: a restart in place.
func (c *ssCluster) restore(tb testing.TB, old *ssNode) {
	s, ok := any(old.group).(snapshotter)
	if !ok {
		tb.Skip("this tree's Group has no Snapshot")
	}
	var snap bytes.Buffer
	if _, err := s.Snapshot(context.Background(), &snap); err != nil {
		tb.Fatal(err)
	}
	delete(c.nodes, old.addr)
	n := c.start(tb, old.addr)
	c.setRings(tb, nil)
	if _, err := any(n.group).(snapshotter).Restore(context.Background(), &snap); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkRollSim reports, for each roll at 256 KiB, its extra loads
// per key held over the control's on the same sequence of Gets, in all
// and by phase (out-own, back-own: the leaving node's keys; out-moved,
// back-moved: those the new node of a surge took at its join; out-rest,
// back-rest: the others'). 256KiB-fresh
// is the floor of any roll whose nodes start anew: no value is lost or
// moved, only each group's frequency sketch starts without history;
// 256KiB-snapshot restarts each node in place from its snapshot.
// Run with -benchtime=1x.
func BenchmarkRollSim(b *testing.B) {
	for _, kind := range []ssRoll{ssSame, ssSurge, ssFresh, ssSnapshot} {
		name := [...]string{"256KiB", "256KiB-surge", "256KiB-fresh", "256KiB-snapshot"}[kind]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				ctl := ssRun(b, mbKeys, mbSmall, kind, false)
				res := ssRun(b, mbKeys, mbSmall, kind, true)
				h := float64(res.held)
				b.ReportMetric(float64(res.total-ctl.total)/h, "extra-loads/key")
				b.ReportMetric(float64(res.join-ctl.join)/h, "join-extra/key")
				b.ReportMetric(float64(res.out-ctl.out)/h, "out-extra/key")
				b.ReportMetric(float64(res.back-ctl.back)/h, "back-extra/key")
				for cl, name := range [ssClasses]string{"own", "moved", "rest"} {
					if cl == ssMoved && kind != ssSurge {
						continue
					}
					b.ReportMetric(float64(res.outBy[cl]-ctl.outBy[cl])/h, "out-"+name+"-extra/key")
					b.ReportMetric(float64(res.backBy[cl]-ctl.backBy[cl])/h, "back-"+name+"-extra/key")
				}
				if !kind.inPlace() {
					b.ReportMetric(float64(res.evicted)/h, "out-evicted/key")
					b.ReportMetric(float64(res.joinTaken)/h, "join-taken/key")
					b.ReportMetric(float64(res.outOffered)/h, "out-offered/key")
					b.ReportMetric(float64(res.outTaken)/h, "out-taken/key")
					b.ReportMetric(float64(ctl.evicted)/h, "control-out-evicted/key")
				}
				b.ReportMetric(float64(ctl.total)/float64(5*(ssRate*86/10)), "control-loads/get")
				b.ReportMetric(float64(ctl.after)/float64(ssAfter*ssRate), "control-after-loads/get")
				b.ReportMetric(float64(res.after)/float64(ssAfter*ssRate), "after-loads/get")
			}
		})
	}
}
