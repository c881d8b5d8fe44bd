//go:build !js && race

package nethttp

// raceEnabled: under the race detector sync.Pool drops items at random, so
// allocation figures are not asserted.
const raceEnabled = true
