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

// The code produces exactly the batch vectors published in PROTOCOL.md:
// the request (path, body, checksum, signed string, signature) and the
// answer (body, checksum, signature), and the client reads the answer
// back as the value and the "not found".
func TestPublishedBatchVectors(t *testing.T) {
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
		c := newClient(t, &ClientOptions{Secret: secret})
		req := c.NewBatchRequest(ctx, target, group, BatchGet, keys, false)
		check("batch path", req.Path)
		check("batch body", hex.EncodeToString(req.Body))
		check("batch X-Geecache-Checksum", req.Header.Get(HeaderChecksum))
		check("batch canonical", strings.Join([]string{"GEECACHE2", "POST", target, req.Path, "1", v["time"], req.Header.Get(HeaderChecksum), ""}, "\n"))
		check("batch X-Geecache-Signature", req.Header.Get(HeaderSignature))

		reg := cache.NewRegistry()
		if _, err := reg.NewGroup(group, 1<<10, getter.Func(func(_ context.Context, k string) ([]byte, error) {
			if k == keys[1] {
				return nil, notExist{}
			}
			return []byte(v["value"]), nil
		}), nil); err != nil {
			t.Fatal(err)
		}
		s := newServer(t, reg, &ServerOptions{Secret: secret, Self: target})
		r := s.Serve(ctx, req)
		if r.Status != http.StatusOK {
			t.Fatalf("Serve = %d %q", r.Status, r.Body)
		}
		check("batch answer", hex.EncodeToString(r.Body))
		check("batch answer X-Geecache-Checksum", r.Header.Get(HeaderChecksum))
		check("batch answer X-Geecache-Signature", r.Header.Get(HeaderSignature))
		var got []string
		err := c.ReadBatchResponse(ctx, req, r.Status, r.Header, int64(len(r.Body)), bytes.NewReader(r.Body), keys,
			func(i int, val []byte, _ time.Duration, err error) {
				got = append(got, strconv.Itoa(i)+"="+string(val)+"/"+strconv.FormatBool(errors.Is(err, getter.ErrNotFound)))
			})
		if err != nil || strings.Join(got, " ") != "0="+v["value"]+"/false 1=/true" {
			t.Fatalf("the client reads %v, %v", got, err)
		}
	})
}

// notExist is the source's "not found" of the vectors, in its own words.
type notExist struct{}

func (notExist) Error() string        { return "not exist" }
func (notExist) Is(target error) bool { return target == getter.ErrNotFound }
