//go:build !js

package history

// yield does nothing outside GOOS=js: readers and writers share the
// machine's threads (see yield_js.go).
func yield() {}
