//go:build js && wasm

package nethttp

import "github.com/geecache/geecache/adapters/internal/hostserve"

// poolNet is a Pool's side of the JavaScript host: the handler that
// package wasmjs answers the host's requests with (hostserve.Of finds it),
// since there is no net/http to serve with here. Its clients send with
// fetch(), which keeps its own connections.
type poolNet struct{ hostServer }

// hostServer is embedded under this name so that it adds nothing to the
// exported surface of Pool.
type hostServer = hostserve.Server

// multiplex does nothing: the carriage needs sockets, and PoolOptions
// has no Multiplex field under GOOS=js.
func (o *PoolOptions) multiplex(*clientConfig) error { return nil }

func newPoolNet(_ clientConfig, _ *PoolOptions, h *handler) poolNet {
	return poolNet{hostserve.NewServer(h)}
}

func (*poolNet) closeConns() {}
func (*poolNet) leaveConns() {}
