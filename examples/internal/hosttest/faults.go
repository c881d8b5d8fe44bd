//go:build !js

package hosttest

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// Faulty are two bad peers on 127.0.0.1: Down, an address nothing listens
// on (connections refused), and Liar, which answers every request 200
// with the value "999" and none of the protocol's checksum or signature
// headers.
type Faulty struct {
	Down, Liar string
	lies       atomic.Int64 // requests the liar answered
}

// StartFaulty starts them; they stop when the test ends.
func StartFaulty(t testing.TB) *Faulty {
	t.Helper()
	down, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &Faulty{Down: "http://" + down.Addr().String()}
	down.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.Liar = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		f.lies.Add(1)
		_, _ = w.Write([]byte("999"))
	}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
	})
	return f
}

// Faults checks the wasm node w, whose peers are f.Down and f.Liar only:
// for a key each of them owns it answers the right value (its own load,
// after the owner and the next node on the ring, the other faulty peer,
// failed or were ejected), never the liar's; its fetch() reported each
// failure (PeerErrors);
// and the liar was asked (the lie reached the node and was refused).
func Faults(t *testing.T, ctx context.Context, w Node, f *Faulty) {
	t.Helper()
	ring, err := nethttp.NewPool(w.Addr, cache.NewRegistry(), &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	if err := ring.Set(f.Down, f.Liar); err != nil {
		t.Fatal(err)
	}
	data := Dataset()
	bad := map[string]int{}
	var keys []string
	for i := 0; i < NumKeys && (bad[f.Down] < 3 || bad[f.Liar] < 3); i++ {
		k := Key(i)
		if o := ring.Owner(k); (o == f.Down || o == f.Liar) && bad[o] < 3 {
			bad[o]++
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		st, body, err := w.Proc.Get(ctx, w.API, Scores, k)
		if err != nil || st != 200 || body != data[k] {
			t.Fatalf("%s (owner %s) = %d %q, %v; want 200 %q", k, ring.Owner(k), st, body, err, data[k])
		}
	}
	r, err := w.Proc.Stats(ctx, w.API)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Stats
	t.Logf("with a down and a lying peer: %+v", s)
	if s.LocalLoads != int64(len(keys)) || s.FallbackLoads == 0 || s.PeerLoads != 0 {
		t.Errorf("%d local loads (%d fallback, %d ejected), %d peer loads; want %d local loads, fallbacks, 0 peer loads",
			s.LocalLoads, s.FallbackLoads, s.EjectedLoads, s.PeerLoads, len(keys))
	}
	if s.PeerErrors == 0 || f.lies.Load() == 0 {
		t.Errorf("%d peer errors, the liar asked %d times; want both > 0", s.PeerErrors, f.lies.Load())
	}
}
