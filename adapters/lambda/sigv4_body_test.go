//go:build !js

package lambda

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// sigv4Peer is a fake peer on 127.0.0.1 that checks every request's SigV4
// signature (service lambda, region eu-west-1, the suite's credentials) as
// AWS does, with refSignAt over the headers the request says it signed and
// the body it carried: it answers 403 to a request whose signature does not
// match, records the bodies of the PUTs it takes, and hands what it takes
// to next (nil: answers 200), as a Function URL with AuthType AWS_IAM
// hands it to the function.
type sigv4Peer struct {
	*httptest.Server
	mu     sync.Mutex
	puts   map[string]string // path -> body
	denied []string          // why requests were refused
}

func newSigV4Peer(t *testing.T, next http.Handler) *sigv4Peer {
	t.Helper()
	p := &sigv4Peer{puts: map[string]string{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = checkSigV4(r, body)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.denied = append(p.denied, err.Error())
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPut {
			p.puts[r.URL.EscapedPath()] = string(body)
		}
		if next == nil {
			w.WriteHeader(http.StatusOK)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// checkSigV4 verifies r's Authorization header for body.
func checkSigV4(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	_, rest, ok := strings.Cut(auth, " SignedHeaders=")
	if !ok {
		return fmt.Errorf("no SigV4 Authorization header: %q", auth)
	}
	list, _, _ := strings.Cut(rest, ",")
	signed := strings.Split(list, ";")
	must := []string{"host", "x-amz-date"}
	if len(body) > 0 {
		must = append(must, "content-length")
	}
	for k := range r.Header {
		if k := strings.ToLower(k); strings.HasPrefix(k, "x-geecache-") {
			must = append(must, k)
		}
	}
	for _, k := range must {
		if !slices.Contains(signed, k) {
			return fmt.Errorf("%s is not signed (signed: %s)", k, list)
		}
	}
	hdr := map[string]string{}
	for _, k := range signed {
		switch k {
		case "host", "x-amz-date": // refSignAt adds them
		case "content-length":
			hdr[k] = strconv.FormatInt(r.ContentLength, 10)
		default:
			hdr[k] = strings.Join(r.Header.Values(k), ",")
		}
	}
	date := r.Header.Get("X-Amz-Date")
	if len(date) != len(suiteDate) {
		return fmt.Errorf("X-Amz-Date %q", date)
	}
	if want := refSignAt(r.Method, r.Host, r.URL.EscapedPath(), hdr, "eu-west-1", "lambda", date, body); auth != want {
		return fmt.Errorf("signature does not match:\n got %s\nwant %s", auth, want)
	}
	return nil
}

func (p *sigv4Peer) put(path string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.puts[path]
	return v, ok
}

func (p *sigv4Peer) refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.denied)
}

// A node with GEECACHE_URL_AUTH=AWS_IAM signs its Set (a PUT with the
// value as body, to the key's owner) and Remove to a peer named by URL, so
// that a peer that verifies SigV4 takes them; the Set of a key the node
// owns itself tells the peer too (a DELETE of its copy).
func TestNodeSignsSetsToURLPeers(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", suiteKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", suiteSecret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	// The peer is a net/http node behind IAM: without a secret, it takes
	// unsigned writes once SigV4 is checked.
	peerReg := cache.NewRegistry()
	peerGroup, err := peerReg.NewGroup("scores", 1<<20, getter.Map(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := nethttp.NewPool("", peerReg, &nethttp.PoolOptions{UnsignedWrites: true, Logger: slog.New(slog.DiscardHandler)}) // serves only
	if err != nil {
		t.Fatal(err)
	}
	peer := newSigV4Peer(t, h)
	cfg, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "node-a", envPeers: "node-a," + peer.URL, envURLAuth: authIAM}))
	if err != nil {
		t.Fatal(err)
	}
	var g *cache.Group
	n, err := NewNode(cfg, func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
		g, err = reg.NewGroup("scores", 1<<20, getter.Map(seedScores), &cache.GroupOptions{Peers: peers})
		return err
	}, &Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var peerKey, selfKey string
	for i := 0; peerKey == "" || selfKey == ""; i++ {
		if k := fmt.Sprint("key-", i); n.Peers.Owner(k) == peer.URL {
			peerKey = k
		} else {
			selfKey = k
		}
	}
	value := "value of " + peerKey
	if err := g.Set(t.Context(), peerKey, []byte(value), time.Minute); err != nil {
		t.Fatalf("Set of %s, owned by the peer: %v; peer refused %q", peerKey, err, peer.refused())
	}
	if got, ok := peer.put(protocol.Path("scores", peerKey)); !ok || got != value {
		t.Fatalf("Set of %s: the peer got %q, %v; want %q", peerKey, got, ok, value)
	}
	if v, err := peerGroup.Get(t.Context(), peerKey); err != nil || v.String() != value {
		t.Fatalf("the peer's %s after the Set: %q, %v; want %q", peerKey, v.String(), err, value)
	}
	if err := g.Remove(t.Context(), peerKey); err != nil {
		t.Fatalf("Remove of %s: %v; peer refused %q", peerKey, err, peer.refused())
	}
	if _, err := peerGroup.Get(t.Context(), peerKey); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("the peer's %s after the Remove: %v; want ErrNotFound", peerKey, err)
	}
	if err := g.Set(t.Context(), selfKey, []byte("mine"), time.Minute); err != nil {
		t.Fatalf("Set of %s, owned by the node: %v; peer refused %q", selfKey, err, peer.refused())
	}
	if v, err := g.Get(t.Context(), selfKey); err != nil || v.String() != "mine" {
		t.Fatalf("%s after its Set: %q, %v", selfKey, v.String(), err)
	}
	if r := peer.refused(); len(r) > 0 {
		t.Fatalf("the peer refused %q", r)
	}
}

