//go:build !wasip1 && !js

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// guestName is the guest's name on the ring.
const guestName = "wasip1-guest"

// demo is the guest node in wazero and its peer, a net/http node on a
// 127.0.0.1 port the OS picks.
type demo struct {
	peerURL string
	db      *slowDB // the peer's slow database
	node    *nethttp.Node
	client  *nethttp.Client // the guest's way to the peer
	ring    *picker.Peers
	guest   *guest
	runtime wazero.Runtime
	fetches atomic.Int64 // calls of the guest's fetch import that reached the peer
}

func startDemo(ctx context.Context, wasm []byte) (*demo, error) {
	// The peer: a net/http node that loads every key itself (it cannot
	// reach the guest: a wasip1 module does not serve).
	reg := cache.NewRegistry()
	quiet := slog.New(slog.DiscardHandler)
	node, err := nethttp.Listen("127.0.0.1:0", reg, &nethttp.NodeOptions{Pool: nethttp.PoolOptions{Logger: quiet}})
	if err != nil {
		return nil, err
	}
	d := &demo{peerURL: node.URL(), node: node}
	d.db = newSlowDB(scores(), time.Millisecond, quiet)
	if _, err := reg.NewGroup("scores", 1<<20, d.db.Getter(d.peerURL), &cache.GroupOptions{Peers: node.Pool(), Logger: quiet}); err != nil {
		return nil, errors.Join(err, node.Close())
	}
	if d.client, err = nethttp.NewClient(d.peerURL, nil); err != nil {
		return nil, errors.Join(err, node.Close())
	}

	// The same ring as the guest's, to tell who owns a key.
	if d.ring, err = picker.NewPeers(guestName, func(string) cache.Peer { return nil }, nil); err != nil {
		return nil, errors.Join(err, d.close(ctx))
	}
	d.ring.Set(guestName, d.peerURL)

	d.runtime = wazero.NewRuntime(ctx)
	if d.guest, err = startGuest(ctx, d.runtime, wasm, d.peerURL, d.fetch); err != nil {
		return nil, errors.Join(err, d.close(ctx))
	}
	return d, nil
}

// owner names the node that owns key.
func (d *demo) owner(key string) string { return d.ring.Owner(key) }

// fetch is the host side of the guest's geecache.fetch import: the
// network a wasip1 module lacks.
func (d *demo) fetch(ctx context.Context, peer, group, key string) ([]byte, error) {
	if peer != d.peerURL {
		return nil, fmt.Errorf("unknown peer %q", peer)
	}
	d.fetches.Add(1)
	var a answer
	if err := d.client.Do(ctx, cache.PeerRequest{Op: cache.OpGet, Group: group, Keys: []string{key}}, &a); err != nil {
		return nil, err
	}
	return a.v, a.err
}

// answer keeps the answer to a request of one key.
type answer struct {
	v   []byte
	err error
}

func (a *answer) Answer(_ int, v cache.ByteView, _ time.Duration, err error) {
	a.v, a.err = v.ByteSlice(), err
}

func (*answer) Loading() {}

func (d *demo) close(ctx context.Context) error {
	var errs []error
	if d.runtime != nil {
		errs = append(errs, d.runtime.Close(ctx))
	}
	errs = append(errs, d.node.Close())
	d.client.CloseIdleConnections()
	return errors.Join(errs...)
}

// guest is the wasip1 module instance. A module instance runs one call at
// a time, so calls are serialized.
type guest struct {
	mu            sync.Mutex
	mod           api.Module
	buffer, getFn api.Function
}

// fetchFunc fetches key of group from peer.
type fetchFunc func(ctx context.Context, peer, group, key string) ([]byte, error)

func startGuest(ctx context.Context, r wazero.Runtime, wasm []byte, peerURL string, fetch fetchFunc) (*guest, error) {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
		return nil, err
	}
	_, err := r.NewHostModuleBuilder("geecache").NewFunctionBuilder().
		WithFunc(func(ctx context.Context, m api.Module, peer, peerLen, group, groupLen, key, keyLen, out, outCap uint32) int32 {
			mem := m.Memory()
			p, ok1 := mem.Read(peer, peerLen)
			g, ok2 := mem.Read(group, groupLen)
			k, ok3 := mem.Read(key, keyLen)
			if !ok1 || !ok2 || !ok3 {
				return -2
			}
			v, err := fetch(ctx, string(p), string(g), string(k))
			switch {
			case errors.Is(err, getter.ErrNotFound):
				return -1
			case err != nil:
				return -2
			}
			if uint32(len(v)) <= outCap && !mem.Write(out, v) {
				return -2
			}
			return int32(len(v))
		}).Export("fetch").Instantiate(ctx)
	if err != nil {
		return nil, err
	}
	cfg := wazero.NewModuleConfig().
		WithEnv("GEECACHE_SELF", guestName).
		WithEnv("GEECACHE_PEERS", guestName+","+peerURL).
		WithStartFunctions("_initialize")
	mod, err := r.InstantiateWithConfig(ctx, wasm, cfg)
	if err != nil {
		return nil, err
	}
	return &guest{mod: mod, buffer: mod.ExportedFunction("buffer"), getFn: mod.ExportedFunction("get")}, nil
}

// Errors of guest.get, by the guest's result code.
var (
	errGuestNotFound = fmt.Errorf("guest: %w", getter.ErrNotFound)
	errGuest         = errors.New("guest: get failed")
)

// get asks the guest node for key.
func (g *guest) get(ctx context.Context, key string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	res, err := g.buffer.Call(ctx, uint64(len(key)))
	if err != nil {
		return "", err
	}
	if !g.mod.Memory().Write(uint32(res[0]), []byte(key)) {
		return "", errors.New("guest: buffer out of range")
	}
	if res, err = g.getFn.Call(ctx, uint64(len(key))); err != nil {
		return "", err
	}
	code, n := res[0]>>32, uint32(res[0])
	if res, err = g.buffer.Call(ctx, 0); err != nil {
		return "", err
	}
	b, ok := g.mod.Memory().Read(uint32(res[0]), n)
	if !ok {
		return "", errors.New("guest: result out of range")
	}
	switch code {
	case 0:
		return string(b), nil
	case 1:
		return "", fmt.Errorf("%w: %s", errGuestNotFound, b)
	}
	return "", fmt.Errorf("%w: %s", errGuest, b)
}
