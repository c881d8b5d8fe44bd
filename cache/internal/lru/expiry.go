package lru

// The expiry heap: a binary min-heap, by expiry, of the entries that have
// one, each knowing its index so that it can leave from anywhere. Used only
// under the cache's writer lock.

func (p *policy) heapPush(e *entry) {
	e.heapIndex = int32(len(p.expiring))
	p.expiring = append(p.expiring, e)
	p.heapUp(int(e.heapIndex))
}

func (p *policy) heapRemove(e *entry) {
	i := int(e.heapIndex)
	last := len(p.expiring) - 1
	if i != last {
		p.heapSwap(i, last)
	}
	p.expiring[last] = nil
	p.expiring = p.expiring[:last]
	e.heapIndex = -1
	if i != last {
		p.heapDown(i)
		p.heapUp(i)
	}
}

func (p *policy) heapSwap(i, j int) {
	h := p.expiring
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex, h[j].heapIndex = int32(i), int32(j)
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
