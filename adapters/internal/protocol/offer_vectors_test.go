package protocol

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The code produces exactly the offer vectors of PROTOCOL.md: the
// memory-only batch (signed with the peer value memory) answered from
// memory alone, a key it does not hold as a not_held entry (status 4) and
// never loaded, and the offer, a batch of key names on !offer, signed as a
// batch is, answered 200 with an empty body.
func TestPublishedOfferVectors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		drainBubble(t)
		v := docVectors(t)
		secret := []byte(v["secret"])
		sec, _ := strconv.ParseInt(v["time"], 10, 64)
		time.Sleep(time.Until(time.Unix(sec, 0)))
		target, group := v["target"], v["group"]
		keys := []string{v["batch key 0"], v["batch key 1"]}
		ctx := context.Background()
		check := func(what, got string) {
			t.Helper()
			if want, ok := v[what]; !ok || got != want {
				t.Errorf("%s = %q; PROTOCOL.md says %q", what, got, want)
			}
		}
		loads := 0
		reg := cache.NewRegistry()
		g, err := reg.NewGroup(group, 1<<10, getter.Func(func(_ context.Context, k string) ([]byte, error) {
			loads++
			return []byte(v["value"]), nil
		}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Get(ctx, keys[0]); err != nil {
			t.Fatal(err)
		}
		c := newClient(t, &ClientOptions{Secret: secret})
		s := newServer(t, reg, &ServerOptions{Secret: secret, Self: target})

		req := c.NewBatchRequest(ctx, target, group, BatchGet, keys, true)
		check("memory batch X-Geecache-Peer", req.Header.Get(HeaderPeer))
		check("memory batch canonical", strings.Join([]string{"GEECACHE2", "POST", target, req.Path, "memory", v["time"], req.Header.Get(HeaderChecksum), ""}, "\n"))
		check("memory batch X-Geecache-Signature", req.Header.Get(HeaderSignature))
		r := s.Serve(ctx, req)
		if r.Status != http.StatusOK {
			t.Fatalf("Serve = %d %q", r.Status, r.Body)
		}
		check("memory batch answer", hex.EncodeToString(r.Body))
		check("memory batch answer X-Geecache-Signature", r.Header.Get(HeaderSignature))
		var got []string
		err = c.ReadBatchResponse(ctx, req, r.Status, r.Header, int64(len(r.Body)), bytes.NewReader(r.Body), keys,
			func(i int, val []byte, _ time.Duration, err error) {
				got = append(got, strconv.Itoa(i)+"="+string(val)+"/"+strconv.FormatBool(errors.Is(err, cache.ErrNotHeld)))
			})
		if err != nil || strings.Join(got, " ") != "0="+v["value"]+"/false 1=/true" || loads != 1 {
			t.Fatalf("the client reads %v, %v after %d loads; want the value, then not held, after 1", got, err, loads)
		}

		req = c.NewBatchRequest(ctx, target, group, BatchOffer, keys, false)
		check("offer path", req.Path)
		check("offer canonical", strings.Join([]string{"GEECACHE2", "POST", target, req.Path, "1", v["time"], req.Header.Get(HeaderChecksum), ""}, "\n"))
		check("offer X-Geecache-Signature", req.Header.Get(HeaderSignature))
		r = s.Serve(ctx, req)
		if r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Fatalf("offer: Serve = %d %q", r.Status, r.Body)
		}
		check("offer answer X-Geecache-Signature", r.Header.Get(HeaderSignature))
		if err := c.ReadBatchResponse(ctx, req, r.Status, r.Header, 0, bytes.NewReader(nil), keys, nil); err != nil {
			t.Errorf("the client reads the offer's answer: %v", err)
		}
	})
}
