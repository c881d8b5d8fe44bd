package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// countingDB is a Getter over fixed data that counts its calls per key.
type countingDB struct {
	mu    sync.Mutex
	data  map[string][]byte
	calls map[string]int
}

func newCountingDB(data map[string][]byte) *countingDB {
	return &countingDB{data: data, calls: map[string]int{}}
}

func (d *countingDB) Get(ctx context.Context, key string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[key]++
	if key == "boom" {
		return nil, errors.New("database on fire")
	}
	v, ok := d.data[key]
	if !ok {
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	}
	return v, nil
}

func (d *countingDB) count(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[key]
}

// remotePicker claims that every key is owned by peer.
type remotePicker struct{ peer cache.Peer }

func (p remotePicker) PickPeer(string) (cache.Peer, bool) { return p.peer, true }

// recordingPeer answers every read of one key with "remote:"+key and
// counts the calls. It cannot change keys, nor answer many keys at once:
// the group asks key by key instead.
type recordingPeer struct {
	mu    sync.Mutex
	calls int
}

func (p *recordingPeer) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1 {
		return fmt.Errorf("recording peer: %v of %d keys: %w", req.Op, len(req.Keys), errors.ErrUnsupported)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	reply.Answer(0, cache.ByteViewOf([]byte("remote:"+req.Keys[0])), -1, nil)
	return nil
}

func (*recordingPeer) Addr() string { return "http://recording-peer" }

func newTestRegistry(t *testing.T, db getter.Getter, opts *cache.GroupOptions) *cache.Registry {
	t.Helper()
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, db, opts); err != nil {
		t.Fatal(err)
	}
	return reg
}

