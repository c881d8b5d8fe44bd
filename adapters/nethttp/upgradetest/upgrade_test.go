//go:build !js && !wasip1

package upgradetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// previousRelease is the commit of the release the current tree must work
// with in one cluster. Retarget the test at a newer release by changing it
// (see the package doc).
const previousRelease = "b1a105b"

// What the demo of previousRelease runs: its group, its cache size and its
// data (examples/internal/seeddb.Scores at that commit). The current nodes
// use the same, so that every node answers alike.
const (
	groupName  = "scores"
	cacheBytes = 2 << 10
)

func demoScores() map[string]string {
	return map[string]string{"Tom": "630", "Jack": "589", "Sam": "567", "Ben": "582", "Leo": "604"}
}

const (
	// secret is the cluster secret of every node: the old ones read it
	// from $GEECACHE_SECRET.
	secret = "rolling-upgrade-test-secret"

	// sourceDelay is how long every lookup in the source takes, on every
	// node (the old ones' -delay). It is longer than 500 ms, so that an
	// owner that repeated its 102 Processing every 100 ms to an HTTP/1.1
	// caller would send the sixth that net/http refuses, and shorter than
	// the one second an old caller waits for a loading owner.
	sourceDelay = 650 * time.Millisecond

	// hedgeMin is the new nodes' PeerPolicy.HedgeMin, below sourceDelay.
	hedgeMin = 300 * time.Millisecond

	// testTimeout bounds each cluster's checks.
	testTimeout = 2 * time.Minute
)

// lookupLine is the line an old node logs for each lookup in its source.
var lookupLine = regexp.MustCompile(`msg="\[SlowDB\] search key".* key=(\S+)`)

func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and runs it beside this tree; skipped with -short")
	}
	bin := buildPrevious(t)
	t.Run("http1", func(t *testing.T) { testMixedCluster(t, bin, false) })
	t.Run("multiplex", func(t *testing.T) { testMixedCluster(t, bin, true) })
}

// buildPrevious checks previousRelease out into a temporary worktree and
// builds its examples/cluster there, returning the binary's path. It
// skips the test when git or go is missing or the commit is not here.
func buildPrevious(t *testing.T) string {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skipf("git is not on PATH; this test checks out the previous release (%s) with it", previousRelease)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH; this test builds the previous release (%s) with it", previousRelease)
	}
	top, err := exec.Command(gitBin, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (git rev-parse: %v); this test needs the repository's history", err)
	}
	repo := strings.TrimSpace(string(top))
	if err := exec.Command(gitBin, "-C", repo, "cat-file", "-e", previousRelease+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s (the previous release) is not in this repository, a shallow clone perhaps: "+
			"fetch the full history (git fetch --unshallow) to run this test", previousRelease)
	}
	dir := filepath.Join(t.TempDir(), "previous")
	if out, err := exec.Command(gitBin, "-C", repo, "worktree", "add", "--detach", dir, previousRelease).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add %s: %v\n%s", previousRelease, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(gitBin, "-C", repo, "worktree", "remove", "--force", dir).CombinedOutput(); err != nil {
			t.Errorf("git worktree remove %s: %v\n%s", dir, err, out)
		}
	})
	bin := filepath.Join(t.TempDir(), "cluster")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	// -trimpath keeps the temporary directory out of the build cache's
	// keys, so that later runs build from the cache; -buildvcs=false keeps
	// git out of the build.
	build := exec.Command(goBin, "build", "-trimpath", "-buildvcs=false", "-o", bin, "./examples/cluster")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off")
	begin := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/cluster at %s: %v\n%s", previousRelease, err, out)
	}
	t.Logf("built examples/cluster of %s in %v", previousRelease, time.Since(begin).Round(time.Millisecond))
	return bin
}

// A member is a node of the mixed cluster, as the checks ask it.
type member struct {
	name string
	url  string
	// get returns key's value as the node answers it, found false for
	// a key the source does not have.
	get func(ctx context.Context, key string) (value string, found bool, err error)
	// lookups returns how many times the node has looked key up in its
	// source.
	lookups func(key string) int
	// api is an old node's API address, "" for a new node.
	api string
}

