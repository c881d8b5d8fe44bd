//go:build !race

package nethttp

// raceEnabled: see race_test.go.
const raceEnabled = false
