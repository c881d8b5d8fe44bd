//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// What a user acts on in a peer's error is reachable from the public
// packages: errors.As gives a *cache.PeerError (status, code, message),
// errors.Is finds getter.ErrNotFound for a missing key, and an answer that
// fails the integrity checks is cache.ErrIntegrity, never a value.
func TestPeerErrorsReachableByUsers(t *testing.T) {
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), nil); err != nil {
		t.Fatal(err)
	}
	pool, err := nethttp.NewPool("http://127.0.0.1:1", reg, nil) // owns every key: its peers are never set
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	node := httptest.NewServer(pool)
	defer node.Close()
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("999")) // a 200 without the checksum
	}))
	defer liar.Close()
	ctx := context.Background()

	get := func(addr, group, key string) ([]byte, error) {
		t.Helper()
		c, err := nethttp.NewClient(addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseIdleConnections()
		v, _, err := nethttp.PeerGet(ctx, c, group, key)
		return v, err
	}
	if v, err := get(node.URL, "scores", "Tom"); err != nil || string(v) != "630" {
		t.Fatalf("present key: %q, %v; want 630", v, err)
	}

	cases := []struct {
		name, group, key string
		status           int
		code             string
		is               error
	}{
		{"missing key", "scores", "kkk", http.StatusNotFound, "not_found", getter.ErrNotFound},
		{"unknown group", "nope", "Tom", http.StatusNotFound, "unknown_group", nil},
	}
	for _, tc := range cases {
		v, err := get(node.URL, tc.group, tc.key)
		var pe *cache.PeerError
		if v != nil || !errors.As(err, &pe) {
			t.Fatalf("%s: %q, %v; want a *cache.PeerError", tc.name, v, err)
		}
		if pe.Status != tc.status || pe.Code != tc.code || pe.Message == "" {
			t.Errorf("%s: PeerError %+v; want status %d, code %q and the peer's message", tc.name, pe, tc.status, tc.code)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v; want it to match %v", tc.name, err, tc.is)
		}
		if errors.Is(err, cache.ErrIntegrity) {
			t.Errorf("%s: %v matches ErrIntegrity; the answer was intact", tc.name, err)
		}
	}

	v, err := get(liar.URL, "scores", "Tom")
	if v != nil || !errors.Is(err, cache.ErrIntegrity) || errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("answer without a checksum: %q, %v; want no value and cache.ErrIntegrity", v, err)
	}
}
