package cache_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
	"github.com/geecache/geecache/mocks"
	"github.com/golang/mock/gomock"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type fixture struct {
	group  *cache.Group
	reg    *cache.Registry // group's
	picker *mocks.MockPeerPicker
	peer   *mocks.MockPeer
	src    *mocks.MockGetter
}

func newFixture(t *testing.T) *fixture {
	ctrl := gomock.NewController(t)
	f := &fixture{
		picker: mocks.NewMockPeerPicker(ctrl),
		peer:   mocks.NewMockPeer(ctrl),
		src:    mocks.NewMockGetter(ctrl),
	}
	f.reg = cache.NewRegistry()
	g, err := f.reg.NewGroup("scores", 1<<20, f.src, &cache.GroupOptions{Peers: f.picker, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	f.group = g
	// The group names its peers by address (stats, logs, write retries).
	f.peer.EXPECT().Addr().Return("http://owner").AnyTimes()
	return f
}

// noTTL is the TTL of a peer's answer that carries none: the asking
// group's own TTLs apply.
const noTTL time.Duration = -1

func (f *fixture) remoteOwner() {
	f.picker.EXPECT().PickPeer(gomock.Any()).Return(f.peer, true).AnyTimes()
}

// expect expects one request of op for key of group "scores" at the mock
// peer.
func (f *fixture) expect(op cache.PeerOp, key string) *gomock.Call {
	return f.peer.EXPECT().Do(gomock.Any(), cache.PeerRequest{Op: op, Group: "scores", Keys: []string{key}}, gomock.Any())
}

// answer is the mock peer's answer to a request of one key: v, ttl and
// err.
func answer(v []byte, ttl time.Duration, err error) func(context.Context, cache.PeerRequest, cache.PeerReply) error {
	return func(_ context.Context, _ cache.PeerRequest, reply cache.PeerReply) error {
		reply.Answer(0, cache.ByteViewOf(v), ttl, err)
		return nil
	}
}

func TestOwnerPeerAnswers(t *testing.T) {
	f := newFixture(t)
	f.remoteOwner()
	f.expect(cache.OpGet, "Tom").DoAndReturn(answer([]byte("630"), noTTL, nil)).Times(1)
	for range 3 { // the second and third Gets hit the hot cache
		v, err := f.group.Get(t.Context(), "Tom")
		if err != nil || v.String() != "630" {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
	s := f.group.Stats()
	if s.PeerLoads != 1 || s.Hot.Hits != 2 || s.Hot.Items != 1 || s.LocalLoads != 0 || s.Gets != 3 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestOwnerPeerFailsFallsBackOnce(t *testing.T) {
	f := newFixture(t)
	f.remoteOwner()
	f.expect(cache.OpGet, "Tom").DoAndReturn(answer(nil, noTTL, errors.New("connection refused"))).Times(1)
	f.src.EXPECT().Get(gomock.Any(), "Tom").Return([]byte("630"), nil).Times(1)
	for range 2 {
		v, err := f.group.Get(t.Context(), "Tom")
		if err != nil || v.String() != "630" {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
	s := f.group.Stats()
	if s.PeerErrors != 1 || s.FallbackLoads != 1 || s.LocalLoads != 1 || s.Main.Items != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestOwnerPeerNotFoundIsNotLoadedAgain(t *testing.T) {
	f := newFixture(t)
	f.remoteOwner()
	f.expect(cache.OpGet, "kkk").DoAndReturn(answer(nil, noTTL, fmt.Errorf("peer says: %w", getter.ErrNotFound)))
	// No expectation on f.src: a local load fails the test.
	_, err := f.group.Get(t.Context(), "kkk")
	if !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

func TestCallerCancelledNoFallback(t *testing.T) {
	f := newFixture(t)
	f.remoteOwner()
	peerCalled := make(chan struct{})
	f.expect(cache.OpGet, "Tom").DoAndReturn(
		func(ctx context.Context, _ cache.PeerRequest, _ cache.PeerReply) error {
			close(peerCalled)
			<-ctx.Done()
			return ctx.Err()
		})
	// No expectation on f.src: a fallback load fails the test.
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-peerCalled; cancel() }()
	if _, err := f.group.Get(ctx, "Tom"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	testkit.WaitFor(t, "the abandoned load to end", func() bool { return f.group.InFlight() == 0 })
	if s := f.group.Stats(); s.Abandoned != 1 || s.FallbackLoads != 0 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestPickerSaysSelfLoadsLocally(t *testing.T) {
	f := newFixture(t)
	f.picker.EXPECT().PickPeer("Tom").Return(nil, false)
	f.src.EXPECT().Get(gomock.Any(), "Tom").Return([]byte("630"), nil)
	v, err := f.group.Get(t.Context(), "Tom")
	if err != nil || v.String() != "630" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if s := f.group.Stats(); s.LocalLoads != 1 || s.PeerLoads != 0 || s.Main.Items != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestServePeerNeverForwards(t *testing.T) {
	f := newFixture(t)
	f.remoteOwner() // the ring names another owner...
	f.src.EXPECT().Get(gomock.Any(), "Tom").Return([]byte("630"), nil)
	// ...but a peer request is served here: no expectation on f.peer.
	v, _, err := serveKey(t.Context(), f.reg, f.group, cache.OpGet, "Tom")
	if err != nil || v.String() != "630" {
		t.Fatalf("ServePeer = %q, %v", v, err)
	}
	if s := f.group.Stats(); s.PeerRequests != 1 || s.LocalLoads != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestConcurrentColdGetsOnePeerFetch(t *testing.T) {
	f := newFixture(t)
	f.remoteOwner()
	release := make(chan struct{})
	f.expect(cache.OpGet, "Tom").DoAndReturn(
		func(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
			<-release
			return answer([]byte("630"), noTTL, nil)(ctx, req, reply)
		}).Times(1)
	const n = 100
	var wg sync.WaitGroup
	var once sync.Once
	defer func() { once.Do(func() { close(release) }); wg.Wait() }()
	for range n {
		wg.Go(func() {
			if v, err := f.group.Get(t.Context(), "Tom"); err != nil || v.String() != "630" {
				t.Errorf("Get = %q, %v", v, err)
			}
		})
	}
	testkit.WaitFor(t, "all Gets to wait on one load", func() bool { return f.group.Stats().DedupWaits == n-1 })
	once.Do(func() { close(release) })
}

// A peer request must not join a load that is forwarding the same key to
// another node, or it would take a second hop.
func TestServePeerDoesNotJoinForwardingLoad(t *testing.T) {
	f := newFixture(t)
	// The peer list changes between the two requests: the Get sees another
	// owner, the peer request sees this node as the owner.
	gomock.InOrder(
		f.picker.EXPECT().PickPeer("Tom").Return(f.peer, true),
		f.picker.EXPECT().PickPeer("Tom").Return(nil, false),
	)
	peerCalled, release := make(chan struct{}), make(chan struct{})
	f.expect(cache.OpGet, "Tom").DoAndReturn(
		func(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
			close(peerCalled)
			<-release
			return answer([]byte("630"), noTTL, nil)(ctx, req, reply)
		})
	f.src.EXPECT().Get(gomock.Any(), "Tom").Return([]byte("630"), nil)
	forwarded := make(chan error, 1)
	go func() {
		_, err := f.group.Get(t.Context(), "Tom")
		forwarded <- err
	}()
	<-peerCalled
	// Had it joined the forwarding load, it would wait for release.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	v, _, err := serveKey(ctx, f.reg, f.group, cache.OpGet, "Tom")
	close(release)
	if err != nil || v.String() != "630" {
		t.Fatalf("ServePeer = %q, %v", v, err)
	}
	if err := <-forwarded; err != nil {
		t.Fatal(err)
	}
}

// The mock peer covers the writes too: a Group.Set reaches the owner as
// an OpSet with the value and TTL, a Group.Remove as an OpRemove, and an
// owner that fails a remove is named in the *UpdateError by its Addr.
func TestMockPeerCoversWrites(t *testing.T) {
	f := newFixture(t)
	f.remoteOwner()
	f.expect(cache.OpGet, "Tom").DoAndReturn(answer([]byte("630"), noTTL, nil)).Times(1)
	gomock.InOrder(
		f.peer.EXPECT().Do(gomock.Any(), cache.PeerRequest{Op: cache.OpSet, Group: "scores", Keys: []string{"Tom"}, Value: []byte("631"), TTL: time.Minute}, gomock.Any()).Return(nil),
		f.expect(cache.OpRemove, "Tom").Return(nil),
		f.expect(cache.OpRemove, "Sam").Return(fmt.Errorf("no writes here: %w", errors.ErrUnsupported)),
	)
	if v, err := f.group.Get(t.Context(), "Tom"); err != nil || v.String() != "630" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if err := f.group.Set(t.Context(), "Tom", []byte("631"), time.Minute); err != nil {
		t.Fatalf("Set = %v", err)
	}
	if err := f.group.Remove(t.Context(), "Tom"); err != nil {
		t.Fatalf("Remove = %v", err)
	}
	var ue *cache.UpdateError
	if err := f.group.Remove(t.Context(), "Sam"); !errors.As(err, &ue) || !errors.Is(ue.Failed["http://owner"], errors.ErrUnsupported) {
		t.Fatalf("Remove(Sam) = %v; want an *UpdateError naming http://owner", err)
	}
}
