//go:build !js && !race

package nethttp

// raceEnabled: see race_test.go.
const raceEnabled = false
