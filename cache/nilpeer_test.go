package cache_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// nilOwner is a misbehaving PeerPicker: it says another node owns every
// key, and names none. As a router, it names no next or previous node.
type nilOwner struct{}

func (nilOwner) PickPeer(string) (cache.Peer, bool) { return nil, true }

func (nilOwner) PickFallback(string, func(cache.Peer) bool) (next, previous cache.Peer, changed time.Time) {
	return nil, nil, time.Time{}
}

func (nilOwner) ListPeers() []cache.Peer { return nil }

// justNilOwner is nilOwner as a PeerPicker only (no PickFallback, no
// Peers).
type justNilOwner struct{}

func (justNilOwner) PickPeer(string) (cache.Peer, bool) { return nil, true }

// A PickPeer that answers (nil, true) is taken as "no peer": every read
// and write of the group works here alone, without a panic.
func TestPickPeerNilOwnerMeansNoPeer(t *testing.T) {
	for name, peers := range map[string]cache.PeerPicker{"router": nilOwner{}, "picker": justNilOwner{}} {
		t.Run(name, func(t *testing.T) {
			src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
				if strings.HasPrefix(key, "missing") {
					return nil, getter.ErrNotFound
				}
				return []byte("local:" + key), nil
			})
			g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: peers, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if v, err := g.Get(ctx, "k"); err != nil || v.String() != "local:k" {
				t.Fatalf("Get = %q, %v; want the local load", v, err)
			}
			keys := []string{"a", "b", "missing", "k"}
			g.GetMany(ctx, keys, func(i int, v cache.ByteView, err error) {
				if keys[i] == "missing" {
					if !errors.Is(err, getter.ErrNotFound) {
						t.Errorf("GetMany(missing) = %q, %v; want getter.ErrNotFound", v, err)
					}
				} else if err != nil || v.String() != "local:"+keys[i] {
					t.Errorf("GetMany(%s) = %q, %v", keys[i], v, err)
				}
			})
			if err := g.Set(ctx, "s", []byte("set"), 0); err != nil {
				t.Fatalf("Set: %v", err)
			}
			if v, err := g.Get(ctx, "s"); err != nil || v.String() != "set" {
				t.Fatalf("Get after Set = %q, %v", v, err)
			}
			if err := g.Remove(ctx, "s"); err != nil {
				t.Fatalf("Remove: %v", err)
			}
			if err := g.RemoveMany(ctx, []string{"a", "b"}); err != nil {
				t.Fatalf("RemoveMany: %v", err)
			}
			var buf bytes.Buffer
			if _, err := g.Snapshot(ctx, &buf); err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
			if _, err := g.Restore(ctx, &buf); err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if err := g.Purge(ctx); err != nil {
				t.Fatalf("Purge: %v", err)
			}
		})
	}
}

// countingTracer is a Tracer through a pointer that it dereferences.
type countingTracer struct{ starts int }

func (c *countingTracer) Start(ctx context.Context, _, _, _, _ string) (context.Context, cache.Span) {
	c.starts++
	return ctx, noopSpan{}
}

type noopSpan struct{}

func (noopSpan) End(error) {}

// A nil *countingTracer in GroupOptions.Tracer is no Tracer, as a nil
// pointer in Peers is no PeerPicker: Gets, hits and misses, do not panic.
func TestTypedNilTracerIsNoTracer(t *testing.T) {
	var tr *countingTracer
	g, err := cache.NewRegistry().NewGroup("g", 1<<20, getter.Map(map[string]string{"k": "v"}), &cache.GroupOptions{Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a miss, then a hit
		if v, err := g.Get(t.Context(), "k"); err != nil || v.String() != "v" {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
}
