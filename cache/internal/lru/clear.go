package lru

// Clear drops every entry at once, in time independent of how many there
// are: each shard gets a new, empty table and the policy starts afresh, so
// the old entries are garbage as soon as no reader walks the old tables.
// Readers that started before it may still see the old entries; a Get that
// starts after it returns finds none. Hits and evictions are kept.
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.shards {
		s := &c.shards[i]
		s.table.Store(newTable(minSlots))
		s.live, s.used = 0, 0
	}
	c.policy = policy{}
	c.policy.init(c.overhead)
	c.bytes.Store(0)
	c.items.Store(0)
}
