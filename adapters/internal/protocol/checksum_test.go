package protocol

import (
	"bytes"
	"net/http"
	"testing"
)

// Checking a body against its checksum accepts the right sum, refuses a
// wrong one, and allocates nothing either way, with a secret (SHA-256) and
// without (xxhash64). (It made the checksum's string to compare, one
// allocation per value received, before.)
func TestCheckBodyAllocatesNothing(t *testing.T) {
	body := bytes.Repeat([]byte("v"), 100)
	for _, secret := range [][]byte{nil, []byte("s3cret")} {
		good := http.Header{HeaderChecksum: {checksum(secret, body)}}
		bad := http.Header{HeaderChecksum: {checksum(secret, []byte("other"))}}
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
