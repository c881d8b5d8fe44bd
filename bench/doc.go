// Package bench measures GeeCache against its peers (golang/groupcache,
// otter, golang-lru, a bare map or net/http server) side by side in one
// `go test -bench` run, so that the numbers compare within one run on one
// machine. It is a module of its own so that the library's go.mod does not
// require the peers.
//
// Everything lives in _test.go files; see README.md for what each
// benchmark measures and the command that reproduces the table.
package bench
