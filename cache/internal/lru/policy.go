package lru

const (
	// maxUses is where an entry's use counter stops: a hot entry's cache
	// line is written at most this many times between two visits of the
	// policy, and the sketch learns up to this many uses per visit.
	maxUses = 3

	// windowPercent is the share of the bytes held by the window, the
	// queue every new entry joins before it must earn a place in the
	// main queue (W-TinyLFU's default of 1%).
	windowPercent = 1
)

// The policy decides which entry EvictOne removes, in the manner of
// W-TinyLFU:
//   - New entries join the tail of the window, a FIFO queue holding about
//     windowPercent of the bytes.
//   - When the window is full, its oldest entry is the candidate, and the
//     main queue's CLOCK names a victim: the hand walks from the head,
//     giving every entry used since it last passed a second chance (its
//     uses go into the sketch and it moves to the tail), and stops at the
//     first entry not used since. The one of the two that the sketch says
//     was used less often is evicted; a winning candidate joins the main
//     queue's tail. Ties evict the candidate, so that keys used once, as
//     in a scan, cannot push out keys used before.
//   - While the window has room, the victim goes without a duel.
//   - While the cache has room, nothing is evicted and the window grows
//     past its share; at the next eviction, what it holds beyond its share
//     joins the main queue (overflow), each entry weighed against the
//     hand's victim as a candidate would be: behind the hand if the sketch
//     says it is used more, else before it, the first the hand meets.
//   - Before all that, an entry whose expiry has passed goes first.
//
// So a new entry is never evicted before it has been through the window,
// and an entry that won its place in the main queue never before the hand
// has passed it once.
type policy struct {
	nodes        []node  // one per entry, found by entry.node
	free         []int32 // indexes of unused nodes
	window, main queue
	sketch       sketch
	expiring     []int32 // a min-heap by expiry of the nodes whose entries expire
	overhead     int64   // charged per entry on top of key and value
}

// A node is an entry's place in the policy. Nodes live apart from the
// entries, in a slice, so that an entry stays within one 64-byte size
// class, which is all a Get reads.
type node struct {
	e          *entry
	prev, next int32 // neighbours in its queue; -1 at the ends
	heap       int32 // index in the expiry heap; -1 if not there
	window     bool  // in the window, else in the main queue
}

// A queue is a doubly linked list of nodes, with the bytes it holds.
type queue struct {
	head, tail int32 // -1 when empty
	n          int
	bytes      int64
}

// init readies p for a cache that charges overhead bytes per entry.
func (p *policy) init(overhead int64) {
	p.overhead = overhead
	p.window = queue{head: -1, tail: -1}
	p.main = queue{head: -1, tail: -1}
	p.sketch.resize(0)
}

func (p *policy) charge(e *entry) int64 { return int64(len(e.key)+e.size) + p.overhead }

// added takes a new entry; items is the number of entries now held.
func (p *policy) added(e *entry, items int64) {
	if int(items) > p.sketch.capacity {
		p.sketch.grow(p.heldHashes())
	}
	p.sketch.add(e.hash, 1)
	var i int32
	if n := len(p.free); n > 0 {
		i, p.free = p.free[n-1], p.free[:n-1]
	} else {
		i = int32(len(p.nodes))
		p.nodes = append(p.nodes, node{})
	}
	p.nodes[i] = node{e: e, heap: -1}
	e.node = i
	p.pushBack(&p.window, i)
	if e.expires != 0 {
		p.heapPush(i)
	}
}

// heldHashes returns the hash of each entry held: read once, so that
// the sketch's grow, which walks them once per row, does not go through
// every entry each time.
func (p *policy) heldHashes() []uint64 {
	hashes := make([]uint64, 0, len(p.nodes)-len(p.free))
	for _, n := range p.nodes {
		if n.e != nil {
			hashes = append(hashes, n.e.hash)
		}
	}
	return hashes
}

// removed forgets e.
func (p *policy) removed(e *entry) {
	i := e.node
	p.unlink(p.queueOf(i), i)
	if p.nodes[i].heap >= 0 {
		p.heapRemove(i)
	}
	p.nodes[i] = node{}
	p.free = append(p.free, i)
}

// replace puts ne, a new value for old's key, in old's place.
func (p *policy) replace(old, ne *entry) {
	i := old.node
	ne.node = i
	q := p.queueOf(i)
	q.bytes += p.charge(ne) - p.charge(old)
	p.nodes[i].e = ne
	if p.nodes[i].heap >= 0 {
		p.heapRemove(i)
	}
	if ne.expires != 0 {
		p.heapPush(i)
	}
}

func (p *policy) queueOf(i int32) *queue {
	if p.nodes[i].window {
		return &p.window
	}
	return &p.main
}