// testMixedCluster runs two old nodes and two current ones, the current
// ones multiplexed if mux, and checks that they serve as one cluster.
func testMixedCluster(t *testing.T, bin string, mux bool) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	var newLog lockedBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of the current nodes:\n%s", newLog.String())
		}
	})
	log := slog.New(slog.NewTextHandler(&newLog, &slog.HandlerOptions{Level: slog.LevelDebug}))
	upgrades := &upgradeSniffer{seen: map[string]int{}}

	var news []*member
	var nodes []*nethttp.Node
	var groups []*cache.Group
	for i := range 2 {
		tr := nethttp.NewTransport()
		dial := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &sniffConn{Conn: c, addr: addr, s: upgrades}, nil
		}
		t.Cleanup(tr.CloseIdleConnections)
		db := newSource(demoScores(), sourceDelay)
		reg := cache.NewRegistry()
		nlog := log.With("node", fmt.Sprintf("new%d", i))
		node, err := nethttp.Listen("127.0.0.1:0", reg, &nethttp.NodeOptions{Pool: nethttp.PoolOptions{
			Cluster: nethttp.Cluster{Secret: []byte(secret)}, Logger: nlog, Transport: tr, Multiplex: mux}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := node.Close(); err != nil {
				t.Errorf("closing %s: %v", node.URL(), err)
			}
		})
		// HedgeMin: a new node waits that long for its owner to answer or
		// say it is loading before it loads the key itself: within the
		// source's delay, so that an owner that did not say so would be
		// seen, and far above the default 10 ms, which a busy machine can
		// exceed.
		g, err := reg.NewGroup(groupName, cacheBytes, db.getter(), &cache.GroupOptions{Peers: node.Pool(), Logger: nlog,
			PeerPolicy: cache.PeerPolicy{HedgeMin: hedgeMin}})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, node)
		groups = append(groups, g)
		news = append(news, &member{
			name: fmt.Sprintf("new node %s", node.URL()),
			url:  node.URL(),
			get: func(ctx context.Context, key string) (string, bool, error) {
				v, err := g.Get(ctx, key)
				if errors.Is(err, getter.ErrNotFound) {
					return "", false, nil
				}
				return v.String(), err == nil, err
			},
			lookups: db.lookups,
		})
	}

	// The old nodes' ports are picked so that the old and the new nodes
	// each own one of the demo's keys at least; a missing key is picked
	// for each node to own.
	newURLs := []string{nodes[0].URL(), nodes[1].URL()}
	oldURLs, missing := pickOldURLs(t, newURLs)
	peers := append(append([]string(nil), newURLs...), oldURLs...)
	for _, n := range nodes {
		if err := n.Pool().Set(peers...); err != nil {
			t.Fatal(err)
		}
	}
	var olds []*member
	for _, u := range oldURLs {
		olds = append(olds, startOldNode(ctx, t, bin, u, peers))
	}
	all := append(append([]*member(nil), news...), olds...)
	owner := nodes[0].Pool().Owner
	for _, k := range sortedKeys(demoScores()) {
		t.Logf("%s is owned by %s", k, owner(k))
	}

	// 1. Every node answers every key, and the missing keys, each loaded
	// once in the cluster however many nodes ask for it at once: the
	// owner, old or new, says it is loading (102 Processing), and the
	// callers, new or old, wait for it instead of loading the key
	// themselves (a hedge). Only this first round counts every node's
	// loads: each node's hedge delay then is its initial 100 ms (the old
	// nodes) or HedgeMin (the new ones); later, the delay follows the
	// fetches seen and drops towards 10 ms, which a busy machine can
	// exceed; the later rounds count the owner's loads alone.
	want := demoScores()
	for _, k := range missing {
		want[k] = ""
	}
	checkAll(ctx, t, "every node asks for every key at once", all, want)
	checkLoads(t, all, demoScores(), 1)

	// With Multiplex, the new nodes asked the old ones over a multiplexed
	// connection, which the old ones took; without it, over HTTP/1.1.
	for _, u := range oldURLs {
		host := strings.TrimPrefix(u, "http://")
		switch n := upgrades.count(host); {
		case mux && n == 0:
			t.Errorf("Multiplex: no connection to the old node %s was upgraded", u)
		case !mux && n != 0:
			t.Errorf("without Multiplex: %d connections to the old node %s were upgraded", n, u)
		}
	}

	// 2. A Set from a new node reaches every node, old ones included; the
	// owner's source is not asked.
	set := map[string]string{}
	for i, k := range sortedKeys(demoScores()) {
		set[k] = "set-" + k
		if err := groups[i%len(groups)].Set(ctx, k, []byte(set[k]), 0); err != nil {
			t.Errorf("Set(%s) from %s: %v", k, news[i%len(news)].name, err)
		}
	}
	checkAll(ctx, t, "after a Set from a new node", all, set)
	checkOwnerLoads(t, all, demoScores(), owner, 1)

	// 3. A Remove from a new node, and a DELETE through an old node's API,
	// reach every node: the next Gets load the key anew, at its owner.
	for i, k := range sortedKeys(demoScores()) {
		if i%2 == 0 {
			if err := groups[i/2%len(groups)].Remove(ctx, k); err != nil {
				t.Errorf("Remove(%s) from %s: %v", k, news[i/2%len(news)].name, err)
			}
			continue
		}
		if err := oldDelete(ctx, olds[i/2%len(olds)], k); err != nil {
			t.Error(err)
		}
	}
	checkAll(ctx, t, "after a Remove from a new node and a DELETE through an old one", all, demoScores())
	checkOwnerLoads(t, all, demoScores(), owner, 2)
}

