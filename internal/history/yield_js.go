//go:build js

package history

import "time"

// yield lets the JavaScript host's event loop run between a reader's
// operations. Under GOOS=js the Go runtime returns to the event loop only
// when every goroutine waits: readers answered from memory never do, so
// without it the timer that ends the run could not fire (the readers ran
// to MaxOps, recording millions of operations) and writers, whose peers
// answer through the event loop (fetch), could not go on. A sleep parks
// the reader; once all do, the event loop runs.
func yield() { time.Sleep(time.Millisecond) }
