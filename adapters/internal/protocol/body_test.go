package protocol

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
)

// bodyOf returns r's body as a string, whichever field carries it.
func bodyOf(r Response) string {
	var sb strings.Builder
	_, _ = r.WriteTo(&sb)
	return sb.String()
}

// A 200 to a GET carries the cached value itself: the Server neither
// copies it nor makes a buffer of its size to checksum it, so serving a
// 1 MiB value allocates a small fraction of it.
func TestServeDoesNotCopyTheValue(t *testing.T) {
	value := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	db := newCountingDB(map[string][]byte{"big": value})
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 8<<20, db, nil); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, reg, &ServerOptions{MaxValueBytes: 2 << 20})
	c := newClient(t, &ClientOptions{MaxValueBytes: 2 << 20})
	ctx := context.Background()
	req := c.NewRequest(ctx, testSelf, "scores", "big", false)
	if v, err := read(ctx, c, req, s.Serve(ctx, req), -2); err != nil || !bytes.Equal(v, value) {
		t.Fatalf("first Serve: %d bytes, %v; want the value", len(v), err)
	}
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		r := s.Serve(ctx, req)
		if r.Status != 200 || r.Len() != len(value) || r.Body != nil {
			t.Fatalf("Serve = %d, %d bytes (Body %d); want 200 with the value in Value", r.Status, r.Len(), len(r.Body))
		}
	}
	runtime.ReadMemStats(&after)
	if n := db.count("big"); n != 1 {
		t.Fatalf("the value was loaded %d times; want once, then served from memory", n)
	}
	per := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("%d bytes allocated per Serve of a %d-byte value", per, len(value))
	if per > uint64(len(value))/16 {
		t.Fatalf("%d bytes allocated per Serve of a %d-byte value; want the value not copied", per, len(value))
	}
}

// A Response's body is its Value if it has one, else its Body; Len,
// WriteTo and Reader agree.
func TestResponseBody(t *testing.T) {
	s := newServer(t, newTestRegistry(t, newCountingDB(map[string][]byte{"Tom": []byte("630")}), nil), nil)
	ctx := context.Background()
	value := s.Serve(ctx, newClient(t, nil).NewRequest(ctx, testSelf, "scores", "Tom", false))
	for name, tc := range map[string]struct {
		r    Response
		want string
	}{
		"value":   {value, "630"},
		"message": {ErrorResponse(CodeNotFound, "kkk not exist"), "kkk not exist\n"},
		"empty":   {Response{Status: 200}, ""},
	} {
		var buf bytes.Buffer
		n, err := tc.r.WriteTo(&buf)
		read, _ := io.ReadAll(tc.r.Reader())
		if err != nil || n != int64(len(tc.want)) || buf.String() != tc.want || tc.r.Len() != len(tc.want) || string(read) != tc.want {
			t.Errorf("%s: WriteTo %q (%d, %v), Len %d, Reader %q; want %q", name, buf.String(), n, err, tc.r.Len(), read, tc.want)
		}
	}
}

// ServeInto answers as Serve does, with the header fields in the map it
// is given (a value's and an error's alike), which it leaves otherwise.
func TestServeInto(t *testing.T) {
	s := newServer(t, newTestRegistry(t, newCountingDB(map[string][]byte{"Tom": []byte("630")}), nil), nil)
	c := newClient(t, nil)
	ctx := context.Background()
	for _, key := range []string{"Tom", "kkk"} {
		req := c.NewRequest(ctx, testSelf, "scores", key, false)
		want := s.Serve(ctx, req)
		h := Header{"X-Binding": {"kept"}}
		r := s.ServeInto(ctx, req, h, nil)
		r.Header.Del("X-Binding")
		if r.Status != want.Status || bodyOf(r) != bodyOf(want) || !reflect.DeepEqual(r.Header, want.Header) {
			t.Fatalf("%s: ServeInto = %d %q %v; Serve = %d %q %v", key, r.Status, bodyOf(r), r.Header, want.Status, bodyOf(want), want.Header)
		}
		if len(h) != len(want.Header) {
			t.Fatalf("%s: the map given holds %v; want the answer's fields", key, h)
		}
		v, err := read(ctx, c, req, s.ServeInto(ctx, req, Header{}, nil), -2)
		if (key == "Tom") != (err == nil && string(v) == "630") {
			t.Fatalf("%s: the client read %q, %v", key, v, err)
		}
	}
}
