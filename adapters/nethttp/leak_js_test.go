//go:build js && wasm

package nethttp

import "go.uber.org/goleak"

// leakOptions ignores the goroutine the js/wasm runtime keeps for the
// callbacks of JavaScript promises (runtime.handleEvent).
func leakOptions() []goleak.Option {
	return []goleak.Option{goleak.IgnoreAnyFunction("runtime.handleEvent")}
}
