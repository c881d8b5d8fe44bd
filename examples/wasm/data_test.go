//go:build !js && !wasip1

package main

import (
	"errors"
	"maps"
	"testing"

	"github.com/geecache/geecache/examples/internal/hosttest"
	"github.com/geecache/geecache/getter"
)

// The example keeps its data in data.go, so that it can be copied out of
// the repository alone; the tests' native nodes (hosttest) must serve the
// same: the same groups, scores, generated keys and echo.
func TestDataMatchesHosttest(t *testing.T) {
	if groupName != hosttest.Scores || echoGroup != hosttest.Echo || cacheBytes != hosttest.CacheBytes || numKeys != hosttest.NumKeys {
		t.Errorf("groups %q %q of %d bytes, %d keys; hosttest has %q %q, %d, %d",
			groupName, echoGroup, cacheBytes, numKeys, hosttest.Scores, hosttest.Echo, hosttest.CacheBytes, hosttest.NumKeys)
	}
	if !maps.Equal(dataset(), hosttest.Dataset()) {
		t.Error("dataset() differs from hosttest.Dataset()")
	}
	for i := range numKeys {
		if genKey(i) != hosttest.Key(i) {
			t.Fatalf("genKey(%d) = %q; hosttest.Key = %q", i, genKey(i), hosttest.Key(i))
		}
	}
	for _, k := range []string{"..", "a b", hosttest.EchoMissing} {
		v, err := echoLoad(t.Context(), k)
		hv, herr := hosttest.EchoLoad(t.Context(), k)
		if string(v) != string(hv) || errors.Is(err, getter.ErrNotFound) != errors.Is(herr, getter.ErrNotFound) {
			t.Errorf("echo of %q: %q, %v; hosttest: %q, %v", k, v, err, hv, herr)
		}
	}
}
