package protocol

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/valuesum"
)

// Checking a body against its checksum accepts the right sum, refuses a
// wrong one, and allocates nothing either way, with a secret (SHA-256) and
// without (xxhash64). (It made the checksum's string to compare, one
// allocation per value received, before.)
func TestCheckBodyAllocatesNothing(t *testing.T) {
	body := bytes.Repeat([]byte("v"), 100)
	for _, secret := range [][]byte{nil, []byte("s3cret")} {
		good := Header{HeaderChecksum: {checksum(secret, body)}}
		bad := Header{HeaderChecksum: {checksum(secret, []byte("other"))}}
		if err := checkBody(secret, good, body); err != nil {
			t.Fatalf("secret %q: the right checksum refused: %v", secret, err)
		}
		if err := checkBody(secret, bad, body); err == nil {
			t.Fatalf("secret %q: a wrong checksum accepted", secret)
		}
		if n := testing.AllocsPerRun(100, func() { _ = checkBody(secret, good, body) }); n != 0 {
			t.Errorf("secret %q: checking a body allocates %.0f times, want 0", secret, n)
		}
	}
}

// A value the cache keeps with its checksum (one of valuesum.Min bytes or
// more, loaded by the owner) is sent with the right one, on the load and
// on a hit, to a peer and (without a secret) to a client, with a secret (SHA-256, which the
// cache does not keep) and without (xxhash64, which it does), and a client
// accepts it; a smaller value the same.
func TestServedChecksumOfKeptValue(t *testing.T) {
	large := strings.Repeat("L", valuesum.Min+1)
	small := "s"
	reg := newTestRegistry(t, getter.Map(map[string]string{"large": large, "small": small}), nil)
	for _, secret := range [][]byte{nil, []byte("s3cret")} {
		srv := newServer(t, reg, &ServerOptions{Secret: secret})
		cl := newClient(t, &ClientOptions{Secret: secret})
		peers := []bool{true}
		if secret == nil { // with a secret, every request is a signed peer's
			peers = append(peers, false)
		}
		for _, key := range []string{"large", "large", "small"} {
			want := map[string]string{"large": large, "small": small}[key]
			for _, peer := range peers {
				req := cl.NewRequest(t.Context(), testSelf, "scores", key, false)
				if !peer {
					delete(req.Header, HeaderPeer)
				}
				resp := srv.Serve(t.Context(), req)
				if resp.Status != http.StatusOK {
					t.Fatalf("secret %q, %s (peer %v): status %d", secret, key, peer, resp.Status)
				}
				if got := resp.Header.Get(HeaderChecksum); got != checksum(secret, []byte(want)) {
					t.Fatalf("secret %q, %s (peer %v): checksum %s, want %s", secret, key, peer, got, checksum(secret, []byte(want)))
				}
				if !peer {
					continue // a client's request: ReadResponse is for peers' answers
				}
				v, err := cl.ReadResponse(t.Context(), req, resp.Status, resp.Header, int64(resp.Len()), resp.Reader())
				if err != nil || string(v) != want {
					t.Fatalf("secret %q, %s: ReadResponse = %d bytes, %v", secret, key, len(v), err)
				}
			}
		}
	}
}
