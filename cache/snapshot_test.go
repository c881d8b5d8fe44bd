package cache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// snapSource gives "value of KEY" (then " v2" once v2 is set) for every
// key but those that start with "missing", and counts its loads.
type snapSource struct {
	loads atomic.Int64
	v2    atomic.Bool
}

func (s *snapSource) Get(_ context.Context, key string) ([]byte, error) {
	s.loads.Add(1)
	if strings.HasPrefix(key, "missing") {
		return nil, getter.ErrNotFound
	}
	if s.v2.Load() {
		return []byte("value of " + key + " v2"), nil
	}
	return []byte("value of " + key), nil
}

func newSnapGroup(t testing.TB, src getter.Getter, budget int64, o *cache.GroupOptions) *cache.Group {
	t.Helper()
	_, g := newSnapNode(t, src, budget, o)
	return g
}

// newSnapNode is newSnapGroup, with the group's registry, for a test
// that writes to the group as a peer does (ServePeer).
func newSnapNode(t testing.TB, src getter.Getter, budget int64, o *cache.GroupOptions) (*cache.Registry, *cache.Group) {
	t.Helper()
	if o == nil {
		o = &cache.GroupOptions{}
	}
	o.Logger = quiet
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("g", budget, src, o)
	if err != nil {
		t.Fatal(err)
	}
	return reg, g
}

// peerWrite has g's node apply a peer's write (OpSet of value, or with a
// nil value OpRemove) of key to its memory alone.
func peerWrite(t testing.TB, reg *cache.Registry, g *cache.Group, key string, value []byte) {
	t.Helper()
	req := cache.PeerRequest{Op: cache.OpSet, Keys: []string{key}, Value: value}
	if value == nil {
		req.Op = cache.OpRemove
	}
	if err := serveWrite(context.Background(), reg, g, req); err != nil {
		t.Fatal(err)
	}
}

// warmSnapshot loads present and missing keys into a group and returns
// its snapshot.
func warmSnapshot(t testing.TB, present, missing int) []byte {
	t.Helper()
	g := newSnapGroup(t, &snapSource{}, 1<<20, &cache.GroupOptions{NotFoundTTL: time.Hour})
	for i := range present {
		_, _ = g.Get(context.Background(), fmt.Sprintf("k%03d", i))
	}
	for i := range missing {
		_, _ = g.Get(context.Background(), fmt.Sprintf("missing%03d", i))
	}
	var buf bytes.Buffer
	n, err := g.Snapshot(context.Background(), &buf)
	if err != nil || n != present+missing {
		t.Fatalf("Snapshot = %d, %v; want %d, nil", n, err, present+missing)
	}
	return buf.Bytes()
}

// checkHeld fails if any key g holds has another value than the source's:
// each key is asked once, so a key held answers from memory (loads stay)
// and one not held loads its right value. It returns how many were held.
func checkHeld(t *testing.T, g *cache.Group, src *snapSource, present, missing int) (held int) {
	t.Helper()
	for i := range present + missing {
		key := fmt.Sprintf("k%03d", i)
		if i >= present {
			key = fmt.Sprintf("missing%03d", i-present)
		}
		before := src.loads.Load()
		v, err := g.Get(context.Background(), key)
		switch {
		case i < present && (err != nil || v.String() != "value of "+key):
			t.Fatalf("Get(%q) = %q, %v; want its value", key, v, err)
		case i >= present && !errors.Is(err, getter.ErrNotFound):
			t.Fatalf("Get(%q) = %q, %v; want not found", key, v, err)
		}
		if src.loads.Load() == before {
			held++
		}
	}
	return held
}

