package lru

// EntryOverhead is the memory, in bytes, that the cache takes per entry
// beyond the bytes of the entry's key and value: the entry record (64
// bytes), its node in the eviction policy (24 bytes, in a slice that grows
// by doubling), its share of the hash table's slots (which run between a
// quarter and three quarters full) and of the frequency sketch, and, for
// an entry that expires, its place in the expiry heap.
//
// TestEntryOverhead measures it with runtime.MemStats (HeapAlloc after a
// GC, before and after adding n entries whose keys and values were
// allocated beforehand): 109 to 122 bytes per entry from 3,000 to 1,000,000
// entries on linux/amd64 with go1.26, and 119 to 127 for entries that
// expire. The constant rounds the upper end up with some margin, so that a
// budget that counts it holds the process's memory for the cache at or
// below the budget. It does not cover the rounding of a value's allocation
// up to the allocator's size classes.
const EntryOverhead = 136
