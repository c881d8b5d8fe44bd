//go:build linux

package lambda

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// invokeEnv is the environment of an emulated node named name, whose
// peers (names) are invoked through the Lambda API at endpoints (name=URL
// pairs), with static credentials and no AWS configuration files.
func invokeEnv(t testing.TB, name string, names []string, endpoints []string, mode string) []string {
	none := filepath.Join(t.TempDir(), "none")
	return []string{
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
		envPeers + "=" + strings.Join(names, ","),
		envEndpoints + "=" + strings.Join(endpoints, ","),
		envInvokeMode + "=" + mode,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"AWS_CONFIG_FILE=" + none,
		"AWS_SHARED_CREDENTIALS_FILE=" + none,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// invokeNodes starts one emulator per function name, with the given invoke
// modes, behind a gate (serveGate) that all its callers invoke it
// through, and a Front before each for the test's own (user) requests.
// Peers reach each other through the Invoke API; extra names (net/http
// nodes) join the ring. It returns the fronts' URLs, the emulators, and
// the name=endpoint pairs.
func invokeNodes(t *testing.T, names, modes, extra []string) ([]string, []*emulator, []string) {
	rie := rieBinary(t)
	bootstrap := buildBootstrap(t)
	gates := make([]net.Listener, len(names))
	var eps []string
	for i, n := range names {
		gates[i] = listen(t)
		eps = append(eps, n+"=http://"+gates[i].Addr().String())
	}
	ring := append(append([]string{}, names...), extra...)
	var fronts []string
	var ems []*emulator
	for i, n := range names {
		e := startEmulator(t, rie, bootstrap, invokeEnv(t, n, ring, eps, modes[i]))
		serveGate(t, gates[i], e.addr)
		ln := listen(t)
		serveFront(t, ln, "http://"+gates[i].Addr().String(), 20*time.Second)
		fronts = append(fronts, "http://"+ln.Addr().String())
		ems = append(ems, e)
	}
	warmUp(t, fronts)
	return fronts, ems, eps
}

// TestRIEInvokeCluster: three Lambda nodes named by function (one of them
// streaming) reach each other through the Invoke API under the real
// emulator: every key from every node, each loaded by its owner only; then
// the owner of Tom is killed and the others answer everything.
func TestRIEInvokeCluster(t *testing.T) {
	names := []string{"geecache-a", "geecache-b", "geecache-c"}
	fronts, ems, _ := invokeNodes(t, names, []string{modeBuffered, modeBuffered, modeStream}, nil)
	c := newUserClient(t, "")
	checkAll(t, c, fronts)
	checkOwnerLoads(t, names, waitLoads(t, ems, 5))

	dead := owners(names).Owner("Tom")
	var alive []string
	for i, n := range names {
		if n == dead {
			ems[i].kill()
		} else {
			alive = append(alive, fronts[i])
		}
	}
	checkAll(t, c, alive)
}

// TestRIEInvokeMixedCluster: a net/http node (in-process, with a Peers
// picker) and two Lambda nodes (one streaming) under the emulator, on one
// ring. Lambda nodes reach the net/http node over HTTP and each other
// through the Invoke API; the net/http node invokes them through the SDK.
func TestRIEInvokeMixedCluster(t *testing.T) {
	httpLn := listen(t)
	self := "http://" + httpLn.Addr().String()
	names := []string{"geecache-a", "geecache-b"}
	fronts, ems, eps := invokeNodes(t, names, []string{modeBuffered, modeStream}, []string{self})

	endpoint := map[string]string{}
	for _, p := range eps {
		n, ep, _ := strings.Cut(p, "=")
		endpoint[n] = ep
	}
	quiet := slog.New(slog.DiscardHandler)
	peers, err := NewPeers(self, &PeersOptions{
		Logger: quiet, Cluster: nethttp.Cluster{MaxValueBytes: maxValueBytes},
		Peers: PeerOptions{Client: sdkClient(t)},
		Resolve: func(n string) (string, string) {
			return "function", endpoint[n]
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := peers.Set(append([]string{self}, names...)...); err != nil {
		t.Fatal(err)
	}
	loads := &loadCounter{m: map[string]int{}}
	reg := cache.NewRegistry()
	blobs := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		if key == "all-bytes" {
			return allBytes(), nil
		}
		return nil, getter.ErrNotFound
	})
	for name, g := range map[string]getter.Getter{"scores": loads.getter(), "blobs": blobs} {
		if _, err := reg.NewGroup(name, 1<<20, g, &cache.GroupOptions{Peers: peers, Logger: quiet}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := nethttp.NewPool("", reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{MaxValueBytes: maxValueBytes}, Logger: quiet}) // serves only
	if err != nil {
		t.Fatal(err)
	}
	srv := nethttp.NewServer("", h, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(httpLn) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		_ = peers.Close()
	})

	checkAll(t, newUserClient(t, ""), append([]string{self}, fronts...))
	ring := append([]string{self}, names...)
	httpLoads := map[string]int{}
	total := 0
	for key := range seedScores {
		if n := loads.get(key); n > 0 {
			httpLoads["scores/"+key] = n
			total += n
		}
	}
	// blobs/all-bytes and scores/kkk of the net/http node are not counted:
	// checkOwnerLoads needs only the scores of every node.
	all := append([]map[string]int{httpLoads}, waitLoads(t, ems, 3-total)...)
	for _, m := range all {
		delete(m, "blobs/all-bytes")
		delete(m, "scores/kkk")
	}
	checkScoresOwners(t, ring, all)
}

// checkScoresOwners checks that each scores key was loaded exactly once,
// by its owner. loads[i] are the loads of ring[i] by "group/key".
func checkScoresOwners(t *testing.T, ring []string, loads []map[string]int) {
	t.Helper()
	o := owners(ring)
	for key := range seedScores {
		for i, n := range ring {
			want := 0
			if o.Owner(key) == n {
				want = 1
			}
			if got := loads[i]["scores/"+key]; got != want {
				t.Errorf("%s loaded %s %d times, want %d (owner %s)", n, key, got, want, o.Owner(key))
			}
		}
	}
}
