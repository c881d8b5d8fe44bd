package protocol

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

func TestBadOptionsAreErrors(t *testing.T) {
	reg := cache.NewRegistry()
	for name, o := range map[string]*ServerOptions{
		"negative size": {MaxValueBytes: -1},
		"negative skew": {MaxSkew: -time.Second},
	} {
		if _, err := NewServer(reg, o); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("NewServer %s: err = %v, want cache.ErrConfig", name, err)
		}
	}
	if _, err := NewServer(nil, nil); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("NewServer(nil registry): err = %v, want cache.ErrConfig", err)
	}
	if _, err := NewClient(&ClientOptions{MaxValueBytes: -5}); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("NewClient negative size: err = %v, want cache.ErrConfig", err)
	}
	// Zero means the default, everywhere.
	s, err := NewServer(reg, &ServerOptions{})
	if err != nil || s.MaxValueBytes() != DefaultMaxValueBytes || s.cfg.MaxSkew != DefaultMaxSkew || s.cfg.Logger == nil {
		t.Fatalf("zero ServerOptions: %v, %+v", err, s.cfg)
	}
}

func TestNotFoundCarriesTheOwnersMessageOnce(t *testing.T) {
	db := newCountingDB(map[string][]byte{"Tom": []byte("630")})
	s := newServer(t, newTestRegistry(t, db, nil), nil)
	_, err := roundTrip(context.Background(), newClient(t, nil), s, "scores", "kkk")
	if !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "kkk not exist") || strings.Count(msg, "key not found") != 1 ||
		strings.Contains(msg, "geecache") || strings.Contains(msg, `"scores"`) {
		t.Fatalf("err = %q: want the owner's message, said once, without a prefix or the group repeated", msg)
	}
}

func TestHideErrorsForUntrustedCallers(t *testing.T) {
	var logs bytes.Buffer
	db := newCountingDB(map[string][]byte{"Tom": []byte("630")})
	s := newServer(t, newTestRegistry(t, db, nil), &ServerOptions{HideErrors: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	for key, want := range map[string]string{"kkk": "key not found\n", "boom": "load failed\n"} {
		r := s.Serve(ctx, Request{Method: "GET", Path: Path("scores", key), Header: Header{}})
		if string(r.Body) != want {
			t.Errorf("%s to an outsider: %q, want %q", key, r.Body, want)
		}
		// Without a secret a header proves nothing: a "peer" gets the
		// generic answer too (TestSignedCallersAreTrustedWithDetails has
		// the signed case).
		r = s.Serve(ctx, newClient(t, nil).NewRequest(ctx, testSelf, "scores", key, false))
		if string(r.Body) != want {
			t.Errorf("%s to an unsigned peer: %q, want %q", key, r.Body, want)
		}
	}
	if !strings.Contains(logs.String(), "database on fire") {
		t.Fatalf("the hidden detail is not in the log: %q", logs.String())
	}
}

func TestStaleSignatureDoesNotTellTheOffset(t *testing.T) {
	secret := []byte("s")
	s := newServer(t, newTestRegistry(t, newCountingDB(nil), nil), &ServerOptions{Secret: secret})
	ctx := context.Background()
	old := newClient(t, &ClientOptions{Secret: secret}).NewRequest(ctx, testSelf, "scores", "Tom", false)
	r := s.Serve(ctx, signedAt(old, secret, testSelf, -1234*time.Second))
	if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "stale") || strings.ContainsAny(string(r.Body), "0123456789") {
		t.Fatalf("stale request: %d %q; want 401 saying stale, without the offset", r.Status, r.Body)
	}
}

func TestLongCallerStringsAreClipped(t *testing.T) {
	var logs bytes.Buffer
	s := newServer(t, newTestRegistry(t, newCountingDB(nil), nil), &ServerOptions{Secret: []byte("s"), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	long := "/_geecache/" + strings.Repeat("x", 512<<10)
	r := s.Serve(context.Background(), Request{Method: "GET", Path: long, Header: Header{}})
	if r.Status != http.StatusUnauthorized || logs.Len() > 1024 {
		t.Fatalf("status %d, %d bytes of log for a 512 KiB path; want 401 and under 1 KiB", r.Status, logs.Len())
	}
	r = newServer(t, s.reg, nil).Serve(context.Background(), Request{Method: "GET", Path: long, Header: Header{}})
	if r.Status != http.StatusBadRequest || len(r.Body) > 1024 {
		t.Fatalf("status %d with a %d-byte body for a 512 KiB path; want 400 and under 1 KiB", r.Status, len(r.Body))
	}
}

// headerPropagator carries a request id in a header.
type headerPropagator struct{}

type idKey struct{}

func (headerPropagator) Inject(ctx context.Context, h Header) {
	if id, ok := ctx.Value(idKey{}).(string); ok {
		h.Set("X-Request-Id", id)
	}
}

func (headerPropagator) Extract(ctx context.Context, h Header) context.Context {
	return context.WithValue(ctx, idKey{}, h.Get("X-Request-Id"))
}

func TestPropagatorCarriesContextAcrossTheHop(t *testing.T) {
	var seen string
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<10, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		seen, _ = ctx.Value(idKey{}).(string)
		return []byte("v"), nil
	}), nil); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, reg, &ServerOptions{Propagator: headerPropagator{}})
	c := newClient(t, &ClientOptions{Propagator: headerPropagator{}})
	ctx := context.WithValue(context.Background(), idKey{}, "req-42")
	if _, err := roundTrip(ctx, c, s, "scores", "k"); err != nil || seen != "req-42" {
		t.Fatalf("err %v; the Getter saw request id %q, want req-42", err, seen)
	}
}

