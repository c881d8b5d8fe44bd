// Package clocktest is a clock that tests move by hand, to inject as
// cache.GroupOptions.Now (or any func() time.Time) instead of sleeping.
package clocktest

import (
	"sync"
	"time"
)

// A Clock is a time that only Add moves. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock at t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
