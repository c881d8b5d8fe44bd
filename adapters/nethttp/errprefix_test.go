//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// onePrefix fails the test unless err's text starts with "geecache: " and
// has it once only.
func onePrefix(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if s := err.Error(); !strings.HasPrefix(s, "geecache: ") || strings.Count(s, "geecache: ") != 1 {
		t.Errorf("%s: %q; want one \"geecache: \" prefix", what, s)
	}
}

// Every error of a Client starts with "geecache: " once, as the README
// promises of every error, and so does the error a Group returns with the
// Client's inside it.
func TestClientErrorsHaveOnePrefix(t *testing.T) {
	ctx := context.Background()
	nodes, _, _ := startCluster(t, 2, nethttp.PoolOptions{})
	var key string // a missing key nodes[1] owns
	for i := 0; key == "" && i < 1000; i++ {
		if k := "missing" + strconv.Itoa(i); nodes[0].Owner(k) == nodes[1] {
			key = k
		}
	}
	if key == "" {
		t.Fatal("no missing key owned by nodes[1]")
	}
	c := nethttp.MustClient(t, nodes[1].Addr, nil)
	defer c.CloseIdleConnections()

	_, _, err := nethttp.PeerGet(ctx, c, "scores", key)
	if !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(%s) err = %v; want ErrNotFound", key, err)
	}
	onePrefix(t, "Client.Get of a missing key", err)
	_, _, err = nethttp.PeerGet(ctx, c, "nosuchgroup", "Tom")
	onePrefix(t, "Client.Get of an unknown group", err)
	onePrefix(t, "Client.Remove, unsigned", nethttp.PeerRemove(ctx, c, "scores", "Tom"))
	onePrefix(t, "Client.Set, unsigned", nethttp.PeerSet(ctx, c, "scores", "Tom", []byte("1"), 0))

	// A peer that cannot be reached: a port nobody listens on any more.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	_ = ln.Close()
	_, _, err = nethttp.PeerGet(ctx, nethttp.MustClient(t, gone, nil), "scores", "Tom")
	onePrefix(t, "Client.Get of an unreachable peer", err)

	// Through a Group: the Group's error wraps the Client's.
	_, err = nodes[0].Group.Get(ctx, key)
	if !errors.Is(err, getter.ErrNotFound) || !strings.Contains(err.Error(), "peer "+nodes[1].Addr) {
		t.Fatalf("Group.Get(%s) err = %v; want ErrNotFound from the peer", key, err)
	}
	onePrefix(t, "Group.Get of a missing key owned by a peer", err)
	// The peers refuse unsigned writes: the UpdateError lists the Client's error.
	err = nodes[0].Group.Remove(ctx, key)
	if err == nil || !strings.Contains(err.Error(), nodes[1].Addr) {
		t.Fatalf("Group.Remove err = %v; want the peer's refusal", err)
	}
	onePrefix(t, "Group.Remove refused by a peer", err)
}

// A drain cut short by its context says so with the prefix, and still
// matches the context's error.
func TestDrainCutShortHasThePrefix(t *testing.T) {
	p, err := nethttp.NewPool("http://127.0.0.1:1", cache.NewRegistry(), &nethttp.PoolOptions{DrainFor: time.Hour,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = p.Drain(ctx)
	onePrefix(t, "Drain with a cancelled context", err)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Drain = %v; want it to wrap context.Canceled", err)
	}
}
