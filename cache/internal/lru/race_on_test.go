//go:build race

package lru

// raceEnabled: the race detector makes big tests slow, so they run smaller.
const raceEnabled = true
