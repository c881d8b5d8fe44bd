// Package upgradetest checks that the peer protocol of the current tree
// stays compatible with the previous release, as it must during a rolling
// upgrade, when nodes of both releases serve one cluster. It has no code of
// its own: its test is the whole package.
//
// TestRollingUpgrade checks out the previous release (previousRelease in
// upgrade_test.go) into a temporary git worktree, builds that release's
// three-node demo (examples/cluster) with the go command, and runs a mixed
// cluster on 127.0.0.1: two nodes of the previous release (the demo binary,
// one process each, asked through the demo's API) and two nodes of the
// current tree (in the test process, through nethttp.Listen and
// cache.Group), all with the group "scores", the demo's data, one peer list
// and one cluster secret. It runs the cluster twice: with the current
// nodes on HTTP/1.1, and with their multiplexed carriage on
// (PoolOptions.Multiplex), which the previous release's nodes take. In
// each it checks that every key of the demo's data, and missing keys, are
// answered right by every node; that a Set and a Remove from a current
// node, and a DELETE through the previous release's API, reach every
// node; and that each key, slow as the demo's source is, is loaded once in
// the whole cluster. Every wait is bounded by a context's deadline.
//
// The test skips, saying why, when git or the go command is not on PATH,
// when the tree is not a git checkout, or when the commit is not in the
// repository (a shallow clone: fetch the full history, for example with
// git fetch --unshallow). The first run builds the previous release from
// scratch; later runs take its packages from the build cache (the build
// uses -trimpath, so the temporary directory does not change the cache's
// keys).
//
// # Retargeting at a newer release
//
// When a release is made, set previousRelease in upgrade_test.go to its
// commit (a hash, not a branch name, so that the test stays reproducible)
// and read that commit's examples/cluster/main.go (git show
// COMMIT:examples/cluster/main.go): if the demo's flags, its API (GET and
// DELETE /api?key=K), its log line for a lookup in its source
// ("[SlowDB] search key" with key=K: lookupLine), its data (demoScores),
// its group or its cache size changed, change startOldNode, lookupLine and
// the constants to match. A change of the protocol adds its own checks to
// testMixedCluster, beside the ones there: a new request, header or frame
// is sent by the current nodes to the previous release's and the other
// way round, and both directions are asserted. The previous release's
// demo is only ever built and run, so the test keeps working once that
// release's code is gone from the tree.
package upgradetest
