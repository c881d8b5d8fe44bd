package cache_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

func TestZeroRegistryIsUsable(t *testing.T) {
	var r cache.Registry
	g, err := r.NewGroup("scores", 1<<10, getter.Map(map[string]string{"Tom": "630"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lookup("scores") != g || len(r.Names()) != 1 {
		t.Fatalf("Lookup = %p, Names = %v", r.Lookup("scores"), r.Names())
	}
	if v, err := g.Get(t.Context(), "Tom"); err != nil || v.String() != "630" {
		t.Fatalf("Get = %q, %v", v, err)
	}
}

type ptrGetter struct{}

func (*ptrGetter) Get(context.Context, string) ([]byte, error) { return nil, nil }

func TestNilGettersAreRefused(t *testing.T) {
	for name, g := range map[string]getter.Getter{
		"nil interface": nil,
		"nil Func":      getter.Func(nil),
		"nil pointer":   (*ptrGetter)(nil),
	} {
		if _, err := cache.NewRegistry().NewGroup("g", 1, g, nil); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
	if _, err := cache.NewRegistry().NewGroup("g", -1, getter.Map(nil), nil); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("negative budget: err = %v, want ErrConfig", err)
	}
}

func TestErrorHasOnePrefixAndTheGettersMessage(t *testing.T) {
	grp := newGroup(t, 1<<10, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		return nil, errors.New(key + " not exist: " + getter.ErrNotFound.Error())
	}))
	grp2 := newGroup(t, 1<<10, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		return nil, errors.Join(errors.New(key+" not exist"), getter.ErrNotFound)
	}))
	_, err := grp.Get(t.Context(), "kkk")
	if got := strings.Count(err.Error(), "geecache:"); got != 1 || !strings.Contains(err.Error(), "kkk not exist") {
		t.Fatalf("err = %q: want one geecache: prefix and the Getter's message", err)
	}
	_, err = grp2.Get(t.Context(), "kkk")
	var ce *cache.Error
	if !errors.As(err, &ce) || ce.Group != "g" || ce.Key != "kkk" || !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("err = %v: want a *cache.Error for g/kkk wrapping ErrNotFound", err)
	}
}

func TestPanicErrorCarriesValueAndStack(t *testing.T) {
	grp := newGroup(t, 1<<10, getter.Func(func(context.Context, string) ([]byte, error) {
		panic("database exploded")
	}))
	_, err := grp.Get(t.Context(), "k")
	var pe *cache.PanicError
	if !errors.As(err, &pe) || pe.Value != "database exploded" || !strings.Contains(string(pe.Stack), "api_test.go") {
		t.Fatalf("err = %v; want a *cache.PanicError with the value and a stack through the Getter", err)
	}
	if !errors.Is(err, cache.ErrGetterPanic) {
		t.Fatalf("err = %v; want ErrGetterPanic", err)
	}
}

func TestByteView(t *testing.T) {
	grp := newGroup(t, 1<<10, getter.Map(map[string]string{"k": "hello, world"}))
	v, err := grp.Get(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if !v.EqualString("hello, world") || v.EqualString("hello") || !v.EqualBytes([]byte("hello, world")) {
		t.Fatal("EqualString/EqualBytes disagree with the value")
	}
	if s := v.Slice(0, 5); s.String() != "hello" || !s.Equal(v.Slice(0, 5)) || s.Equal(v.Slice(1, 6)) {
		t.Fatalf("Slice(0, 5) = %q", s)
	}
	if s := v.Slice(7, v.Len()); s.String() != "world" {
		t.Fatalf("Slice(7, Len) = %q", s)
	}
	buf := make([]byte, 5)
	if n := v.Copy(buf); n != 5 || string(buf) != "hello" {
		t.Fatalf("Copy = %d %q", n, buf)
	}
	at := make([]byte, 5)
	if n, err := v.Reader().(io.ReaderAt).ReadAt(at, 7); n != 5 || err != nil || string(at) != "world" {
		t.Fatalf("Reader().ReadAt(7) = %d, %v, %q", n, err, at)
	}
	all, err := io.ReadAll(v.Reader())
	if err != nil || string(all) != "hello, world" {
		t.Fatalf("Reader read %q, %v", all, err)
	}
	// Changing what the accessors returned changes nothing cached.
	all[0], buf[0] = 'X', 'X'
	b := v.ByteSlice()
	b[0] = 'X'
	if again, _ := grp.Get(t.Context(), "k"); !again.EqualString("hello, world") {
		t.Fatalf("cached value changed to %q", again)
	}
}

// recordingTracer records the spans a group starts.
type recordingTracer struct {
	mu    sync.Mutex
	spans []string
}

type recordedSpan struct {
	t    *recordingTracer
	name string
}

func (r *recordingTracer) Start(ctx context.Context, kind, group, key, peer string) (context.Context, cache.Span) {
	return ctx, recordedSpan{r, kind + ":" + group + "/" + key + "@" + peer}
}

func (s recordedSpan) End(err error) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	out := "ok"
	if err != nil {
		out = "err"
	}
	s.t.spans = append(s.t.spans, s.name+"="+out)
}

type addrPeer struct{ err error }

func (p addrPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return answerReads(ctx, req, reply, func(context.Context, string) ([]byte, time.Duration, error) {
		return []byte("remote"), -1, p.err
	})
}
func (addrPeer) Addr() string { return "http://peer" }

type onePeer struct{ p cache.Peer }

func (o onePeer) PickPeer(key string) (cache.Peer, bool) { return o.p, key != "mine" }

func TestTracerSeesEveryStep(t *testing.T) {
	tr := &recordingTracer{}
	src := getter.Map(map[string]string{"mine": "1", "theirs": "2"})
	g, err := cache.NewRegistry().NewGroup("g", 1<<10, src, &cache.GroupOptions{Peers: onePeer{addrPeer{}}, Logger: quiet, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := cache.NewRegistry().NewGroup("g", 1<<10, src, &cache.GroupOptions{Peers: onePeer{addrPeer{err: errors.New("down")}}, Logger: quiet, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, _ = g.Get(ctx, "mine")
	_, _ = g.Get(ctx, "mine")
	_, _ = g.Get(ctx, "theirs")
	_, _ = g2.Get(ctx, "theirs")
	want := []string{
		"load:g/mine@=ok", "miss:g/mine@=ok",
		"hit:g/mine@=ok",
		"peer:g/theirs@http://peer=ok", "miss:g/theirs@=ok",
		"peer:g/theirs@http://peer=err", "fallback:g/theirs@=ok", "miss:g/theirs@=ok",
	}
	if strings.Join(tr.spans, " ") != strings.Join(want, " ") {
		t.Fatalf("spans:\n got %v\nwant %v", tr.spans, want)
	}
}
