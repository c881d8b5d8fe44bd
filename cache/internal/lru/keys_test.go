package lru

import (
	"fmt"
	"slices"
	"testing"
)

// Keys lists the keys held, the most used first, up to its max and
// filtered by keep; removed and evicted keys are not listed.
func TestKeysMostUsedFirst(t *testing.T) {
	c := New(false)
	if got := c.Keys(10, nil); len(got) != 0 {
		t.Fatalf("Keys of an empty cache = %q", got)
	}
	for i := range 20 {
		c.Add(fmt.Sprint("k", i), []byte("v"), 0)
	}
	for range 3 {
		c.Get("k7")
	}
	c.Credit("k3", 10)
	c.Credit("k12", 5)
	c.Remove("k5")
	got := c.Keys(3, nil)
	if want := []string{"k3", "k12", "k7"}; !slices.Equal(got, want) {
		t.Errorf("Keys(3) = %q; want %q", got, want)
	}
	all := c.Keys(100, nil)
	if len(all) != 19 || slices.Contains(all, "k5") {
		t.Errorf("Keys(100) = %d keys (%q); want the 19 held", len(all), all)
	}
	even := c.Keys(100, func(k string) bool { return k[len(k)-1]%2 == 0 })
	if len(even) != 10 || even[0] != "k12" {
		t.Errorf("Keys with a filter = %q; want the 10 even ones, k12 first", even)
	}
}
