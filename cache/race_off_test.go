//go:build !race

package cache_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
