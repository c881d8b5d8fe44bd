//go:build !wasip1 && !js

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/getter"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The wasip1 node answers every key: the keys its peer owns through the
// host's fetch, once each (then from its memory), its own keys itself.
func TestGuestFetchesThroughHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "guest.wasm")
	if err := buildGuest(ctx, path); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := startDemo(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.close(ctx); err != nil {
			t.Error(err)
		}
	}()
	want := map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"}
	peerOwned := 0
	for range 2 {
		for k, v := range want {
			if got, err := d.guest.get(ctx, k); err != nil || got != v {
				t.Errorf("get(%s) = %q, %v; want %q", k, got, err, v)
			}
		}
	}
	for k := range want {
		wantLookups := 0
		if d.owner(k) == d.peerURL {
			peerOwned++
			wantLookups = 1
		}
		if n := d.db.Lookups(k); n != wantLookups {
			t.Errorf("%s (owner %s) loaded %d times by the peer; want %d", k, d.owner(k), n, wantLookups)
		}
	}
	if n := d.fetches.Load(); n != int64(peerOwned) {
		t.Errorf("the host fetched %d times; want %d (each key the peer owns, once)", n, peerOwned)
	}
	// A key nobody has: not found, through the peer if the peer owns it.
	if _, err := d.guest.get(ctx, "kkk"); !errors.Is(err, getter.ErrNotFound) {
		t.Errorf("get(kkk) err = %v; want getter.ErrNotFound", err)
	}
}
