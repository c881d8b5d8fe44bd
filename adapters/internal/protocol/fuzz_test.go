package protocol

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// FuzzServePath feeds arbitrary escaped paths to ParsePath and a Server:
// no panic, a status of the protocol, and every path Path builds parses
// back to its parts.
func FuzzServePath(f *testing.F) {
	for _, k := range awkwardKeys {
		f.Add(Path("scores", k), "scores", k)
	}
	f.Add("/_geecache/scores/%", "", "")
	f.Add("/_geecache//", "a/b", "%")
	f.Add("/_geecache/scores/%2E%2E", ".", "..")
	f.Add("/_geecache/scores/!.", "!..", "!.")
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<16, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if len(key)%3 == 0 {
			return nil, getter.ErrNotFound
		}
		if len(key)%3 == 1 {
			return nil, errors.New("fail")
		}
		return []byte(key), nil
	}), nil); err != nil {
		f.Fatal(err)
	}
	s := newServer(f, reg, &ServerOptions{MaxValueBytes: 64})
	f.Fuzz(func(t *testing.T, path, group, key string) {
		r := s.Serve(context.Background(), Request{Method: http.MethodGet, Path: path, Header: Header{}})
		switch r.Status {
		case 200, 400, 404, 413, 500:
		default:
			t.Fatalf("Serve(%q) status %d", path, r.Status)
		}
		if g, k, err := ParsePath(path); (err != nil) != (r.Status == 400) {
			t.Fatalf("ParsePath(%q) = %q, %q, %v but Serve status %d", path, g, k, err, r.Status)
		}
		if group == "" {
			return
		}
		noDotSegments(t, Path(group, key))
		g, k, err := ParsePath(Path(group, key))
		if err != nil || g != group || k != key {
			t.Fatalf("ParsePath(Path(%q, %q)) = %q, %q, %v", group, key, g, k, err)
		}
	})
}

// FuzzReadResponse feeds arbitrary answers to a Client: no panic, never a
// value over the limit, a value only for a 200 with its checksum, a
// sentinel error otherwise, and nothing accepted by a client with a secret.
func FuzzReadResponse(f *testing.F) {
	f.Add(200, "", int64(3), []byte("630"), true)
	f.Add(200, "", int64(-1), bytes.Repeat([]byte("x"), 40), true)
	f.Add(404, "not_found", int64(-1), []byte("kkk not exist\n"), true)
	f.Add(404, "unknown_group", int64(5), []byte("nope\n"), true)
	f.Add(500, "load_error", int64(-1), []byte("\xff\xfe"), true)
	f.Add(413, "too_large", int64(0), []byte{}, true)
	c := newClient(f, &ClientOptions{MaxValueBytes: 32})
	signed := newClient(f, &ClientOptions{MaxValueBytes: 32, Secret: []byte("s")})
	sentinels := []error{getter.ErrNotFound, ErrUnknownGroup, ErrBadRequest, ErrUnauthorized,
		ErrMethodNotAllowed, ErrTooLarge, ErrLoad, ErrBadResponse}
	f.Fuzz(func(t *testing.T, status int, code string, size int64, body []byte, sum bool) {
		h := Header{}
		if code != "" {
			h.Set(HeaderError, code)
		}
		if sum {
			h.Set(HeaderChecksum, Checksum(body))
		}
		// Nothing unsigned passes a client with a secret.
		req := signed.NewRequest(context.Background(), "http://n", "scores", "k", false)
		if v, err := signed.ReadResponse(context.Background(), req, status, h, size, bytes.NewReader(body)); v != nil || !errors.Is(err, ErrIntegrity) {
			t.Fatalf("with a secret, an unsigned %d answer = %q, %v; want ErrIntegrity", status, v, err)
		}
		v, err := c.ReadResponse(context.Background(), Request{}, status, h, size, bytes.NewReader(body))
		if err == nil {
			if status != 200 || !sum || int64(len(v)) > c.MaxValueBytes() || !bytes.Equal(v, body) {
				t.Fatalf("ReadResponse(%d, %d, %d bytes) = %d bytes, nil", status, size, len(body), len(v))
			}
			return
		}
		if v != nil {
			t.Fatalf("value %q with error %v", v, err)
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("error %v wraps no sentinel", err)
	})
}

// FuzzWrite feeds arbitrary PUT and DELETE requests to a Server: no panic,
// a status of the protocol, and a value stored only by a well-formed peer
// PUT of a body within the limit that matches its checksum; a DELETE of a
// stored key removes it.
func FuzzWrite(f *testing.F) {
	f.Add("PUT", "k", []byte("v"), true, true, "1000")
	f.Add("PUT", "..", []byte{0, 255}, true, false, "")
	f.Add("DELETE", "k", []byte(nil), true, true, "")
	f.Add("PUT", "k", make([]byte, 100), true, true, "-1")
	f.Add("PATCH", "k", []byte("v"), false, true, "x")
	var loads int
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("scores", 1<<16, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		loads++
		return []byte("src"), nil
	}), nil)
	if err != nil {
		f.Fatal(err)
	}
	s := newServer(f, reg, &ServerOptions{MaxValueBytes: 64, UnsignedWrites: true})
	c := newClient(f, nil)
	f.Fuzz(func(t *testing.T, method, key string, body []byte, peer, goodSum bool, ttl string) {
		req := c.NewSetRequest(context.Background(), "", "scores", key, body, 0)
		req.Method = method
		if ttl != "" {
			req.Header.Set(HeaderTTL, ttl)
		}
		if !peer {
			req.Header.Del(HeaderPeer)
		}
		if !goodSum {
			req.Header.Set(HeaderChecksum, "0000000000000000")
		}
		put := time.Now()
		r := s.Serve(context.Background(), req)
		switch r.Status {
		case 200, 400, 405, 413:
		default:
			t.Fatalf("%s %q: status %d %q", method, key, r.Status, r.Body)
		}
		stored := method == "PUT" && peer && len(body) <= 64 && (goodSum || Checksum(body) == "0000000000000000")
		if (r.Status == 200) != (stored || (method == "DELETE" && peer)) {
			t.Fatalf("%s %q peer=%v sum=%v %d bytes: status %d %q", method, key, peer, goodSum, len(body), r.Status, r.Body)
		}
		if r.Status != 200 {
			return
		}
		before := loads
		v, err := g.Get(context.Background(), key)
		switch {
		case method == "PUT" && (err != nil || !v.EqualBytes(body) || loads != before):
			if ms, perr := strconv.ParseInt(ttl, 10, 64); perr == nil && ms > 0 && time.Since(put) >= time.Duration(ms)*time.Millisecond &&
				err == nil && v.String() == "src" && loads == before+1 {
				break // a lifetime of a few ms ran out before the Get: it loads anew, as it should
			}
			t.Fatalf("after PUT %q: %q, %v, %d loads; want the body, no load", key, v, err, loads-before)
		case method == "DELETE" && loads != before+1:
			t.Fatalf("after DELETE %q the key was not loaded anew", key)
		}
	})
}
