//go:build !js

package nethttp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// valueServer serves value, with its checksum, for every request.
func valueServer(t testing.TB, value []byte) *httptest.Server {
	t.Helper()
	sum, n := protocol.Checksum(value), strconv.Itoa(len(value))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()[protocol.HeaderChecksum] = []string{sum}
		w.Header()["Content-Length"] = []string{n}
		_, _ = w.Write(value)
	}))
	t.Cleanup(s.Close)
	return s
}

// A 1 MiB value costs about one allocation of its size: the client reads
// it into pooled chunks as it arrives and copies it once.
func TestLargeValueAllocations(t *testing.T) {
	value := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	c := mustClient(t, valueServer(t, value).URL, nil)
	defer c.CloseIdleConnections()
	per := allocsPerGet(t, c, 50, time.Minute, nil, value)
	t.Logf("%d bytes allocated per request for a %d-byte value (%.3fx)", per, len(value), float64(per)/float64(len(value)))
	if !raceEnabled && float64(per) > 1.1*float64(len(value)) {
		t.Fatalf("%d bytes allocated per request for a %d-byte value; want at most 1.1x", per, len(value))
	}
}

// BenchmarkGetLargeValue fetches a 1 MiB value from a peer on loopback;
// B/op is the figure to compare with the value's size.
func BenchmarkGetLargeValue(b *testing.B) {
	value := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	c := mustClient(b, valueServer(b, value).URL, nil)
	defer c.CloseIdleConnections()
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if v, _, err := peerGet(b.Context(), c, "scores", "big"); err != nil || len(v) != len(value) {
			b.Fatalf("Get = %d bytes, %v", len(v), err)
		}
	}
}
