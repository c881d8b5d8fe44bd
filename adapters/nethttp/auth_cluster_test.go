//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
)

func TestAuthOverHTTP(t *testing.T) {
	var src loads
	nodes := nethttptest.Start(t, 1, &nethttptest.Options{Getter: src.getter,
		PoolOptions: nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte("cluster secret")}}})
	n := nodes[0]
	ctx := context.Background()

	// Signed by a Client with the secret: 200.
	good := nethttp.MustClient(t, n.Addr, &nethttp.ClientOptions{Secret: []byte("cluster secret")})
	defer good.CloseIdleConnections()
	if v, _, err := nethttp.PeerGet(ctx, good, "scores", "Tom"); err != nil || string(v) != "v:Tom" {
		t.Fatalf("signed Get = %q, %v", v, err)
	}

	// Unsigned: 401, as a raw request and through a Client.
	req, _ := http.NewRequest("GET", n.Addr+protocol.Path("scores", "Sam"), nil)
	if st, body := nethttp.RawGet(t, req); st != http.StatusUnauthorized {
		t.Fatalf("unsigned raw request: %d %q; want 401", st, body)
	}
	for name, c := range map[string]*nethttp.Client{
		"unsigned":     nethttp.MustClient(t, n.Addr, nil),
		"wrong secret": nethttp.MustClient(t, n.Addr, &nethttp.ClientOptions{Secret: []byte("guess")}),
	} {
		_, _, err := nethttp.PeerGet(ctx, c, "scores", "Sam")
		c.CloseIdleConnections()
		if !errors.Is(err, protocol.ErrUnauthorized) {
			t.Errorf("%s: err = %v; want ErrUnauthorized", name, err)
		}
	}

	// Tampered: a valid signature for Tom replayed on another path.
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: []byte("cluster secret")})
	if err != nil {
		t.Fatal(err)
	}
	signed := pc.NewRequest(t.Context(), n.Addr, "scores", "Tom", false)
	req, _ = http.NewRequest("GET", n.Addr+protocol.Path("scores", "Sam"), nil)
	req.Header = signed.Header
	if st, body := nethttp.RawGet(t, req); st != http.StatusUnauthorized {
		t.Fatalf("tampered request: %d %q; want 401", st, body)
	}
	// The same signature on its own path is fine.
	req, _ = http.NewRequest("GET", n.Addr+signed.Path, nil)
	req.Header = signed.Header
	if st, body := nethttp.RawGet(t, req); st != http.StatusOK || body != "v:Tom" {
		t.Fatalf("signed raw request: %d %q; want 200 v:Tom", st, body)
	}
	if c := src.count(0, "Sam"); c != 0 {
		t.Fatalf("rejected requests loaded Sam %d times", c)
	}
}

// A request signed for one node is rejected by another: the signature
// covers the target's base URL, which each node knows as its Self.
func TestSignatureBoundToTheTargetNode(t *testing.T) {
	secret := []byte("cluster secret")
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret}}})
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range nodes {
		for _, signedFor := range nodes {
			preq := pc.NewRequest(t.Context(), signedFor.Addr, "scores", "Tom", false)
			req, _ := http.NewRequest("GET", to.Addr+preq.Path, nil)
			req.Header = preq.Header
			st, body := nethttp.RawGet(t, req)
			if want := map[bool]int{true: 200, false: 401}[to == signedFor]; st != want {
				t.Errorf("signed for %s, sent to %s: %d %q; want %d", signedFor.Addr, to.Addr, st, body, want)
			}
		}
	}
}