// bodyTamperer changes a request's body after it was signed, keeping its
// length, as someone on the path might.
type bodyTamperer struct{ base http.RoundTripper }

func (b bodyTamperer) RoundTrip(r *http.Request) (*http.Response, error) {
	v, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	v = bytes.ToUpper(v)
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(v)), int64(len(v))
	return b.base.RoundTrip(r)
}

// The transport signs a body whether the request can re-read it (GetBody)
// or not (it is then read once, within the protocol's size limit); a body
// changed after signing is refused by the peer, and a body announced over
// the limit is refused before anything is sent.
func TestSigV4TransportSignsBodies(t *testing.T) {
	peer := newSigV4Peer(t, nil)
	base := nethttp.NewTransport()
	defer base.CloseIdleConnections()
	newTransport := func(rt http.RoundTripper) http.RoundTripper {
		tr, err := NewSigV4Transport(&SigV4Options{
			Credentials: credentials.NewStaticCredentialsProvider(suiteKeyID, suiteSecret, ""), Region: "eu-west-1", Base: rt,
		})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	send := func(tr http.RoundTripper, key string, body io.Reader) (int, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, peer.URL+protocol.Path("scores", key), body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(protocol.HeaderPeer, "1")
		req.Header.Set(protocol.HeaderChecksum, protocol.Checksum([]byte("v")))
		res, err := tr.RoundTrip(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res.StatusCode, nil
	}
	tr := newTransport(base)
	for key, body := range map[string]io.Reader{
		"re-readable":  strings.NewReader("re-readable body"),     // GetBody set
		"read-once":    io.MultiReader(strings.NewReader("once")), // no GetBody, length unknown
		"a/b c%":       bytes.NewReader([]byte{0, 1, 2, 0xff}),
		"empty-reader": io.MultiReader(),
	} {
		if code, err := send(tr, key, body); err != nil || code != http.StatusOK {
			t.Fatalf("%s: %d, %v; peer refused %q", key, code, err, peer.refused())
		}
	}
	for key, want := range map[string]string{"re-readable": "re-readable body", "read-once": "once", "a/b c%": "\x00\x01\x02\xff", "empty-reader": ""} {
		if got, ok := peer.put(protocol.Path("scores", key)); !ok || got != want {
			t.Errorf("%s: the peer got %q, %v; want %q", key, got, ok, want)
		}
	}

	if code, err := send(newTransport(bodyTamperer{base}), "tampered", strings.NewReader("value")); err != nil || code != http.StatusForbidden {
		t.Errorf("body changed after signing: %d, %v; want 403 from the peer", code, err)
	}
	if _, ok := peer.put(protocol.Path("scores", "tampered")); ok {
		t.Error("the peer took a body changed after signing")
	}

	sent := false
	tooBig := newTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { sent = true; return nil, io.EOF }))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, peer.URL+"/x", io.MultiReader(strings.NewReader("v")))
	req.ContentLength = protocol.DefaultMaxValueBytes + 1
	if _, err := tooBig.RoundTrip(req); err == nil || sent {
		t.Errorf("a body announced over %d bytes without GetBody: err %v, sent %v; want an error before sending", protocol.DefaultMaxValueBytes, err, sent)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
