package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/bench/internal/fair"
	groupcache "github.com/golang/groupcache"
)

// golang/groupcache allows one HTTPPool per process (NewHTTPPoolOpts
// panics on a second call) and keeps its groups in a process-wide map, so
// its three-node cluster cannot live in one process. Node A, which the
// clients ask, is this process; nodes B and C are child processes running
// this test binary with gcNodeEnv set (see TestMain). Each child gets its
// loopback listener from the parent (so the parent knows every address
// before any node starts) and answers "count" on stdin with the number of
// connections it has accepted, and "cpu" with the CPU time it has used in
// nanoseconds; it exits when its stdin is closed.
const gcNodeEnv = "GEECACHE_BENCH_GROUPCACHE_NODE" // value: self|peer,peer,peer

// gcParent is node A of the groupcache cluster. It is made at most once
// per process and stopped by TestMain.
type gcParent struct {
	self  string
	ln    *countingListener
	srv   *http.Server
	pool  *groupcache.HTTPPool
	group *groupcache.Group
	done  chan struct{}
	// tuned is the transport of the "groupcache-tuned" system: a
	// keep-alive pool sized for the clients. Node A's peer requests use
	// it while useTuned is set, else http.DefaultTransport as shipped.
	tuned    *http.Transport
	useTuned atomic.Bool
	// round numbers the loads' fresh keys (remoteKeys) of every test
	// and benchmark that asks this node, for the life of the process:
	// its group lives as long (golang/groupcache's groups are
	// process-wide), so a second run (-count=2) that counted its rounds
	// from 1 again would find the first run's keys in its hot cache.
	round atomic.Int64
}

var gcA struct {
	mu   sync.Mutex
	node *gcParent
}

func gcParentNode(tb testing.TB) *gcParent {
	gcA.mu.Lock()
	defer gcA.mu.Unlock()
	if gcA.node != nil {
		return gcA.node
	}
	// The hit benchmark's groups must pick their peers (none) before the
	// process has an HTTPPool.
	for _, g := range gcHitGroups {
		g()
	}
	p := &gcParent{ln: listenLoopback(tb), done: make(chan struct{})}
	p.self = "http://" + p.ln.Addr().String()
	p.pool = groupcache.NewHTTPPoolOpts(p.self, nil) // as shipped: default options
	p.tuned = http.DefaultTransport.(*http.Transport).Clone()
	p.tuned.MaxIdleConns = 0 // no global limit
	p.tuned.MaxIdleConnsPerHost = 2 * httpClients
	p.pool.Transport = func(context.Context) http.RoundTripper {
		if p.useTuned.Load() {
			return p.tuned
		}
		return http.DefaultTransport // as shipped
	}
	p.group = groupcache.NewGroup(httpGroup, httpBudget, gcCheapGetter)
	p.srv = &http.Server{Handler: p.pool, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(p.ln)
	}()
	gcA.node = p
	return p
}

// stopGroupcache shuts node A down and closes the idle connections of
// http.DefaultTransport, which groupcache's clients use.
func stopGroupcache() {
	gcA.mu.Lock()
	defer gcA.mu.Unlock()
	if gcA.node != nil {
		_ = gcA.node.srv.Close()
		<-gcA.node.done
		gcA.node.tuned.CloseIdleConnections()
	}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
}

var gcCheapGetter = groupcache.GetterFunc(func(_ context.Context, key string, dest groupcache.Sink) error {
	return dest.SetBytes(hitValue(key))
})

// gcChild is a groupcache node in a child process.
type gcChild struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (c *gcChild) accepts() (int64, error) { return c.ask("count") }

// cpu returns the CPU time the child has used, in nanoseconds.
func (c *gcChild) cpu() (int64, error) { return c.ask("cpu") }

// ask sends the child a command and returns the number it answers.
func (c *gcChild) ask(cmd string) (int64, error) {
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		return 0, err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(line), 10, 64)
}

func (c *gcChild) stop() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

// gcCluster is node A plus two child nodes, all with the same peer list.
type gcCluster struct {
	a        *gcParent
	children []*gcChild
	childURL string // base URL of the first child
}

