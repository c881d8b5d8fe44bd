// Package testkit holds the few helpers that the tests of several packages
// of this module share, so that each is written once: a bounded wait for a
// condition, and a buffer a logger or a child process may write to from
// several goroutines.
package testkit

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// WaitFor polls cond every millisecond for up to 10 s and fails t if it
// never holds: a bound on a wait, not an assertion on how long it took.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A Buffer is a bytes.Buffer that is safe for concurrent writes and reads.
// The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
