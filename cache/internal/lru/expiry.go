package lru

// The expiry heap: a binary min-heap, by expiry, of the nodes whose
// entries expire, each node knowing its index so that it can leave from
// anywhere. Used only under the cache's writer lock.

func (p *policy) expiresAt(h int) int64 { return p.nodes[p.expiring[h]].e.expires }

func (p *policy) heapPush(i int32) {
	p.nodes[i].heap = int32(len(p.expiring))
	p.expiring = append(p.expiring, i)
	p.heapUp(len(p.expiring) - 1)
}

func (p *policy) heapRemove(i int32) {
	h := int(p.nodes[i].heap)
	last := len(p.expiring) - 1
	if h != last {
		p.heapSwap(h, last)
	}
	p.expiring = p.expiring[:last]
	p.nodes[i].heap = -1
	if h != last {
		p.heapDown(h)
		p.heapUp(h)
	}
}

func (p *policy) heapSwap(a, b int) {
	h := p.expiring
	h[a], h[b] = h[b], h[a]
	p.nodes[h[a]].heap, p.nodes[h[b]].heap = int32(a), int32(b)
}

func (p *policy) heapUp(h int) {
	for h > 0 {
		parent := (h - 1) / 2
		if p.expiresAt(parent) <= p.expiresAt(h) {
			return
		}
		p.heapSwap(h, parent)
		h = parent
	}
}

func (p *policy) heapDown(h int) {
	for {
		least := h
		for _, c := range [2]int{2*h + 1, 2*h + 2} {
			if c < len(p.expiring) && p.expiresAt(c) < p.expiresAt(least) {
				least = c
			}
		}
		if least == h {
			return
		}
		p.heapSwap(h, least)
		h = least
	}
}
