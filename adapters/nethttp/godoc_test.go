package nethttp_test

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// goDoc runs "go doc" on this package with args and returns its output;
// it skips the test where there is no go command to run.
func goDoc(t *testing.T, args ...string) string {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no processes under", runtime.GOOS)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(goCmd, append([]string{"doc", "."}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go doc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Every method of a Pool and of a Server is the type's own, so that go doc
// lists it under the type and finds its doc: none is promoted from an
// embedded field, which go doc does not show.
func TestGoDocShowsEveryMethod(t *testing.T) {
	pool := goDoc(t, "Pool")
	for _, m := range []string{
		"func (p *Pool) Set(addrs ...string) error",
		"func (p *Pool) Owner(key string) string",
		"func (p *Pool) Self() string",
		"func (p *Pool) Addrs() []string",
		"func (p *Pool) ListPeers() []cache.Peer",
		"func (p *Pool) PickFallback(",
		"func (p *Pool) PickPeer(key string) (cache.Peer, bool)",
		"func (p *Pool) Drain(ctx context.Context) error",
		"func (p *Pool) Close() error",
	} {
		if !strings.Contains(pool, m) {
			t.Errorf("go doc Pool does not list %q:\n%s", m, pool)
		}
	}
	if set := goDoc(t, "Pool.Set"); !strings.Contains(set, "Set replaces the peer list") {
		t.Errorf("go doc Pool.Set shows no doc:\n%s", set)
	}
	srv := goDoc(t, "Server")
	for _, m := range []string{"func (s *Server) Close() error", "func (s *Server) Shutdown(ctx context.Context) error"} {
		if !strings.Contains(srv, m) {
			t.Errorf("go doc Server does not list %q:\n%s", m, srv)
		}
	}
}

// A Pool is what a group needs of its peer set: a PeerPicker, a PeerLister
// (a group's writes reach every peer) and PickFallback (its failover and
// handoff; the interface the group looks for is unexported).
var (
	_ cache.PeerPicker = (*nethttp.Pool)(nil)
	_ cache.PeerLister = (*nethttp.Pool)(nil)
	_ interface {
		PickFallback(key string, skip func(cache.Peer) bool) (next, previous cache.Peer, changed time.Time)
	} = (*nethttp.Pool)(nil)
)
