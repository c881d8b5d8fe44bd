package lru

import (
	"strconv"
	"testing"
)

// Clear empties the cache: no entry is found, the counts are zero, and
// the cache takes new entries (and evicts them) as a new one would.
func TestClear(t *testing.T) {
	c := New(true)
	for i := range 1000 {
		c.Add("k"+strconv.Itoa(i), []byte("v"), 0)
	}
	c.Clear()
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Fatalf("after Clear: %d entries, %d bytes; want 0, 0", c.Len(), c.Bytes())
	}
	if _, _, ok := c.Get("k1"); ok {
		t.Fatal("k1 is still found after Clear")
	}
	c.Add("k1", []byte("new"), 0)
	if v, _, ok := c.Get("k1"); !ok || string(v) != "new" {
		t.Fatalf("Get(k1) after Clear and Add = %q, %v", v, ok)
	}
	if c.Len() != 1 || c.Bytes() != c.Charge("k1", []byte("new")) {
		t.Fatalf("after Add: %d entries, %d bytes", c.Len(), c.Bytes())
	}
	if !c.EvictOne(0) || c.Len() != 0 || c.Bytes() != 0 {
		t.Fatalf("EvictOne after Clear: %d entries, %d bytes left", c.Len(), c.Bytes())
	}
	if _, _, ok := c.Get("k999"); ok {
		t.Fatal("an old key came back")
	}
}
