//go:build !js

package nethttp

import (
	"net/http"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
)

// poolNet is a Pool's side of net/http: the transport its clients share
// and the server of the multiplexed connections its peers open.
type poolNet struct {
	rt  http.RoundTripper // shared by the pool's clients
	mux *mux.Server       // takes the multiplexed connections over
}

// multiplex has cc's clients send over the multiplexed carriage, if o
// asks for it.
func (o *PoolOptions) multiplex(cc *clientConfig) error {
	if !o.Multiplex {
		return nil
	}
	rt, err := mux.NewTransport(cc.rt, cc.base, cc.proto.MaxValueBytes(), cc.timeout)
	if err != nil {
		return err
	}
	cc.rt = rt
	return nil
}

func newPoolNet(cc clientConfig, o *PoolOptions, h *handler) poolNet {
	return poolNet{rt: cc.rt, mux: mux.NewServer(mux.ServerConfig{
		Handler: h, BasePath: o.Cluster.BasePath, MaxValue: h.srv.MaxValueBytes(), Logger: o.Logger,
		ReadTimeout: serverReadTimeout, WriteTimeout: serverWriteTimeout, IdleTimeout: serverIdleTimeout,
	})}
}

// closeConns closes the idle connections to the peers and, once their
// requests are answered, the multiplexed ones.
func (n *poolNet) closeConns() {
	peerhttp.CloseIdle(n.rt)
	n.mux.StopAll()
}

// leaveConns is the end of the drain: it closes the idle connections to
// the peers, has the multiplexed ones the peers opened go away, and takes
// no new one (mux.Server.Leave).
func (n *poolNet) leaveConns() {
	peerhttp.CloseIdle(n.rt)
	n.mux.Leave()
}

// ServeHTTP serves the node's peers: it answers a protocol request for a
// group of the Pool's registry. The path is taken in its escaped form, so
// a key containing "/" (sent as "%2F") is one key; the base path, if any,
// is removed first. Mount the Pool at the root, under its BasePath, or
// behind http.StripPrefix.
//
// It also takes over the upgrades to the multiplexed connection that a
// peer with PoolOptions.Multiplex asks for, and serves the requests sent
// over it as it serves them over HTTP. Builds for GOOS=wasip1 (no
// sockets) leave the carriage out: there an upgrade is answered as a plain
// request, as by a node that does not know the carriage. Builds for
// GOOS=js have no ServeHTTP: the host serves the Pool through package
// adapters/wasmjs, on the same handler.
func (p *Pool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.mux.Serve(w, r) {
		return
	}
	p.handler.ServeHTTP(w, r)
}
