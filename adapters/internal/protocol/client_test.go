package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// Values of every size around the chunk boundaries come back whole,
// whatever the reader hands out at a time and whether the size is
// announced; wrong announcements and values over the limit fail.
func TestReadValueSizes(t *testing.T) {
	const limit = 3 * chunkSize
	c := newClient(t, &ClientOptions{MaxValueBytes: limit})
	ctx := context.Background()
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for _, n := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 2*chunkSize + 7, limit} {
		value := make([]byte, n)
		for i := range value {
			value[i] = byte(i * 7)
		}
		h := Header{HeaderChecksum: {Checksum(value)}}
		for rname, wrap := range readers {
			for _, size := range []int64{int64(n), -1} {
				name := fmt.Sprintf("%d bytes, announced %d, %s", n, size, rname)
				v, err := c.ReadResponse(ctx, Request{}, 200, h, size, wrap(bytes.NewReader(value)))
				if err != nil || !bytes.Equal(v, value) {
					t.Fatalf("%s: %d bytes, %v", name, len(v), err)
				}
			}
			if n == 0 {
				continue
			}
			for _, size := range []int64{int64(n) + 1, int64(n) - 1} {
				if size > limit {
					continue
				}
				v, err := c.ReadResponse(ctx, Request{}, 200, h, size, wrap(bytes.NewReader(value)))
				if v != nil || !errors.Is(err, ErrBadResponse) {
					t.Fatalf("%d bytes announced as %d, %s: %d bytes, %v; want ErrBadResponse", n, size, rname, len(v), err)
				}
			}
		}
	}
	over := make([]byte, limit+1)
	h := Header{HeaderChecksum: {Checksum(over)}}
	for _, size := range []int64{-1, limit + 1} {
		if v, err := c.ReadResponse(ctx, Request{}, 200, h, size, bytes.NewReader(over)); v != nil || !errors.Is(err, ErrTooLarge) {
			t.Fatalf("over the limit, announced %d: %d bytes, %v; want ErrTooLarge", size, len(v), err)
		}
	}
	// A done context stops a chunked read between chunks.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.ReadResponse(done, Request{}, 200, h, -1, bytes.NewReader(over)); !errors.Is(err, context.Canceled) {
		t.Fatalf("done context: %v; want context.Canceled", err)
	}
}

// A long error message is cut to fit the 4 KiB a client reads, so that its
// checksum can be checked; a longer error body with a checksum is refused.
func TestLongErrorMessage(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, newTestRegistry(t, newCountingDB(nil), nil), nil)
	c := newClient(t, nil)
	r := s.Seal(Request{}, ErrorResponse(CodeLoadError, string(bytes.Repeat([]byte("é"), 5000))))
	if len(r.Body) > maxErrorBody {
		t.Fatalf("error body of %d bytes; want at most %d", len(r.Body), maxErrorBody)
	}
	if _, err := read(ctx, c, Request{}, r, -2); !errors.Is(err, ErrLoad) {
		t.Fatalf("cut message: %v; want ErrLoad", err)
	}
	long := make([]byte, maxErrorBody+1)
	h := Header{HeaderError: {string(CodeLoadError)}, HeaderChecksum: {Checksum(long)}}
	if _, err := c.ReadResponse(ctx, Request{}, 500, h, -1, bytes.NewReader(long)); !errors.Is(err, ErrBadResponse) || errors.Is(err, ErrLoad) {
		t.Fatalf("error body over 4 KiB with a checksum: %v; want ErrBadResponse", err)
	}
}