func TestRestoreBringsBackValuesAndNotFound(t *testing.T) {
	snap := warmSnapshot(t, 100, 20)
	src := &snapSource{}
	g := newSnapGroup(t, src, 1<<20, &cache.GroupOptions{NotFoundTTL: time.Hour})
	n, err := g.Restore(context.Background(), bytes.NewReader(snap))
	if err != nil || n != 120 {
		t.Fatalf("Restore = %d, %v; want 120, nil", n, err)
	}
	if held := checkHeld(t, g, src, 100, 20); held != 120 || src.loads.Load() != 0 {
		t.Fatalf("%d of 120 keys held, %d loads; want all held, no load", held, src.loads.Load())
	}
}

// A snapshot that was cut short, or has any byte changed, never puts a
// wrong value in memory and never panics: Restore fails, keeping only
// the records before the damage, each checked on its own.
func TestRestoreRefusesDamage(t *testing.T) {
	snap := warmSnapshot(t, 4, 2)
	try := func(t *testing.T, what string, data []byte) {
		src := &snapSource{}
		g := newSnapGroup(t, src, 1<<20, &cache.GroupOptions{NotFoundTTL: time.Hour})
		n, err := g.Restore(context.Background(), bytes.NewReader(data))
		if err == nil {
			t.Fatalf("%s: Restore = %d, nil; want an error", what, n)
		}
		if held := checkHeld(t, g, src, 4, 2); held != n {
			t.Fatalf("%s: %d keys held; Restore said %d", what, held, n)
		}
	}
	for cut := range len(snap) {
		try(t, fmt.Sprintf("cut at %d of %d", cut, len(snap)), snap[:cut])
	}
	for i := range snap {
		for _, bit := range []byte{0x01, 0x80} {
			data := bytes.Clone(snap)
			data[i] ^= bit
			try(t, fmt.Sprintf("byte %d ^ %#x", i, bit), data)
		}
	}
	try(t, "no snapshot", []byte("GET / HTTP/1.1\r\n\r\n"))
}