// warmOwners asks the first child for every key over groupcache's own
// protocol, escaped as its client does: the child loads the keys it owns
// and fetches the others from their owner, so every owner loads its keys,
// and node A sees none of it.
func (c *gcCluster) warmOwners(ctx context.Context, keys []string) error {
	var next atomic.Int64
	errs := make(chan error, httpClients)
	for range httpClients {
		go func() {
			for i := next.Add(1) - 1; i < int64(len(keys)); i = next.Add(1) - 1 {
				u := c.childURL + "/_groupcache/" + url.QueryEscape(httpGroup) + "/" + url.QueryEscape(keys[i])
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
				if err != nil {
					errs <- err
					return
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("warming %q: %s", keys[i], resp.Status)
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range httpClients {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func newGCCluster(tb testing.TB) *gcCluster {
	c := &gcCluster{a: gcParentNode(tb)}
	lns := []net.Listener{listenLoopback(tb).Listener, listenLoopback(tb).Listener}
	peers := []string{c.a.self}
	for _, ln := range lns {
		peers = append(peers, "http://"+ln.Addr().String())
	}
	tb.Cleanup(func() {
		for _, ch := range c.children {
			ch.stop()
		}
	})
	for i, ln := range lns {
		f, err := ln.(*net.TCPListener).File()
		_ = ln.Close() // the child has its own descriptor
		if err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), gcNodeEnv+"="+peers[i+1]+"|"+strings.Join(peers, ","))
		cmd.ExtraFiles = []*os.File{f}
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			tb.Fatal(err)
		}
		err = cmd.Start()
		_ = f.Close()
		if err != nil {
			tb.Fatal(err)
		}
		ch := &gcChild{cmd: cmd, in: in, out: bufio.NewReader(out)}
		c.children = append(c.children, ch)
		if line, err := ch.out.ReadString('\n'); err != nil || line != "ready\n" {
			tb.Fatalf("groupcache node %s did not start: %q, %v", peers[i+1], line, err)
		}
	}
	c.a.pool.Set(peers...)
	c.childURL = peers[1]
	return c
}

// target is groupcache as shipped: node A's peer requests use
// http.DefaultTransport (2 idle connections per host).
func (c *gcCluster) target() *httpTarget {
	return &httpTarget{
		activate: func() { c.a.useTuned.Store(false) },
		get: func(ctx context.Context, key string) (int, error) {
			var v []byte
			err := c.a.group.Get(ctx, key, groupcache.AllocatingByteSliceSink(&v))
			return len(v), err
		},
		remote: func(key string) bool {
			_, ok := c.a.pool.PickPeer(key)
			return ok
		},
		accepts: func() int64 {
			n := c.a.ln.accepts.Load()
			for _, ch := range c.children {
				m, err := ch.accepts()
				if err != nil {
					return -1 << 40 // makes the count absurd rather than silently low
				}
				n += m
			}
			return n
		},
		peerErrors: func() int64 { return c.a.group.Stats.PeerErrors.Get() },
		otherCPU: func() time.Duration {
			var n int64
			for _, ch := range c.children {
				ns, err := ch.cpu()
				if err != nil {
					return -1 << 62 // makes the time absurd rather than silently low
				}
				n += ns
			}
			return time.Duration(n)
		},
		warmOwners: c.warmOwners,
		// groupcache's clients use http.DefaultTransport.
		closeIdle: http.DefaultTransport.(*http.Transport).CloseIdleConnections,
	}
}

// tunedTarget is groupcache with a transport whose keep-alive pool holds
// 2 x httpClients idle connections per peer.
func (c *gcCluster) tunedTarget() *httpTarget {
	t := c.target()
	t.activate = func() { c.a.useTuned.Store(true) }
	t.closeIdle = c.a.tuned.CloseIdleConnections
	return t
}

// runGCNode is the body of a child process: a groupcache node as shipped
// (HTTPPool with default options, one group with the cheap Getter) on the
// listener inherited as file descriptor 3.
func runGCNode(spec string) int {
	self, peers, ok := strings.Cut(spec, "|")
	if !ok {
		fmt.Fprintln(os.Stderr, "bad", gcNodeEnv, spec)
		return 2
	}
	f := os.NewFile(3, "listener")
	ln, err := net.FileListener(f)
	_ = f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupcache node:", err)
		return 1
	}
	cl := &countingListener{Listener: ln}
	pool := groupcache.NewHTTPPoolOpts(self, nil)
	pool.Set(strings.Split(peers, ",")...)
	groupcache.NewGroup(httpGroup, httpBudget, gcCheapGetter)
	srv := &http.Server{Handler: pool, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(cl)
	}()
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "count":
			fmt.Println(cl.accepts.Load())
		case "cpu":
			fmt.Println(fair.CPUTime().Nanoseconds())
		}
	}
	_ = srv.Close()
	<-done
	return 0
}
