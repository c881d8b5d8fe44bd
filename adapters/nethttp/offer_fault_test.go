//go:build !js

package nethttp_test

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
)

// The offer's faults: receivers and previous owners that hang, refuse,
// lie or flood (see offer_test.go).

// A receiver that hangs on an offer, or refuses it, costs the leaving node
// no more than its drain: Drain still returns by itself, the healthy
// receiver has taken its keys, and the hung one is offered nothing after
// its first offer failed. The drain is 2 s, not less: the healthy
// receiver's pulls of its 1,000 keys must fit in 80% of it on a machine
// loaded by -race (at 300 ms it once took none).
func TestOfferToAHungOrRefusingReceiver(t *testing.T) {
	for _, f := range []nethttptest.Fault{{Hang: true}, {Lie: true}, {Down: true}} {
		var src loads
		nodes := nethttptest.Start(t, 3, &nethttptest.Options{Getter: src.getter,
			PoolOptions:  nethttp.PoolOptions{DrainFor: 2 * time.Second, Timeout: time.Hour},
			GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
		ctx := context.Background()
		leaving, good, bad := nodes[2], nodes[0], nodes[1]
		keys := ownedBy(leaving, "key-", 2000)
		for _, k := range keys {
			if _, err := leaving.Group.Get(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range nodes[:2] {
			if err := n.Pool.Set(good.Addr, bad.Addr); err != nil {
				t.Fatal(err)
			}
		}
		bad.SetFault(f)
		sctx, cancel := context.WithTimeout(ctx, time.Minute) // far beyond the drain: a bound, not a measure
		err := leaving.Pool.Drain(sctx)
		cancel()
		if err != nil {
			t.Fatalf("%+v: Drain = %v; want nil (the drain ends by itself)", f, err)
		}
		toGood := 0
		for _, k := range keys {
			if good.Pool.Owner(k) == good.Addr {
				toGood++
			}
		}
		if s := good.Group.Stats(); s.TakenOver != int64(toGood) {
			t.Errorf("%+v: the healthy receiver took %d keys; want its %d", f, s.TakenOver, toGood)
		}
		if s := leaving.Group.Stats(); s.Offered != int64(toGood) {
			t.Errorf("%+v: %d keys offered; want only the healthy receiver's %d", f, s.Offered, toGood)
		}
		bad.SetFault(nethttptest.Fault{})
	}
}

// A previous owner that answers the pull wrongly (damaged entries, a
// flood, a hang) makes the receiver keep nothing: each key loads from the
// source when asked, with its right value, and the offer's request ends.
func TestPullFromALyingPreviousOwner(t *testing.T) {
	for _, mode := range []string{"damaged", "flood", "hang", "garbage"} {
		var pulls atomic.Int64
		var keys []string // the fake's keys, set before it is asked
		fake := startFake(t, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/!get") {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			pulls.Add(1)
			switch mode {
			case "damaged":
				// The first key's entry with a wrong checksum, the
				// second's naming another key; the answer's own checksum
				// is right.
				sum, _ := hex.DecodeString(protocol.Checksum([]byte("evil")))
				body := "\x02" + "\x00\x02" + keys[0] + "\x00\x04evil" + strings.Repeat("\x00", 8) +
					"\x00\x02zz\x00\x04evil" + string(sum)
				w.Header().Set(protocol.HeaderChecksum, protocol.Checksum([]byte(body)))
				_, _ = w.Write([]byte(body))
			case "flood":
				chunk := []byte(strings.Repeat("x", 1<<16))
				for range 1 << 12 { // 256 MiB at most, over the receiver's 1 MiB limit
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			case "hang":
				_, _ = io.Copy(io.Discard, r.Body) // so that net/http ends r's context when the client goes
				<-r.Context().Done()
			default:
				_, _ = w.Write([]byte("evil!"))
			}
		})
		var src loads
		nodes := nethttptest.Start(t, 1, &nethttptest.Options{Getter: src.getter,
			PoolOptions: nethttp.PoolOptions{Cluster: nethttp.Cluster{MaxValueBytes: 1 << 20}, Timeout: 500 * time.Millisecond}})
		b := nodes[0]
		if err := b.Pool.Set(b.Addr, fake); err != nil {
			t.Fatal(err)
		}
		for i := 0; len(keys) < 3; i++ {
			if k := "k" + itoa(i); b.Pool.Owner(k) == fake {
				keys = append(keys, k)
			}
		}
		if err := b.Pool.Set(b.Addr); err != nil { // the fake owned keys: now it is their previous owner
			t.Fatal(err)
		}
		if err := offer(t, b.Addr, nil, keys...); err != nil {
			t.Fatalf("%s: offer = %v", mode, err)
		}
		if pulls.Load() == 0 {
			t.Errorf("%s: the receiver did not ask its previous owner", mode)
		}
		ctx := context.Background()
		if s := b.Group.Stats(); s.TakenOver != 0 || s.Main.Items != 0 {
			t.Errorf("%s: %d keys taken, %d held; want none", mode, s.TakenOver, s.Main.Items)
		}
		for _, k := range keys {
			if v, err := b.Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
				t.Errorf("%s: Get(%s) = %q, %v", mode, k, v, err)
			}
			if got := src.count(0, k); got != 1 {
				t.Errorf("%s: %s loaded %d times; want 1", mode, k, got)
			}
		}
	}
}

// startFake serves h on 127.0.0.1 (an OS-picked port) and returns its URL;
// Cleanup stops it.
func startFake(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// The offer after a ring change is bounded too: a node that joins and
// hangs on every offer holds up nothing. The others' Gets go on, a Set
// that changes the ring again starts a new offer in place of the hung
// one, and Close stops the one under way and returns (goleak: nothing
// is left running).
func TestRingChangeOfferToAHungNode(t *testing.T) {
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{
		PoolOptions:  nethttp.PoolOptions{DrainFor: time.Hour, Timeout: time.Hour},
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	a, hung := nodes[0], nodes[1]
	ctx := context.Background()
	if err := a.Pool.Set(a.Addr); err != nil {
		t.Fatal(err)
	}
	keys := ownedBy(a, "key-", 500)
	for _, k := range keys {
		if _, err := a.Group.Get(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	hung.SetFault(nethttptest.Fault{Hang: true})
	if err := a.Pool.Set(a.Addr, hung.Addr); err != nil { // about half of the keys move to the hung node
		t.Fatal(err)
	}
	if err := a.Pool.Set(a.Addr); err != nil { // and back: the first offer is cancelled
		t.Fatal(err)
	}
	if err := a.Pool.Set(a.Addr, hung.Addr); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[:10] {
		if a.Pool.Owner(k) == a.Addr {
			if v, err := a.Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
				t.Errorf("Get(%s) during a hung offer = %q, %v", k, v, err)
			}
		}
	}
	if err := a.Pool.Close(); err != nil {
		t.Fatal(err)
	}
	if s := a.Group.Stats(); s.Offered != 0 {
		t.Errorf("%d keys offered to a node that never answered; want 0", s.Offered)
	}
	hung.SetFault(nethttptest.Fault{})
}
