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
//   - Before all that, an entry whose expiry has passed goes first.
//
// So a new entry is never evicted before it has been through the window,
// and an entry in the main queue never before the hand has passed it once.
type policy struct {
	window, main queue
	sketch       sketch
	expiring     []*entry // a min-heap by expiry of the entries that expire
}

// init readies p for a cache that charges overhead bytes per entry.
func (p *policy) init(overhead int64) {
	p.window.overhead, p.window.isWindow = overhead, true
	p.main.overhead = overhead
	p.sketch.resize(0)
}

// added takes a new entry; items is the number of entries now held.
func (p *policy) added(e *entry, items int64) {
	if int(items) > p.sketch.capacity {
		p.sketch.grow()
	}
	p.sketch.add(e.hash, 1)
	p.window.pushBack(e)
	if e.expires != 0 {
		p.heapPush(e)
	}
}

// removed forgets e.
func (p *policy) removed(e *entry) {
	p.queueOf(e).remove(e)
	if e.heapIndex() >= 0 {
		p.heapRemove(e)
	}
}

// replace puts ne, a new value for old's key, in old's place.
func (p *policy) replace(old, ne *entry) {
	p.queueOf(old).replace(old, ne)
	if old.heapIndex() >= 0 {
		p.heapRemove(old)
	}
	if ne.expires != 0 {
		p.heapPush(ne)
	}
}

func (p *policy) queueOf(e *entry) *queue {
	if e.place&1 != 0 {
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
	// While the cache filled up, nothing was evicted and the window grew
	// past its share: what it holds beyond that joins the main queue,
	// with its uses, which the hand counts when it passes.
	for p.window.n > 1 && p.window.bytes*100 > total*windowPercent {
		e := p.window.head
		p.window.remove(e)
		p.main.pushBack(e)
	}
	v := p.mainVictim()
	cand := p.window.head
	switch {
	case cand == nil:
		return v
	case v == nil:
		return cand
	case (p.window.bytes+cand.charge(p.window.overhead))*100 <= total*windowPercent:
		return v // the window has room for one more
	}
	p.foldUses(cand)
	if p.sketch.estimate(cand.hash) > p.sketch.estimate(v.hash) {
		p.window.remove(cand)
		p.main.pushBack(cand)
		return v
	}
	return cand
}

// expired returns the entry that expired first if it expired at or before
// now, else nil (always nil for a now of 0).
func (p *policy) expired(now int64) *entry {
	if len(p.expiring) > 0 && now != 0 && p.expiring[0].expires <= now {
		return p.expiring[0]
	}
	return nil
}

// mainVictim runs the main queue's clock hand to the first entry not used
// since the hand last passed it, or nil if the queue is empty.
func (p *policy) mainVictim() *entry {
	for range p.main.n {
		e := p.main.head
		if e.uses.Load() == 0 {
			return e
		}
		p.foldUses(e)
		p.main.remove(e)
		p.main.pushBack(e)
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

// A queue is a doubly linked list of entries threaded through their prev
// and next fields, with the bytes it holds.
type queue struct {
	head, tail *entry
	n          int
	bytes      int64
	overhead   int64 // charged per entry on top of key and value
	isWindow   bool  // marks its entries as in the window
}

// mark records in e whether it is in the window.
func (q *queue) mark(e *entry, in bool) {
	e.place &^= 1
	if in && q.isWindow {
		e.place |= 1
	}
}

func (q *queue) pushBack(e *entry) {
	q.mark(e, true)
	e.prev, e.next = q.tail, nil
	if q.tail == nil {
		q.head = e
	} else {
		q.tail.next = e
	}
	q.tail = e
	q.n++
	q.bytes += e.charge(q.overhead)
}

func (q *queue) remove(e *entry) {
	if e.prev == nil {
		q.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		q.tail = e.prev
	} else {
		e.next.prev = e.prev
	}
	e.prev, e.next = nil, nil
	q.mark(e, false)
	q.n--
	q.bytes -= e.charge(q.overhead)
}

// replace puts ne where old is.
func (q *queue) replace(old, ne *entry) {
	ne.prev, ne.next = old.prev, old.next
	q.mark(ne, true)
	if old.prev == nil {
		q.head = ne
	} else {
		old.prev.next = ne
	}
	if old.next == nil {
		q.tail = ne
	} else {
		old.next.prev = ne
	}
	old.prev, old.next = nil, nil
	q.mark(old, false)
	q.bytes += ne.charge(q.overhead) - old.charge(q.overhead)
}