func TestRestoreRefusesAnotherGroupsSnapshot(t *testing.T) {
	other, err := cache.NewRegistry().NewGroup("other", 1<<20, &snapSource{}, &cache.GroupOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = other.Get(t.Context(), "k000")
	var buf bytes.Buffer
	if _, err := other.Snapshot(t.Context(), &buf); err != nil {
		t.Fatal(err)
	}
	g := newSnapGroup(t, &snapSource{}, 1<<20, nil)
	if n, err := g.Restore(t.Context(), &buf); err == nil || n != 0 || !strings.Contains(err.Error(), `"other"`) {
		t.Fatalf("Restore = %d, %v; want 0 and an error naming group \"other\"", n, err)
	}
}

// A snapshot larger than the budget fills it with the most used keys, and
// evicts nothing the group held before.
func TestRestoreFillsTheBudgetWithTheMostUsed(t *testing.T) {
	big := newSnapGroup(t, &snapSource{}, 1<<20, nil)
	for round := range 8 {
		for i := range 1000 {
			if i < 50 || round == 0 {
				_, _ = big.Get(t.Context(), fmt.Sprintf("k%03d", i))
			}
		}
	}
	var buf bytes.Buffer
	if _, err := big.Snapshot(t.Context(), &buf); err != nil {
		t.Fatal(err)
	}
	const budget = 4 << 10 // about 200 of the 1000 values
	src := &snapSource{}
	small := newSnapGroup(t, src, budget, nil)
	_, _ = small.Get(t.Context(), "mine")
	if _, err := small.Restore(t.Context(), &buf); err != nil {
		t.Fatal(err)
	}
	st := small.Stats()
	if b := st.Main.Bytes + st.Hot.Bytes; b > budget {
		t.Fatalf("%d bytes held; budget %d", b, budget)
	}
	loads := src.loads.Load()
	mustGetValue(t, small, "mine")
	for i := range 50 {
		mustGetValue(t, small, fmt.Sprintf("k%03d", i))
	}
	if got := src.loads.Load() - loads; got != 0 {
		t.Fatalf("%d loads for the key held before and the 50 most used; want 0", got)
	}
}

// A value larger than the whole budget of the group restored into (a
// snapshot of a larger one) is read through and left out; the records
// after it are kept, and the snapshot is not called damaged.
func TestRestoreLeavesOutValuesLargerThanTheBudget(t *testing.T) {
	bigReg, big := newSnapNode(t, &snapSource{}, 1<<20, nil)
	huge := bytes.Repeat([]byte("x"), 100<<10)
	peerWrite(t, bigReg, big, "huge", huge)
	for i := range 10 {
		_, _ = big.Get(t.Context(), fmt.Sprintf("k%03d", i))
	}
	var buf bytes.Buffer
	if n, err := big.Snapshot(t.Context(), &buf); err != nil || n != 11 {
		t.Fatalf("Snapshot = %d, %v; want 11", n, err)
	}
	src := &snapSource{}
	small := newSnapGroup(t, src, 8<<10, nil)
	n, err := small.Restore(t.Context(), &buf)
	if err != nil || n != 10 {
		t.Fatalf("Restore = %d, %v; want the 10 values that fit, no error", n, err)
	}
	for i := range 10 {
		mustGetValue(t, small, fmt.Sprintf("k%03d", i))
	}
	if l := src.loads.Load(); l != 0 {
		t.Fatalf("%d loads; want 0", l)
	}
}

func mustGetValue(t *testing.T, g *cache.Group, key string) {
	t.Helper()
	if v, err := g.Get(t.Context(), key); err != nil || v.String() != "value of "+key {
		t.Fatalf("Get(%q) = %q, %v", key, v, err)
	}
}

// Restore keeps only the keys this node owns by its peers.
func TestRestoreSkipsKeysOtherNodesOwn(t *testing.T) {
	snap := warmSnapshot(t, 100, 0)
	src := &snapSource{}
	mine := func(key string) bool { return key[len(key)-1]%2 == 0 }
	g := newSnapGroup(t, src, 1<<20, &cache.GroupOptions{Peers: evenPicker{mine}, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	n, err := g.Restore(t.Context(), bytes.NewReader(snap))
	if err != nil || n != 50 {
		t.Fatalf("Restore = %d, %v; want the 50 keys this node owns", n, err)
	}
	for i := range 100 {
		key := fmt.Sprintf("k%03d", i)
		if !mine(key) {
			continue
		}
		mustGetValue(t, g, key)
	}
	if l := src.loads.Load(); l != 0 {
		t.Fatalf("%d loads of keys this node owns; want 0", l)
	}
}

// evenPicker owns the keys mine says; the others belong to a peer that
// fails every request.
type evenPicker struct{ mine func(string) bool }

func (p evenPicker) PickPeer(key string) (cache.Peer, bool) {
	if p.mine(key) {
		return nil, false
	}
	return deadPeer{}, true
}

type deadPeer struct{ cache.Peer }

func (deadPeer) Addr() string { return "dead" }

// A key removed, replaced or purged while Restore runs does not come back
// from the snapshot, whether its record was read before the change or
// after; a key held before Restore stays as it was.
func TestRestoreDoesNotBringBackAKeyChangedMeanwhile(t *testing.T) {
	snap := warmSnapshot(t, 100, 0)
	half := len(snap) / 2
	var early, late string // a key of each half of the snapshot
	for i := range 100 {
		key := fmt.Sprintf("k%03d", i)
		switch at := bytes.Index(snap, []byte(key)); {
		case at < half-100 && early == "":
			early = key
		case at > half+100 && late == "":
			late = key
		}
	}
	for _, change := range []string{"remove", "set", "purge"} {
		t.Run(change, func(t *testing.T) {
			src := &snapSource{}
			reg, g := newSnapNode(t, src, 1<<20, nil)
			peerWrite(t, reg, g, "k050", []byte("held before"))
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				_, err := g.Restore(context.Background(), pr)
				done <- err
			}()
			if _, err := pw.Write(snap[:half]); err != nil {
				t.Fatal(err)
			}
			// Restore has read the first half; wait until it has kept
			// a record of it.
			for deadline := time.Now().Add(10 * time.Second); g.Stats().Main.Items < 2; {
				if time.Now().After(deadline) {
					t.Fatal("Restore kept nothing of the first half in 10 s")
				}
				time.Sleep(time.Millisecond)
			}
			src.v2.Store(true) // the source's values change with the keys
			switch change {
			case "remove":
				peerWrite(t, reg, g, early, nil)
				peerWrite(t, reg, g, late, nil)
			case "set":
				peerWrite(t, reg, g, early, []byte("new"))
				peerWrite(t, reg, g, late, []byte("new"))
			case "purge":
				if err := g.Purge(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := pw.Write(snap[half:]); err != nil {
				t.Fatal(err)
			}
			_ = pw.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{early, late} {
				want := "value of " + key + " v2" // loaded again
				if change == "set" {
					want = "new"
				}
				if v, err := g.Get(t.Context(), key); err != nil || v.String() != want {
					t.Fatalf("Get(%q) = %q, %v; want %q", key, v, err, want)
				}
			}
			if v, err := g.Get(t.Context(), "k050"); change != "purge" && v.String() != "held before" {
				t.Fatalf("Get(k050) = %q, %v; want the value held before Restore", v, err)
			}
		})
	}
}

// A key removed (or set) here before Restore began does not come back
// either: the snapshot is older than the change.
func TestRestoreLeavesOutKeysChangedBefore(t *testing.T) {
	snap := warmSnapshot(t, 100, 0)
	src := &snapSource{}
	reg, g := newSnapNode(t, src, 1<<20, nil)
	src.v2.Store(true)
	peerWrite(t, reg, g, "k010", nil) // not held: only its stripe's generation moves
	n, err := g.Restore(t.Context(), bytes.NewReader(snap))
	if err != nil || n < 90 || n > 99 {
		t.Fatalf("Restore = %d, %v; want all but k010 and the few keys that share its stripe", n, err)
	}
	if v, err := g.Get(t.Context(), "k010"); err != nil || v.String() != "value of k010 v2" {
		t.Fatalf("Get(k010) = %q, %v; want the source's value now", v, err)
	}
}

// A restored value expires when it would have, and no later than the
// restoring group's TTL allows; one expired at the snapshot is not kept.
func TestRestoredValuesExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Cleanup(settleBubble)
		src := &snapSource{}
		old := newSnapGroup(t, src, 1<<20, &cache.GroupOptions{TTL: 10 * time.Second})
		_, _ = old.Get(t.Context(), "k000")
		time.Sleep(5 * time.Second)
		_, _ = old.Get(t.Context(), "k001")
		time.Sleep(4 * time.Second) // k000 has 1 s left, k001 6 s
		var buf bytes.Buffer
		if n, err := old.Snapshot(t.Context(), &buf); err != nil || n != 2 {
			t.Fatalf("Snapshot = %d, %v; want 2", n, err)
		}
		snap := buf.Bytes()

		same := newSnapGroup(t, src, 1<<20, &cache.GroupOptions{TTL: 10 * time.Second})
		shorter := newSnapGroup(t, src, 1<<20, &cache.GroupOptions{TTL: 3 * time.Second})
		for _, g := range []*cache.Group{same, shorter} {
			if _, err := g.Restore(t.Context(), bytes.NewReader(snap)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second) // k000 expired everywhere; k001 fresh
		loads := src.loads.Load()
		for _, g := range []*cache.Group{same, shorter} {
			mustGetValue(t, g, "k001")
			mustGetValue(t, g, "k000")
		}
		if got := src.loads.Load() - loads; got != 2 {
			t.Fatalf("%d loads; want 2 (k000 at each group)", got)
		}
		time.Sleep(2 * time.Second) // k001: 2 s left in same; past the 3 s of shorter
		loads = src.loads.Load()
		mustGetValue(t, same, "k001")
		if got := src.loads.Load() - loads; got != 0 {
			t.Fatalf("k001 loaded again at the group with the same TTL")
		}
		mustGetValue(t, shorter, "k001")
		if got := src.loads.Load() - loads; got != 1 {
			t.Fatalf("k001 not loaded again past the shorter TTL")
		}

		time.Sleep(10 * time.Second) // everything old held has expired
		buf.Reset()
		if n, err := old.Snapshot(t.Context(), &buf); err != nil || n != 0 {
			t.Fatalf("Snapshot of expired values = %d, %v; want 0", n, err)
		}
	})
}

func TestSnapshotAndRestoreStopWithTheirContext(t *testing.T) {
	snap := warmSnapshot(t, 10, 0)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	g := newSnapGroup(t, &snapSource{}, 1<<20, nil)
	if n, err := g.Restore(ctx, bytes.NewReader(snap)); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("Restore = %d, %v; want 0, context.Canceled", n, err)
	}
	_, _ = g.Get(t.Context(), "k000")
	if _, err := g.Snapshot(ctx, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("Snapshot = %v; want context.Canceled", err)
	}
}

func TestSnapshotReportsAWriteError(t *testing.T) {
	g := newSnapGroup(t, &snapSource{}, 1<<20, nil)
	_, _ = g.Get(t.Context(), "k000")
	disk := errors.New("disk full")
	if _, err := g.Snapshot(t.Context(), failingWriter{disk}); !errors.Is(err, disk) {
		t.Fatalf("Snapshot = %v; want the writer's error", err)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// Snapshot runs while the group serves (go test -race checks it).
func TestSnapshotWhileServing(t *testing.T) {
	src := &snapSource{}
	g := newSnapGroup(t, src, 8<<10, nil)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = g.Get(context.Background(), fmt.Sprintf("k%03d", i%700))
		}
	}()
	for range 20 {
		var buf bytes.Buffer
		if _, err := g.Snapshot(t.Context(), &buf); err != nil {
			t.Fatal(err)
		}
		other := newSnapGroup(t, &snapSource{}, 8<<10, nil)
		if _, err := other.Restore(t.Context(), &buf); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	<-done
}

// FuzzRestore: no input makes Restore panic or hold more than the budget.
func FuzzRestore(f *testing.F) {
	f.Add(warmSnapshot(f, 5, 2))
	f.Add([]byte("GCSNAP\x00\x01\x01g"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const budget = 2 << 10
		g := newSnapGroup(t, &snapSource{}, budget, &cache.GroupOptions{NotFoundTTL: time.Hour})
		n, err := g.Restore(t.Context(), bytes.NewReader(data))
		st := g.Stats()
		if st.Main.Bytes+st.Hot.Bytes > budget || int64(n) != st.Main.Items {
			t.Fatalf("Restore = %d, %v: %d entries, %d bytes held", n, err, st.Main.Items, st.Main.Bytes)
		}
	})
}

// A group without NotFoundTTL caches no "not found" (a key created later
// is found at once), and a snapshot taken with one set must not make it
// cache one: its "not found" records are left out.
func TestRestoreKeepsNoNotFoundWithoutNotFoundTTL(t *testing.T) {
	snap := warmSnapshot(t, 3, 3)
	created := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		return []byte("value of " + key), nil // the missing keys exist now
	})
	g := newSnapGroup(t, created, 1<<20, nil)
	n, err := g.Restore(context.Background(), bytes.NewReader(snap))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		key := fmt.Sprintf("missing%03d", i)
		if v, err := g.Get(context.Background(), key); err != nil || v.String() != "value of "+key {
			t.Fatalf("Get(%q) after Restore = %q, %v; want its value (the group caches no \"not found\")", key, v, err)
		}
	}
	if n != 3 {
		t.Fatalf("Restore kept %d records; want the 3 values only", n)
	}
}
