package testkit_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/internal/testkit"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int64
	go func() {
		for range 5 {
			n.Add(1)
		}
	}()
	testkit.WaitFor(t, "five increments", func() bool { return n.Load() == 5 })
}

func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b testkit.Buffer
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { fmt.Fprintf(&b, "line %d\n", i) })
	}
	wg.Wait()
	if got := strings.Count(b.String(), "\n"); got != 50 {
		t.Fatalf("%d lines; want 50", got)
	}
}

func ExampleBuffer() {
	var b testkit.Buffer
	fmt.Fprint(&b, "hello")
	fmt.Println(b.String())
	// Output: hello
}