// checkAll asks every member for every key of want at once and checks the
// answers: want[k] "" means k is missing.
func checkAll(ctx context.Context, t *testing.T, when string, members []*member, want map[string]string) {
	t.Helper()
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for _, m := range members {
		for k, w := range want {
			wg.Go(func() {
				v, found, err := m.get(ctx, k)
				var e string
				switch {
				case err != nil:
					e = fmt.Sprintf("%s: Get(%s): %v", m.name, k, err)
				case w == "" && found:
					e = fmt.Sprintf("%s: Get(%s) = %q; want not found", m.name, k, v)
				case w != "" && (!found || v != w):
					e = fmt.Sprintf("%s: Get(%s) = %q, found %v; want %q", m.name, k, v, found, w)
				}
				if e != "" {
					mu.Lock()
					errs = append(errs, e)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	slices.Sort(errs)
	for _, e := range errs {
		t.Errorf("%s: %s", when, e)
	}
}

// checkLoads checks that each key of keys was looked up n times in all in
// the sources of members.
func checkLoads(t *testing.T, members []*member, keys map[string]string, n int) {
	t.Helper()
	for _, k := range sortedKeys(keys) {
		total := 0
		var by []string
		for _, m := range members {
			if c := m.lookups(k); c > 0 {
				total += c
				by = append(by, fmt.Sprintf("%s: %d", m.name, c))
			}
		}
		if total != n {
			t.Errorf("%s was looked up %d times in the cluster's sources (%s); want %d", k, total, strings.Join(by, ", "), n)
		}
	}
}

// checkOwnerLoads checks that each key of keys was looked up n times in
// the source of its owner, the member owner(k) names.
func checkOwnerLoads(t *testing.T, members []*member, keys map[string]string, owner func(string) string, n int) {
	t.Helper()
	for _, k := range sortedKeys(keys) {
		i := slices.IndexFunc(members, func(m *member) bool { return m.url == owner(k) })
		if i < 0 {
			t.Errorf("%s is owned by %s, not a member", k, owner(k))
			continue
		}
		if c := members[i].lookups(k); c != n {
			t.Errorf("%s was looked up %d times in the source of its owner, %s; want %d", k, c, members[i].name, n)
		}
	}
}

// pickOldURLs returns the URLs of two old nodes on free ports of
// 127.0.0.1, picked so that, on the ring of newURLs and them, the new and
// the old nodes each own one of the demo's keys at least, and a missing
// key owned by each node. The ports are free when picked: an old node
// listens on its own once it starts.
func pickOldURLs(t *testing.T, newURLs []string) (oldURLs, missing []string) {
	t.Helper()
	for range 200 {
		oldURLs = []string{"http://" + freeAddr(t), "http://" + freeAddr(t)}
		ring, err := picker.NewPeers(newURLs[0], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ring.Set(append(append([]string(nil), newURLs...), oldURLs...)...); err != nil {
			t.Fatal(err)
		}
		var byOld, byNew bool
		for k := range demoScores() {
			o := ring.Owner(k)
			byOld = byOld || slices.Contains(oldURLs, o)
			byNew = byNew || slices.Contains(newURLs, o)
		}
		if !byOld || !byNew {
			continue
		}
		missing = nil
		for _, u := range append(append([]string(nil), newURLs...), oldURLs...) {
			for i := 0; ; i++ {
				if k := fmt.Sprintf("missing-%d", i); ring.Owner(k) == u {
					missing = append(missing, k)
					break
				}
			}
		}
		return oldURLs, missing
	}
	t.Fatal("no ports found on which the old and the new nodes each own one of the demo's keys")
	return nil, nil
}

// freeAddr returns a 127.0.0.1 address with a port the OS picked, free
// when it returns.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// startOldNode starts the previous release's demo as the node self of
// peers, with its API on a port of its own, and returns it once its API
// answers. t.Cleanup kills it, and logs its output if the test failed.
func startOldNode(ctx context.Context, t *testing.T, bin, self string, peers []string) *member {
	t.Helper()
	u, err := url.Parse(self)
	if err != nil {
		t.Fatal(err)
	}
	api := freeAddr(t)
	cmd := exec.Command(bin, "-port="+u.Port(), "-peers="+strings.Join(peers, ","), "-api="+api, "-delay="+sourceDelay.String())
	cmd.Env = append(os.Environ(), "GEECACHE_SECRET="+secret)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the old node %s: %v", self, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("output of the old node %s:\n%s", self, out.String())
		}
	})
	m := &member{
		name: "old node " + self,
		url:  self,
		get: func(ctx context.Context, key string) (string, bool, error) {
			code, body, err := oldAPI(ctx, http.MethodGet, api, key)
			switch {
			case err != nil:
				return "", false, err
			case code == http.StatusOK:
				return strings.TrimSuffix(body, "\n"), true, nil
			case code == http.StatusNotFound:
				return "", false, nil
			}
			return "", false, fmt.Errorf("API answered %d %q", code, body)
		},
		lookups: func(key string) int {
			n := 0
			for _, l := range lookupLine.FindAllStringSubmatch(out.String(), -1) {
				if l[1] == key {
					n++
				}
			}
			return n
		},
	}
	m.api = api

	// The API answers 400 to a request without a key, which loads
	// nothing; it is served once the node is.
	for {
		code, _, err := oldAPI(ctx, http.MethodGet, api, "")
		if err == nil && code == http.StatusBadRequest {
			return m
		}
		select {
		case <-exited:
			t.Fatalf("the old node %s exited before it served (%v):\n%s", self, waitErr, out.String())
		case <-ctx.Done():
			t.Fatalf("the old node %s did not serve its API on %s: %v (last: %v, %d)", self, api, ctx.Err(), err, code)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// apiClient asks the old nodes' APIs, each request on a connection of its
// own, so that none is left open to a node that has exited.
var apiClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// oldAPI sends method /api?key=key (no key if "") to an old node's API on
// addr and returns the answer's status and body.
func oldAPI(ctx context.Context, method, addr, key string) (int, string, error) {
	target := "http://" + addr + "/api"
	if key != "" {
		target += "?key=" + url.QueryEscape(key)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// oldDelete removes key from the cluster through an old node's API.
func oldDelete(ctx context.Context, m *member, key string) error {
	code, body, err := oldAPI(ctx, http.MethodDelete, m.api, key)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("API answered %d %q", code, body)
	}
	if err != nil {
		return fmt.Errorf("%s: DELETE %s: %w", m.name, key, err)
	}
	return nil
}

// A source is a current node's source: the demo's data, each lookup
// taking delay, counted by key.
type source struct {
	data  map[string]string
	delay time.Duration

	mu     sync.Mutex
	counts map[string]int
}

func newSource(data map[string]string, delay time.Duration) *source {
	return &source{data: data, delay: delay, counts: map[string]int{}}
}

func (s *source) getter() getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		s.mu.Lock()
		s.counts[key]++
		s.mu.Unlock()
		timer := time.NewTimer(s.delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
		v, ok := s.data[key]
		if !ok {
			return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
		}
		return []byte(v), nil
	})
}

func (s *source) lookups(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[key]
}

// An upgradeSniffer counts, by peer address, the connections a new node
// opened whose first answer was 101 Switching Protocols: the peer took
// the multiplexed carriage.
type upgradeSniffer struct {
	mu   sync.Mutex
	seen map[string]int
}

func (s *upgradeSniffer) count(addr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[addr]
}

// A sniffConn is a connection to addr whose first bytes read are checked
// for a 101.
type sniffConn struct {
	net.Conn
	addr string
	s    *upgradeSniffer
	head []byte // the first bytes read, until there are enough
	done bool
}

var switching = []byte("HTTP/1.1 101 ")

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done {
		c.head = append(c.head, p[:n]...)
		if len(c.head) >= len(switching) || err != nil {
			c.done = true
			if bytes.HasPrefix(c.head, switching) {
				c.s.mu.Lock()
				c.s.seen[c.addr]++
				c.s.mu.Unlock()
			}
			c.head = nil
		}
	}
	return n, err
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
