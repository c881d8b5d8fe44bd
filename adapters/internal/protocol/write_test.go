package protocol

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// writeNode is a registry with one group whose source counts its loads
// and answers "src:"+key, with a TTL of a minute.
func writeNode(t *testing.T) (*cache.Registry, *cache.Group, *int) {
	t.Helper()
	loads := 0
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("scores", 1<<20, getter.TTLFunc(func(_ context.Context, key string) ([]byte, time.Duration, error) {
		loads++
		if key == "missing" {
			return nil, 0, getter.ErrNotFound
		}
		return []byte("src:" + key), time.Minute, nil
	}), &cache.GroupOptions{NotFoundTTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return reg, g, &loads
}

// In a synctest bubble: time.Sleep moves the clock of the group, the
// server and the client at once.
func TestPeerWritesAndTTLs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		drainBubble(t)
		secret := []byte("s")
		reg, g, loads := writeNode(t)
		const self = "http://owner:1"
		s := newServer(t, reg, &ServerOptions{Secret: secret, Self: self})
		c := newClient(t, &ClientOptions{Secret: secret})
		ctx := context.Background()

		// A value's remaining lifetime travels with it, signed.
		req := c.NewRequest(ctx, self, "scores", "Tom", false)
		r := s.Serve(ctx, req)
		if got, err := read(ctx, c, req, r, -1); err != nil || string(got) != "src:Tom" || ResponseTTL(r.Header) != time.Minute {
			t.Fatalf("GET Tom = %q, %v, TTL %v; want src:Tom for 1m", got, err, ResponseTTL(r.Header))
		}
		time.Sleep(20 * time.Second)
		r = s.Serve(ctx, c.NewRequest(ctx, self, "scores", "Tom", false))
		if ResponseTTL(r.Header) != 40*time.Second {
			t.Fatalf("20 s later the TTL is %v; want 40s", ResponseTTL(r.Header))
		}
		// A forged TTL fails the response signature.
		req = c.NewRequest(ctx, self, "scores", "Tom", false)
		r = s.Serve(ctx, req)
		r.Header.Set(HeaderTTL, "99999999")
		if _, err := read(ctx, c, req, r, -1); !errors.Is(err, ErrIntegrity) {
			t.Fatalf("forged TTL: err = %v; want ErrIntegrity", err)
		}
		// A cached "not found" has its TTL too.
		req = c.NewRequest(ctx, self, "scores", "missing", false)
		r = s.Serve(ctx, req)
		if _, err := read(ctx, c, req, r, -1); !errors.Is(err, getter.ErrNotFound) || ResponseTTL(r.Header) != 30*time.Second {
			t.Fatalf("missing: %v, TTL %v; want not found for 30s", err, ResponseTTL(r.Header))
		}

		// PUT stores at the owner, with its TTL; no source load.
		before := *loads
		req = c.NewSetRequest(ctx, self, "scores", "Tom", []byte("set"), 5*time.Second)
		if r := s.Serve(ctx, req); r.Status != 200 {
			t.Fatalf("PUT = %d %q", r.Status, r.Body)
		}
		if v, err := g.Get(ctx, "Tom"); err != nil || v.String() != "set" || *loads != before {
			t.Fatalf("after PUT Get = %q, %v (%d loads); want set without a load", v, err, *loads-before)
		}
		time.Sleep(6 * time.Second)
		if v, _ := g.Get(ctx, "Tom"); v.String() != "src:Tom" {
			t.Fatalf("after the PUT's TTL Get = %q; want a reload", v)
		}
		// DELETE drops it.
		if r := s.Serve(ctx, c.NewRemoveRequest(ctx, self, "scores", "Tom")); r.Status != 200 {
			t.Fatalf("DELETE = %d %q", r.Status, r.Body)
		}
		before = *loads
		_, _ = g.Get(ctx, "Tom")
		if *loads != before+1 {
			t.Fatal("after DELETE the key was not reloaded")
		}

		// A tampered PUT body, or a PUT signed for another node, is refused.
		req = c.NewSetRequest(ctx, self, "scores", "Tom", []byte("good"), 0)
		req.Body = []byte("evil")
		if r := s.Serve(ctx, req); r.Status == 200 {
			t.Fatal("a PUT whose body was changed was accepted")
		}
		if r := s.Serve(ctx, c.NewSetRequest(ctx, "http://other:1", "scores", "Tom", []byte("x"), 0)); r.Status != http.StatusUnauthorized {
			t.Fatalf("PUT signed for another node: %d; want 401", r.Status)
		}
		// A write that is not a peer request is refused.
		req = c.NewRemoveRequest(ctx, self, "scores", "Tom")
		unsigned := newServer(t, reg, nil)
		req.Header.Del(HeaderPeer)
		if r := unsigned.Serve(ctx, req); r.Status != http.StatusBadRequest {
			t.Fatalf("DELETE without the peer header: %d; want 400", r.Status)
		}
	})
}

func TestFormatTTL(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "", -time.Second: "", time.Microsecond: "1", 1500 * time.Millisecond: "1500"} {
		if got := FormatTTL(d); got != want {
			t.Errorf("FormatTTL(%v) = %q; want %q", d, got, want)
		}
	}
	for v, want := range map[string]time.Duration{"": 0, "x": 0, "-5": 0, "250": 250 * time.Millisecond} {
		if got := ResponseTTL(Header{HeaderTTL: {v}}); got != want {
			t.Errorf("ResponseTTL(%q) = %v; want %v", v, got, want)
		}
	}
}