func newServer(t testing.TB, reg *cache.Registry, o *ServerOptions) *Server {
	t.Helper()
	if o == nil {
		o = &ServerOptions{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Secret != nil && o.Self == "" {
		o.Self = testSelf
	}
	s, err := NewServer(reg, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newClient(t testing.TB, o *ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testSelf is the base URL of the Servers of the tests.
const testSelf = "http://10.0.0.2:8001"

// roundTrip sends a Client request through a Server and decodes the answer.
func roundTrip(ctx context.Context, c *Client, s *Server, group, key string) ([]byte, error) {
	req := c.NewRequest(ctx, testSelf, group, key, false)
	return read(ctx, c, req, s.Serve(ctx, req), -2)
}

// read decodes r, the answer to req, announced as size bytes (-2 for the
// length of its body).
func read(ctx context.Context, c *Client, req Request, r Response, size int64) ([]byte, error) {
	if size == -2 {
		size = int64(r.Len())
	}
	return c.ReadResponse(ctx, req, r.Status, r.Header, size, r.Reader())
}

func TestServeStatuses(t *testing.T) {
	db := newCountingDB(map[string][]byte{"Tom": []byte("630")})
	s := newServer(t, newTestRegistry(t, db, nil), nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name, method, path string
		status             int
		code               Code
		body               string
	}{
		{"hit", "GET", "/_geecache/scores/Tom", 200, "", "630"},
		{"not found", "GET", "/_geecache/scores/kkk", 404, CodeNotFound, "kkk not exist"},
		{"unknown group", "GET", "/_geecache/nope/Tom", 404, CodeUnknownGroup, `"nope"`},
		{"bad path", "GET", "/_geecache/scores", 400, CodeBadRequest, "malformed path"},
		{"bad escape", "GET", "/_geecache/scores/%zz", 400, CodeBadRequest, "malformed path"},
		{"patch", "PATCH", "/_geecache/scores/Tom", 405, CodeMethodNotAllowed, "use GET"},
		{"batch from a non-peer", "POST", "/_geecache/scores/!get", 400, CodeBadRequest, "peer request"},
		{"load error", "GET", "/_geecache/scores/boom", 500, CodeLoadError, "database on fire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Serve(ctx, Request{Method: tc.method, Path: tc.path, Header: Header{}})
			if r.Status != tc.status || r.Code() != tc.code || !strings.Contains(bodyOf(r), tc.body) {
				t.Fatalf("Serve = %d %q %q; want %d %q containing %q", r.Status, r.Code(), bodyOf(r), tc.status, tc.code, tc.body)
			}
			if tc.status == 405 && r.Header.Get("Allow") != AllowedMethods {
				t.Fatalf("405 without Allow: GET, PUT, DELETE: %v", r.Header)
			}
			if tc.status == 200 && r.Header.Get("Content-Type") != "application/octet-stream" {
				t.Fatalf("200 with Content-Type %q", r.Header.Get("Content-Type"))
			}
		})
	}
}

func TestClientErrorsRoundTrip(t *testing.T) {
	db := newCountingDB(map[string][]byte{"Tom": []byte("630")})
	s := newServer(t, newTestRegistry(t, db, nil), nil)
	c := newClient(t, nil)
	ctx := context.Background()
	if v, err := roundTrip(ctx, c, s, "scores", "Tom"); err != nil || string(v) != "630" {
		t.Fatalf("Tom = %q, %v", v, err)
	}
	for _, tc := range []struct {
		group, key string
		want       error
	}{
		{"scores", "kkk", getter.ErrNotFound},
		{"nope", "Tom", ErrUnknownGroup},
		{"scores", "boom", ErrLoad},
	} {
		_, err := roundTrip(ctx, c, s, tc.group, tc.key)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s/%s: err = %v; want %v", tc.group, tc.key, err, tc.want)
		}
		if tc.want != getter.ErrNotFound && errors.Is(err, getter.ErrNotFound) {
			t.Errorf("%s/%s: %v must not be ErrNotFound (the caller would not fall back)", tc.group, tc.key, err)
		}
	}
}

func TestAwkwardKeysThroughServer(t *testing.T) {
	data := map[string][]byte{}
	for _, k := range awkwardKeys {
		data[k] = []byte("v=" + k)
	}
	s := newServer(t, newTestRegistry(t, newCountingDB(data), nil), &ServerOptions{Secret: []byte("s3cret")})
	c := newClient(t, &ClientOptions{Secret: []byte("s3cret")})
	for _, k := range awkwardKeys {
		v, err := roundTrip(context.Background(), c, s, "scores", k)
		if err != nil || string(v) != "v="+k {
			t.Errorf("key %q = %q, %v", k, v, err)
		}
	}
}

func TestPeerRequestNeverForwards(t *testing.T) {
	db := newCountingDB(map[string][]byte{"Tom": []byte("630"), "Sam": []byte("567")})
	peer := &recordingPeer{}
	s := newServer(t, newTestRegistry(t, db, &cache.GroupOptions{Peers: remotePicker{peer}}), nil)
	ctx := context.Background()

	// A client request (no peer header) goes to the owner.
	r := s.Serve(ctx, Request{Method: "GET", Path: Path("scores", "Tom"), Header: Header{}})
	if r.Status != 200 || bodyOf(r) != "remote:Tom" || peer.calls != 1 || db.count("Tom") != 0 {
		t.Fatalf("plain request: %d %q, peer calls %d, db calls %d; want forwarded once", r.Status, bodyOf(r), peer.calls, db.count("Tom"))
	}
	// A peer request for a key this node thinks another node owns is
	// loaded here: it never takes a second hop.
	c := newClient(t, nil)
	peer.calls = 0
	v, err := roundTrip(ctx, c, s, "scores", "kkk")
	if !errors.Is(err, getter.ErrNotFound) || peer.calls != 0 || db.count("kkk") != 1 {
		t.Fatalf("peer request = %q, %v; peer calls %d, db calls %d; want a local load only", v, err, peer.calls, db.count("kkk"))
	}
	v, err = roundTrip(ctx, c, s, "scores", "Sam")
	if err != nil || string(v) != "567" || peer.calls != 0 {
		t.Fatalf("peer request Sam = %q, %v, peer calls %d; want 567 loaded locally", v, err, peer.calls)
	}
}

func TestMaxValueBytes(t *testing.T) {
	db := newCountingDB(map[string][]byte{"small": make([]byte, 100), "big": make([]byte, 101)})
	s := newServer(t, newTestRegistry(t, db, nil), &ServerOptions{MaxValueBytes: 100})
	c := newClient(t, &ClientOptions{MaxValueBytes: 100})
	ctx := context.Background()
	if v, err := roundTrip(ctx, c, s, "scores", "small"); err != nil || len(v) != 100 {
		t.Fatalf("small = %d bytes, %v", len(v), err)
	}
	req := c.NewRequest(ctx, testSelf, "scores", "big", false)
	r := s.Serve(ctx, req)
	if r.Status != http.StatusRequestEntityTooLarge || r.Code() != CodeTooLarge || !strings.Contains(string(r.Body), "101 bytes exceeds the limit of 100") {
		t.Fatalf("big: %d %q %q", r.Status, r.Code(), r.Body)
	}
	if _, err := read(ctx, c, req, r, -1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("client err = %v; want ErrTooLarge", err)
	}
	// A server with a larger limit sends it; the client refuses to read
	// past its own limit, with or without a Content-Length.
	big := newServer(t, s.reg, nil)
	r = big.Serve(ctx, req)
	for _, size := range []int64{-1, 101} {
		if _, err := read(ctx, c, req, r, size); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("size %d: client err = %v; want ErrTooLarge", size, err)
		}
	}
	// A body shorter or longer than announced is a broken response.
	h := Header{HeaderChecksum: {Checksum(make([]byte, 40))}}
	if _, err := c.ReadResponse(ctx, req, 200, h, 50, bytes.NewReader(make([]byte, 40))); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("short body: err = %v; want ErrBadResponse", err)
	}
}

func TestClientUnexpectedResponses(t *testing.T) {
	c := newClient(t, nil)
	for _, tc := range []struct {
		status int
		code   Code
		want   error
	}{
		{404, "", ErrBadResponse}, // a 404 from something that is not a GeeCache node
		{404, "weird", ErrBadResponse},
		{502, "", ErrBadResponse},
		{302, "", ErrBadResponse},
		{401, CodeUnauthorized, ErrUnauthorized},
		{400, CodeBadRequest, ErrBadRequest},
		{405, CodeMethodNotAllowed, ErrMethodNotAllowed},
	} {
		h := Header{}
		if tc.code != "" {
			h.Set(HeaderError, string(tc.code))
		}
		_, err := c.ReadResponse(context.Background(), Request{}, tc.status, h, -1, strings.NewReader("page not found"))
		if !errors.Is(err, tc.want) || errors.Is(err, getter.ErrNotFound) {
			t.Errorf("%d %q: err = %v; want %v", tc.status, tc.code, err, tc.want)
		}
	}
}

// drainBubble lets the bubble's timers run out when t ends (the groups'
// idle workers, their clocks), so that its goroutines end: time stands
// still once the bubble's root goroutine has returned.
func drainBubble(t *testing.T) {
	t.Cleanup(func() {
		time.Sleep(time.Hour)
		synctest.Wait()
	})
}

// signedAt is req signed again for target as a client whose clock is skew
// off would sign it.
func signedAt(req Request, secret []byte, target string, skew time.Duration) Request {
	sign(req.Header, newMACs(secret), time.Now().Add(skew), req.Method, target, req.Path)
	return req
}

// In a synctest bubble, whose clock stands on a whole second, so that a
// skew of exactly MaxSkew is one.
func TestAuth(t *testing.T) {
	synctest.Test(t, testAuth)
}

func testAuth(t *testing.T) {
	drainBubble(t)
	db := newCountingDB(map[string][]byte{"Tom": []byte("630")})
	secret := []byte("shared secret")
	s := newServer(t, newTestRegistry(t, db, nil), &ServerOptions{Secret: secret, MaxSkew: 30 * time.Second})
	ctx := context.Background()

	good := newClient(t, &ClientOptions{Secret: secret})
	if v, err := roundTrip(ctx, good, s, "scores", "Tom"); err != nil || string(v) != "630" {
		t.Fatalf("signed request = %q, %v; want 630", v, err)
	}
	loads := db.count("Tom") + db.count("kkk")

	tampered := func(mut func(r *Request)) Request {
		r := good.NewRequest(ctx, testSelf, "scores", "kkk", false)
		mut(&r)
		return r
	}
	for name, req := range map[string]Request{
		"unsigned":      newClient(t, nil).NewRequest(ctx, testSelf, "scores", "kkk", false),
		"wrong secret":  newClient(t, &ClientOptions{Secret: []byte("guess")}).NewRequest(ctx, testSelf, "scores", "kkk", false),
		"stale":         signedAt(good.NewRequest(ctx, testSelf, "scores", "kkk", false), secret, testSelf, -31*time.Second),
		"future":        signedAt(good.NewRequest(ctx, testSelf, "scores", "kkk", false), secret, testSelf, 31*time.Second),
		"other path":    tampered(func(r *Request) { r.Path = Path("scores", "Tom2") }),
		"new timestamp": tampered(func(r *Request) { r.Header.Set(HeaderTimestamp, strconv.FormatInt(time.Now().Unix()+1, 10)) }),
		"bad timestamp": tampered(func(r *Request) { r.Header.Set(HeaderTimestamp, "yesterday") }),
		"bad hex":       tampered(func(r *Request) { r.Header.Set(HeaderSignature, "zz") }),
		"no signature":  tampered(func(r *Request) { r.Header.Del(HeaderSignature) }),
		"bad path":      tampered(func(r *Request) { r.Path = "/_geecache/scores" }),
		"other node":    good.NewRequest(ctx, "http://10.0.0.3:8001", "scores", "kkk", false),
		"not a peer":    tampered(func(r *Request) { r.Header.Del(HeaderPeer) }),
		"other peer":    tampered(func(r *Request) { r.Header.Set(HeaderPeer, "2") }),
	} {
		r := s.Serve(ctx, req)
		if r.Status != http.StatusUnauthorized || r.Code() != CodeUnauthorized {
			t.Errorf("%s: %d %q %q; want 401", name, r.Status, r.Code(), r.Body)
		}
		if _, err := read(ctx, good, req, r, -1); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("%s: client err = %v; want ErrUnauthorized", name, err)
		}
	}
	if got := db.count("Tom") + db.count("kkk") + db.count("Tom2"); got != loads {
		t.Fatalf("rejected requests caused %d loads", got-loads)
	}
	// Within the window on either side is accepted.
	for _, d := range []time.Duration{-30 * time.Second, 30 * time.Second} {
		req := signedAt(good.NewRequest(ctx, testSelf, "scores", "Tom", false), secret, testSelf, d)
		if _, err := read(ctx, good, req, s.Serve(ctx, req), -2); err != nil {
			t.Errorf("skew %v: %v", d, err)
		}
	}
}

// Every code a server can send comes back to the client as its sentinel.
func TestErrorResponseCodes(t *testing.T) {
	c := newClient(t, nil)
	for code, want := range map[Code]error{
		CodeNotFound:         getter.ErrNotFound,
		CodeUnknownGroup:     ErrUnknownGroup,
		CodeBadRequest:       ErrBadRequest,
		CodeUnauthorized:     ErrUnauthorized,
		CodeMethodNotAllowed: ErrMethodNotAllowed,
		CodeTooLarge:         ErrTooLarge,
		CodeLoadError:        ErrLoad,
	} {
		r := ErrorResponse(code, "msg for "+string(code))
		_, err := read(context.Background(), c, Request{}, r, -2)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), "msg for "+string(code)) {
			t.Errorf("%s (%d): err = %v; want %v with the message", code, r.Status, err, want)
		}
	}
}