func TestSignedCallersAreTrustedWithDetails(t *testing.T) {
	secret := []byte("s")
	s := newServer(t, newTestRegistry(t, newCountingDB(nil), nil), &ServerOptions{Secret: secret, HideErrors: true})
	ctx := context.Background()
	// An application's signed request, not a peer's: no peer header.
	req := Request{Method: http.MethodGet, Path: Path("scores", "kkk"), Header: Header{}}
	sign(req.Header, newMACs(secret), time.Now(), req.Method, testSelf, req.Path)
	if r := s.Serve(ctx, req); r.Status != 404 || !strings.Contains(string(r.Body), "kkk not exist") {
		t.Fatalf("signed caller: %d %q; want the owner's message", r.Status, r.Body)
	}
}

// A flood of rejected requests, and of failed loads, logs a line a second
// of each kind, not a line each.
// (In a synctest bubble: time is virtual.)
func TestServerWarningsAreRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		drainBubble(t)
		var logs bytes.Buffer
		s := newServer(t, newTestRegistry(t, newCountingDB(nil), nil), &ServerOptions{Secret: []byte("s"), Self: "http://n",
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		for range 1000 {
			s.Serve(context.Background(), Request{Method: "GET", Path: Path("scores", "k"), Header: Header{}})
		}
		if n := strings.Count(logs.String(), "\n"); n != 1 {
			t.Fatalf("1000 rejected requests within a second logged %d lines; want 1", n)
		}
		time.Sleep(time.Second)
		s.Serve(context.Background(), Request{Method: "GET", Path: Path("scores", "k"), Header: Header{}})
		if !strings.Contains(logs.String(), "suppressed=999") {
			t.Fatalf("the next line does not count the 999 left out:\n%s", logs.String())
		}
	})
}

// Without a secret a node takes no writes unless told to; Admit refuses
// them before any body is read.
func TestUnsignedWritesAreRefusedByDefault(t *testing.T) {
	reg := newTestRegistry(t, newCountingDB(nil), nil)
	ctx := context.Background()
	c := newClient(t, nil)
	for _, req := range []Request{c.NewSetRequest(ctx, "", "scores", "k", []byte("v"), 0), c.NewRemoveRequest(ctx, "", "scores", "k")} {
		strict := newServer(t, reg, nil)
		if r, ok := strict.Admit(ctx, Request{Method: req.Method, Path: req.Path, Header: req.Header}); ok || r.Status != http.StatusUnauthorized {
			t.Errorf("%s without a secret: Admit = %v, %d; want 401", req.Method, ok, r.Status)
		}
		if r := strict.Serve(ctx, req); r.Status != http.StatusUnauthorized {
			t.Errorf("%s without a secret: %d; want 401", req.Method, r.Status)
		}
		if r := newServer(t, reg, &ServerOptions{UnsignedWrites: true}).Serve(ctx, req); r.Status != http.StatusOK {
			t.Errorf("%s with UnsignedWrites: %d %q; want 200", req.Method, r.Status, r.Body)
		}
	}
}
