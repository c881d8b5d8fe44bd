package lru_test

import (
	"fmt"

	"github.com/geecache/geecache/cache/internal/lru"
)

// The owner of a Cache keeps it within a budget by evicting before it adds.
func Example() {
	c := lru.New(false)
	const budget = 10
	add := func(key, value string) {
		for c.Bytes()+c.Charge(key, []byte(value)) > budget && c.EvictOne(0) {
		}
		c.Add(key, []byte(value), 0)
	}
	add("a", "1111")
	add("b", "2222")
	c.Get("a") // a is used again: b goes first
	add("c", "3333")
	_, _, hasA := c.Peek("a")
	_, _, hasB := c.Peek("b")
	fmt.Println(hasA, hasB, c.Bytes(), c.Evictions())
	// Output: true false 10 1
}
