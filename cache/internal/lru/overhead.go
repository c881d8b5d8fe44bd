package lru

// EntryOverhead is the memory an entry takes beyond the bytes of its key
// and value: the entry record, its share of the hash table's slots and of
// the frequency sketch. TestEntryOverhead measures it.
const EntryOverhead = 128