// victim returns the entry to evict, or nil if there is none. total is the
// bytes held; now is the current time for expiry, or 0.
func (p *policy) victim(now, total int64) *entry {
	if e := p.expired(now); e != nil {
		return e
	}
	p.overflow(total)
	v := p.mainVictim()
	cand := p.window.head
	switch {
	case cand < 0 && v < 0:
		return nil
	case cand < 0:
		return p.nodes[v].e
	case v < 0:
		return p.nodes[cand].e
	case (p.window.bytes+p.charge(p.nodes[cand].e))*100 <= total*windowPercent:
		return p.nodes[v].e // the window has room for one more
	}
	ce, ve := p.nodes[cand].e, p.nodes[v].e
	p.foldUses(ce)
	if p.sketch.estimate(ce.hash) > p.sketch.estimate(ve.hash) {
		p.unlink(&p.window, cand)
		p.pushBack(&p.main, cand)
		return ve
	}
	return ce
}

// overflow moves to the main queue what the window holds beyond its share
// of total bytes, its oldest entries, with their uses, which the hand
// counts when it passes: the window grows past its share while the cache
// has room and nothing is evicted. Those entries came in without a duel, so
// each gets it now, against the hand's victim: one the sketch says is used
// more (its uses since it came included) joins the tail, behind the hand,
// as a winning candidate does; the others join the head, the newest first,
// so that the hand meets them before any entry that earned its place.
//   - A full cache that gains room (its keys moved to a node that joined)
//     fills it with keys loaded once. At the tail, those outlasted the
//     cache's used keys, and the keys it took over next lost their duels
//     against the used ones (bench/README.md, "What came in without a
//     duel"). All at the head, they took with them the keys that came back
//     after they expired, which the sketch knows (TestExpiringKeysHitRatio).
//   - A cache that fills from empty has no victim: all go to the head,
//     newest first. After an offer it holds the keys it took in the order
//     they came, the most used first (offers rank them so); in arrival order,
//     the hand met its most popular keys first, and took those not asked
//     since they came whenever it evicted without a duel ("The hand's first
//     pass").
func (p *policy) overflow(total int64) {
	bytes, n, kept := p.window.bytes, p.window.n, p.window.head
	for n > 1 && bytes*100 > total*windowPercent {
		bytes -= p.charge(p.nodes[kept].e)
		n--
		kept = p.nodes[kept].next
	}
	if p.window.head == kept {
		return
	}
	v := p.mainVictim()
	var bar uint64
	if v >= 0 {
		bar = p.sketch.estimate(p.nodes[v].e.hash)
	}
	for i := p.window.head; i != kept; {
		next := p.nodes[i].next
		p.unlink(&p.window, i)
		if e := p.nodes[i].e; v >= 0 && p.sketch.estimate(e.hash)+uint64(e.uses.Load()) > bar {
			p.pushBack(&p.main, i)
		} else {
			p.pushFront(&p.main, i)
		}
		i = next
	}
}

// pushFront prepends node i to q.
func (p *policy) pushFront(q *queue, i int32) {
	n := &p.nodes[i]
	n.prev, n.next, n.window = -1, q.head, q == &p.window
	if q.head < 0 {
		q.tail = i
	} else {
		p.nodes[q.head].prev = i
	}
	q.head = i
	q.n++
	q.bytes += p.charge(n.e)
}

// expired returns the entry that expired first if it expired at or before
// now, else nil (always nil for a now of 0).
func (p *policy) expired(now int64) *entry {
	if len(p.expiring) > 0 && now != 0 {
		if e := p.nodes[p.expiring[0]].e; e.expires <= now {
			return e
		}
	}
	return nil
}

// mainVictim runs the main queue's clock hand to the first entry not used
// since the hand last passed it, and returns its node, or -1 if the queue
// is empty.
func (p *policy) mainVictim() int32 {
	for range p.main.n {
		i := p.main.head
		e := p.nodes[i].e
		if e.uses.Load() == 0 {
			return i
		}
		p.foldUses(e)
		p.unlink(&p.main, i)
		p.pushBack(&p.main, i)
	}
	// Gets used every entry again while the hand went round: take the
	// oldest, so that the owner's budget holds.
	return p.main.head
}

// foldUses moves e's uses into the sketch.
func (p *policy) foldUses(e *entry) {
	if u := e.uses.Load(); u > 0 {
		e.uses.Store(0)
		p.sketch.add(e.hash, u)
	}
}

// pushBack appends node i to q.
func (p *policy) pushBack(q *queue, i int32) {
	n := &p.nodes[i]
	n.prev, n.next, n.window = q.tail, -1, q == &p.window
	if q.tail < 0 {
		q.head = i
	} else {
		p.nodes[q.tail].next = i
	}
	q.tail = i
	q.n++
	q.bytes += p.charge(n.e)
}

// unlink takes node i out of q.
func (p *policy) unlink(q *queue, i int32) {
	n := &p.nodes[i]
	if n.prev < 0 {
		q.head = n.next
	} else {
		p.nodes[n.prev].next = n.next
	}
	if n.next < 0 {
		q.tail = n.prev
	} else {
		p.nodes[n.next].prev = n.prev
	}
	n.prev, n.next = -1, -1
	q.n--
	q.bytes -= p.charge(n.e)
}
