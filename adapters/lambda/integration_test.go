//go:build linux

package lambda

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// checkAll asks every node for every key and checks the answers.
func checkAll(t *testing.T, c *userClient, nodes []string) {
	t.Helper()
	for _, node := range nodes {
		for key, want := range seedScores {
			if code, body := c.get(t, node, "scores", key); code != 200 || string(body) != want {
				t.Errorf("%s: %s = %d %q, want %s", node, key, code, body, want)
			}
		}
		if code, body := c.get(t, node, "scores", "kkk"); code != 404 || !strings.Contains(string(body), "key not found") {
			t.Errorf("%s: kkk = %d %q, want 404 key not found", node, code, body)
		}
		if code, body := c.get(t, node, "blobs", "all-bytes"); code != 200 || !bytes.Equal(body, allBytes()) {
			t.Errorf("%s: blobs/all-bytes = %d, %d bytes, not 0..255", node, code, len(body))
		}
	}
}

func owners(nodes []string) *picker.Peers {
	p, err := picker.NewPeers(nodes[0], func(string) cache.Peer { return nil }, &picker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	if err := p.Set(nodes...); err != nil {
		panic(err)
	}
	return p
}

// checkOwnerLoads checks that each key was loaded by its owner only, and
// each existing key exactly once in the cluster. loads[i] are node i's loads by "group/key".
func checkOwnerLoads(t *testing.T, nodes []string, loads []map[string]int) {
	t.Helper()
	ring := owners(nodes)
	keys := []string{"scores/kkk", "blobs/all-bytes"}
	for k := range seedScores {
		keys = append(keys, "scores/"+k)
	}
	for _, gk := range keys {
		key := gk[strings.Index(gk, "/")+1:]
		for i, node := range nodes {
			got, owner := loads[i][gk], ring.Owner(key) == node
			switch {
			case !owner && got != 0:
				t.Errorf("%s loaded %s %d times, but %s owns it", node, gk, got, ring.Owner(key))
			case owner && gk == "scores/kkk" && got == 0:
				// "Not found" is not cached, so every ask reaches the
				// owner's source; only the owner's.
				t.Errorf("owner %s never loaded %s", node, gk)
			case owner && gk != "scores/kkk" && got != 1:
				t.Errorf("owner %s loaded %s %d times, want 1", node, gk, got)
			}
		}
	}
}

func TestRIECluster(t *testing.T) {
	rie := rieBinary(t)
	bootstrap := buildBootstrap(t)
	const secret = "integration-secret"
	lns := []net.Listener{listen(t), listen(t), listen(t)}
	var nodes []string
	for _, ln := range lns {
		nodes = append(nodes, "http://"+ln.Addr().String())
	}
	ems := lambdaCluster(t, rie, bootstrap, lns, nodes, secret)
	c := newUserClient(t, secret)

	checkAll(t, c, nodes)
	checkOwnerLoads(t, nodes, waitLoads(t, ems, 5))
	// A signed caller is trusted with the owner's own words; an unsigned
	// one (TestRIEFailoverCold) gets the generic message.
	if code, body := c.get(t, nodes[1], "scores", "kkk"); code != 404 || !strings.Contains(string(body), "kkk not exist") {
		t.Errorf("signed caller: kkk = %d %q, want the owner's message", code, body)
	}

	// Auth is on: an unsigned request is refused and loads nothing.
	if code, _ := newUserClient(t, "").get(t, nodes[0], "scores", "Unsigned"); code != 401 {
		t.Errorf("unsigned request: %d, want 401", code)
	}

	// Kill the owner of Tom: the front answers 502 for it, and the other
	// nodes still answer every key (the hot copy, or a local load).
	dead := owners(nodes).Owner("Tom")
	var alive []string
	for i, n := range nodes {
		if n == dead {
			ems[i].kill()
		} else {
			alive = append(alive, n)
		}
	}
	if code, _ := c.get(t, dead, "scores", "Tom"); code != http.StatusBadGateway {
		t.Errorf("dead node's front: %d, want 502", code)
	}
	checkAll(t, c, alive)
}

// TestRIEFailoverCold kills a node before any traffic, so that the others
// must load its keys themselves.
func TestRIEFailoverCold(t *testing.T) {
	rie := rieBinary(t)
	bootstrap := buildBootstrap(t)
	lns := []net.Listener{listen(t), listen(t), listen(t)}
	var nodes []string
	for _, ln := range lns {
		nodes = append(nodes, "http://"+ln.Addr().String())
	}
	ems := lambdaCluster(t, rie, bootstrap, lns, nodes, "")
	dead := owners(nodes).Owner("Tom")
	var alive []string
	var aliveEms []*emulator
	for i, n := range nodes {
		if n == dead {
			ems[i].kill()
		} else {
			alive, aliveEms = append(alive, n), append(aliveEms, ems[i])
		}
	}
	checkAll(t, newUserClient(t, ""), alive)
	if code, body := newUserClient(t, "").get(t, alive[0], "scores", "kkk"); code != 404 || strings.Contains(string(body), "kkk not exist") {
		t.Errorf("unsigned caller: kkk = %d %q, want 404 without the source's message", code, body)
	}
	loads := waitLoads(t, aliveEms, 2)
	// Tom's owner is gone: its keys go to the next live node on the ring,
	// which loads Tom once for both survivors, not once each.
	total := 0
	for i, n := range alive {
		t.Logf("%s loaded Tom %d times", n, loads[i]["scores/Tom"])
		total += loads[i]["scores/Tom"]
	}
	if total != 1 {
		t.Errorf("the survivors loaded Tom %d times in all, want 1 (the next live node)", total)
	}
}

// TestRIEMixedCluster runs one net/http node in-process and two Lambda
// nodes under the emulator, serving each other.
func TestRIEMixedCluster(t *testing.T) {
	rie := rieBinary(t)
	bootstrap := buildBootstrap(t)
	const secret = "mixed-secret"
	httpLn := listen(t)
	lns := []net.Listener{listen(t), listen(t)}
	nodes := []string{"http://" + httpLn.Addr().String()}
	for _, ln := range lns {
		nodes = append(nodes, "http://"+ln.Addr().String())
	}

	// The net/http node, with the example's groups and a load counter.
	var httpLoads [5]atomic.Int64 // Tom, Jack, Sam, kkk, all-bytes
	index := map[string]int{"scores/Tom": 0, "scores/Jack": 1, "scores/Sam": 2, "scores/kkk": 3, "blobs/all-bytes": 4}
	count := func(group string, g getter.Getter) getter.Getter {
		return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			if i, ok := index[group+"/"+key]; ok {
				httpLoads[i].Add(1)
			}
			return g.Get(ctx, key)
		})
	}
	reg := cache.NewRegistry()
	pool, err := nethttp.NewPool(nodes[0], reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte(secret), MaxValueBytes: maxValueBytes}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Set(nodes...); err != nil {
		t.Fatal(err)
	}
	scores := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		if v, ok := seedScores[key]; ok {
			return []byte(v), nil
		}
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	})
	blobs := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		if key == "all-bytes" {
			return allBytes(), nil
		}
		return nil, getter.ErrNotFound
	})
	for name, g := range map[string]getter.Getter{"scores": count("scores", scores), "blobs": count("blobs", blobs)} {
		if _, err := reg.NewGroup(name, 1<<20, g, &cache.GroupOptions{Peers: pool}); err != nil {
			t.Fatal(err)
		}
	}
	srv := nethttp.NewServer("", pool, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(httpLn) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		_ = pool.Close()
	})

	ems := lambdaCluster(t, rie, bootstrap, lns, nodes, secret)
	checkAll(t, newUserClient(t, secret), nodes)

	httpMap := map[string]int{}
	total := 0
	for gk, i := range index {
		if n := int(httpLoads[i].Load()); n > 0 {
			httpMap[gk] = n
			total += n
		}
	}
	loads := append([]map[string]int{httpMap}, waitLoads(t, ems, 5-total)...)
	checkOwnerLoads(t, nodes, loads)
}
