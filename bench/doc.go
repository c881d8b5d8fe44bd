// Package bench measures GeeCache against its peers (golang/groupcache,
// otter, golang-lru, a bare map or net/http server). The comparisons that
// back a speed claim run every system in alternating blocks within one
// benchmark (package internal/fair), so that all see the same machine
// load, and report min and median ratios to a baseline over the rounds.
// It is a module of its own so that the library's go.mod does not require
// the peers.
//
// Everything but package fair and the regression guard (cmd/guard) lives
// in _test.go files; see README.md for what each benchmark measures, the
// command that runs it and how to run the guard, and ../docs/performance.md
// for the figures.
package bench
