package lru

// The expiry heap: a binary min-heap, by expiry, of the entries that have
// one, each knowing its index so that it can leave from anywhere. Used only
// under the cache's writer lock.

// heapIndex is e's index in the heap, or -1.
func (e *entry) heapIndex() int { return int(e.place>>1) - 1 }

func (e *entry) setHeapIndex(i int) { e.place = e.place&1 | int32(i+1)<<1 }

func (p *policy) heapPush(e *entry) {
	e.setHeapIndex(len(p.expiring))
	p.expiring = append(p.expiring, e)
	p.heapUp(e.heapIndex())
}

func (p *policy) heapRemove(e *entry) {
	i := e.heapIndex()
	last := len(p.expiring) - 1
	if i != last {
		p.heapSwap(i, last)
	}
	p.expiring[last] = nil
	p.expiring = p.expiring[:last]
	e.setHeapIndex(-1)
	if i != last {
		p.heapDown(i)
		p.heapUp(i)
	}
}

func (p *policy) heapSwap(i, j int) {
	h := p.expiring
	h[i], h[j] = h[j], h[i]
	h[i].setHeapIndex(i)
	h[j].setHeapIndex(j)
}

func (p *policy) heapUp(i int) {
	h := p.expiring
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].expires <= h[i].expires {
			return
		}
		p.heapSwap(i, parent)
		i = parent
	}
}

func (p *policy) heapDown(i int) {
	h := p.expiring
	for {
		least := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h) && h[c].expires < h[least].expires {
				least = c
			}
		}
		if least == i {
			return
		}
		p.heapSwap(i, least)
		i = least
	}
}
